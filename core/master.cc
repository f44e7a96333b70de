// Master: construction and the client calls (put, get, exists, remove).
// Node calls live in master_nodes.cc, offload in master_offload.cc, eviction
// in master_eviction.cc, reporting in master_report.cc.

#include "core/master.h"

#include <stdexcept>

#include "core/two_choice_strategy.h"
#include "core/validation.h"

namespace mooncake_tier {
namespace {

// Applies `one` to every element of a batch: the only batch loop.
template <typename In, typename Fn>
auto ForEachInBatch(std::span<const In> batch, Fn&& one) {
  std::vector<decltype(one(batch[0]))> out;
  out.reserve(batch.size());
  for (const In& item : batch) out.push_back(one(item));
  return out;
}

MasterConfig CheckedConfig(MasterConfig config) {
  if (std::string error = config.Validate(); !error.empty()) {
    throw std::invalid_argument("invalid master config: " + error);
  }
  return config;
}

}  // namespace

Master::Master(MasterConfig config, const Clock* clock)
    : config_(CheckedConfig(std::move(config))),
      clock_(clock),
      objects_(config_.shard_count),
      nodes_(clock, config_.dram_alignment,
             std::make_unique<TwoChoiceStrategy>()),
      tasks_(clock) {}

std::vector<Result<ReplicaDescriptor>> Master::PutStart(
    std::span<const PutStartRequest> requests) {
  return ForEachInBatch(requests, [this](const PutStartRequest& r) {
    return PutStartOne(r);
  });
}

std::vector<Status> Master::PutEnd(const ClientId& client,
                                   std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [&](const std::string& key) { return PutEndOne(client, key); });
}

std::vector<Status> Master::PutRevoke(const ClientId& client,
                                      std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [&](const std::string& key) { return PutRevokeOne(client, key); });
}

std::vector<Result<ObjectReplicas>> Master::GetReplicaList(
    std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [this](const std::string& key) { return GetReplicaListOne(key); });
}

std::vector<Result<ExistsInfo>> Master::Exists(
    std::span<const std::string> keys) {
  return ForEachInBatch(
      keys, [this](const std::string& key) { return ExistsOne(key); });
}

std::vector<Status> Master::Remove(std::span<const std::string> keys,
                                   RemoveOptions options) {
  return ForEachInBatch(
      keys, [&](const std::string& key) { return RemoveOne(key, options); });
}

Result<ReplicaDescriptor> Master::PutStartOne(const PutStartRequest& request) {
  Status valid = ValidateKey(request.key);
  if (valid.ok() && request.size == 0) {
    valid = Status(ErrorReason::kInvalidSize, "object size must be > 0");
  }
  if (valid.ok() && request.options.group) {
    valid = ValidateGroupSpec(*request.options.group);
  }
  if (!valid.ok()) {
    counters_.put_rejected.fetch_add(1, std::memory_order_relaxed);
    return valid;
  }
  if (request.size > nodes_.LargestSegment()) {
    // No eviction could ever make room: do not evict for it.
    counters_.put_no_space.fetch_add(1, std::memory_order_relaxed);
    return Status(ErrorReason::kNoSpace,
                  "object of " + std::to_string(request.size) +
                      " bytes is larger than any node's DRAM segment");
  }

  Shard& shard = objects_.ShardFor(request.key);
  // One retry after making room: a full store evicts rather than refuses.
  for (int attempt = 0;; ++attempt) {
    {
      MutexLock lock(&shard.mu);
      if (auto it = shard.objects.find(request.key);
          it != shard.objects.end()) {
        ObjectMeta& meta = it->second;
        Replica* staged = meta.FindTier(Tier::kMemory, ReplicaState::kProcessing);
        if (staged != nullptr && !request.client.empty() &&
            meta.put_owner == request.client && meta.size == request.size) {
          return staged->desc;  // the same client retrying the same put
        }
        counters_.put_rejected.fetch_add(1, std::memory_order_relaxed);
        return Status(ErrorReason::kObjectExists,
                      "key already stored or being put");
      }
      Result<ReplicaDescriptor> placed =
          nodes_.AllocateMemory(request.size, request.options.preferred_node);
      if (placed.ok()) {
        ReplicaDescriptor desc = *placed;
        desc.id = NextReplicaId();
        desc.state = ReplicaState::kProcessing;
        const TimePoint now = clock_->Now();
        ObjectMeta meta;
        meta.size = request.size;
        meta.replicas.push_back(Replica{desc, 0});
        meta.group = request.options.group;
        meta.put_owner = request.client;
        meta.put_started = now;
        meta.last_access = now;
        meta.hard_pin = request.options.hard_pin;
        shard.objects.emplace(request.key, std::move(meta));
        shard.pending_puts.emplace(request.key, now);
        counters_.put_started.fetch_add(1, std::memory_order_relaxed);
        return desc;
      }
      if (attempt > 0 || placed.status().reason() != ErrorReason::kNoSpace) {
        counters_.put_no_space.fetch_add(1, std::memory_order_relaxed);
        return placed.status();
      }
    }
    // No shard lock held here: eviction takes shard locks itself.
    EvictMemory(request.size);
  }
}

Status Master::PutEndOne(const ClientId& client, const std::string& key) {
  Shard& shard = objects_.ShardFor(key);
  MutexLock lock(&shard.mu);
  auto it = shard.objects.find(key);
  if (it == shard.objects.end()) {
    return Status(ErrorReason::kObjectNotFound,
                  "no put in flight for key (revoked or timed out?)");
  }
  ObjectMeta& meta = it->second;
  Replica* staged = meta.FindTier(Tier::kMemory, ReplicaState::kProcessing);
  if (staged == nullptr) {
    if (meta.HasComplete(Tier::kMemory)) return Status::Ok();  // repeated end
    return Status(ErrorReason::kObjectNotFound, "no put in flight for key");
  }
  if (!client.empty() && !meta.put_owner.empty() && meta.put_owner != client) {
    return Status(ErrorReason::kObjectBusy,
                  "the put in flight belongs to another client");
  }
  staged->desc.state = ReplicaState::kComplete;
  meta.put_owner.clear();
  meta.last_access = clock_->Now();
  shard.pending_puts.erase(key);
  counters_.put_completed.fetch_add(1, std::memory_order_relaxed);
  if (config_.offload_mode == OffloadMode::kWriteThrough &&
      NodeHasSsd(staged->desc.node)) {
    QueueOffloadLocked(shard, key, meta, *staged, /*drop_source=*/false);
  }
  return Status::Ok();
}

Status Master::PutRevokeOne(const ClientId& client, const std::string& key) {
  Shard& shard = objects_.ShardFor(key);
  MutexLock lock(&shard.mu);
  auto it = shard.objects.find(key);
  Replica* staged =
      it == shard.objects.end()
          ? nullptr
          : it->second.FindTier(Tier::kMemory, ReplicaState::kProcessing);
  if (staged == nullptr) {
    return Status(ErrorReason::kObjectNotFound, "no put in flight for key");
  }
  ObjectMeta& meta = it->second;
  if (!client.empty() && !meta.put_owner.empty() && meta.put_owner != client) {
    return Status(ErrorReason::kObjectBusy,
                  "the put in flight belongs to another client");
  }
  const Replica replica = *staged;
  meta.Erase(replica.desc.id);
  ReleaseReplicaLocked(shard, key, replica, /*node_alive=*/true);
  meta.put_owner.clear();
  shard.pending_puts.erase(key);
  EraseIfEmptyLocked(shard, it);
  counters_.put_revoked.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Result<ObjectReplicas> Master::GetReplicaListOne(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  Shard& shard = objects_.ShardFor(key);
  MutexLock lock(&shard.mu);
  auto it = shard.objects.find(key);
  if (it == shard.objects.end()) {
    counters_.get_miss.fetch_add(1, std::memory_order_relaxed);
    return Status(ErrorReason::kObjectNotFound, "no object with this key");
  }
  ObjectMeta& meta = it->second;
  ObjectReplicas out;
  out.size = meta.size;
  out.group = meta.group;
  for (Tier tier : {Tier::kMemory, Tier::kLocalDisk}) {
    for (const Replica& r : meta.replicas) {
      if (r.desc.tier == tier && r.desc.state == ReplicaState::kComplete) {
        out.replicas.push_back(r.desc);
      }
    }
  }
  if (out.replicas.empty()) {
    counters_.get_miss.fetch_add(1, std::memory_order_relaxed);
    return Status(ErrorReason::kObjectNotReady,
                  "the object's put has not completed");
  }
  const TimePoint now = clock_->Now();
  meta.lease_deadline = std::max(meta.lease_deadline, now + config_.lease_ttl);
  meta.last_access = now;
  out.lease_deadline = meta.lease_deadline;
  (out.replicas.front().tier == Tier::kMemory ? counters_.get_memory_hit
                                               : counters_.get_local_disk_hit)
      .fetch_add(1, std::memory_order_relaxed);
  return out;
}

Result<ExistsInfo> Master::ExistsOne(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  counters_.exists_calls.fetch_add(1, std::memory_order_relaxed);
  Shard& shard = objects_.ShardFor(key);
  MutexLock lock(&shard.mu);
  ExistsInfo info;
  auto it = shard.objects.find(key);
  if (it != shard.objects.end() && it->second.HasComplete()) {
    info.exists = true;
    info.size = it->second.size;
  }
  return info;
}

Status Master::RemoveOne(const std::string& key, RemoveOptions options) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  Shard& shard = objects_.ShardFor(key);
  MutexLock lock(&shard.mu);
  auto it = shard.objects.find(key);
  if (it == shard.objects.end()) {
    return Status(ErrorReason::kObjectNotFound, "no object with this key");
  }
  const ObjectMeta& meta = it->second;
  if (meta.HasProcessing()) {
    return Status(ErrorReason::kObjectBusy,
                  "a put of this key is in flight; revoke it or wait for "
                  "the put timeout");
  }
  if (!options.force && meta.Leased(clock_->Now())) {
    return Status(ErrorReason::kObjectLeased,
                  "a reader holds a lease on this object; retry later or "
                  "force");
  }
  DropObjectLocked(shard, it);
  counters_.removes.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

void Master::ReleaseReplicaLocked(Shard& shard, const std::string& key,
                                  const Replica& replica, bool node_alive) {
  const ReplicaDescriptor& d = replica.desc;
  if (d.tier == Tier::kMemory) {
    if (!node_alive) return;  // the segment is gone with the node
    if (replica.refcnt > 0) {
      detached_.Add(replica);  // freed at the last unpin
    } else {
      nodes_.FreeMemory(d.node, d.offset, d.size);
    }
    return;
  }
  nodes_.AddSsdUsed(d.node, -static_cast<int64_t>(d.size));
  if (node_alive) tasks_.EnqueueSsdDelete(d.node, key);
}

void Master::DropObjectLocked(Shard& shard, ObjectMap::iterator it) {
  for (const Replica& r : it->second.replicas) {
    ReleaseReplicaLocked(shard, it->first, r, /*node_alive=*/true);
  }
  shard.pending_puts.erase(it->first);
  shard.objects.erase(it);
}

void Master::EraseIfEmptyLocked(Shard& shard, ObjectMap::iterator it) {
  if (it->second.replicas.empty()) shard.objects.erase(it);
}

bool Master::NodeHasSsd(NodeId node) const {
  return nodes_.SsdUsageOf(node).capacity > 0;
}

}  // namespace mooncake_tier
