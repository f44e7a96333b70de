#include "client/store_client.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace mooncake_tier {
namespace {

ClientId NewClientId() {
  std::random_device rd;
  return absl::StrFormat("client-%016x%016x", (uint64_t{rd()} << 32) | rd(),
                         (uint64_t{rd()} << 32) | rd());
}

const Clock* ClockOf(const StoreClientOptions& options) {
  return options.clock != nullptr ? options.clock : SystemClock::Default();
}

std::unique_ptr<LocationCache> CacheFor(const StoreClientOptions& options) {
  if (!options.location_cache) return nullptr;
  return std::make_unique<LocationCache>(
      std::max<size_t>(1, options.location_cache_entries), ClockOf(options));
}

}  // namespace

StoreClient::StoreClient(MasterApi* master, Transport* transport,
                         const StoreClientOptions& options)
    : master_(master),
      transport_(transport),
      id_(NewClientId()),
      leases_(master),
      clock_(ClockOf(options)),
      cache_(CacheFor(options)) {}

StoreClient::StoreClient(std::unique_ptr<MasterApi> master,
                         std::unique_ptr<Transport> transport,
                         const StoreClientOptions& options)
    : owned_master_(std::move(master)),
      owned_transport_(std::move(transport)),
      master_(owned_master_.get()),
      transport_(owned_transport_.get()),
      id_(NewClientId()),
      leases_(master_),
      clock_(ClockOf(options)),
      cache_(CacheFor(options)) {}

Result<std::shared_ptr<const StoreClient::Endpoint>> StoreClient::EndpointOf(
    NodeId node) {
  {
    MutexLock lock(&mu_);
    if (auto it = endpoints_.find(node); it != endpoints_.end()) {
      return it->second;
    }
  }
  MT_ASSIGN_OR_RETURN(const NodeView view, master_->GetNode(node));
  auto endpoint = std::make_shared<Endpoint>(EndpointFrom(view));
  MutexLock lock(&mu_);
  endpoints_[node] = endpoint;
  return std::shared_ptr<const Endpoint>(endpoint);
}

namespace {

// Past this many known nodes a lookup does not list them (8 bytes each).
constexpr size_t kMaxKnownNodes = 1024;

}  // namespace

StoreClient::Endpoint StoreClient::EndpointFrom(const NodeView& view) {
  Endpoint endpoint;
  endpoint.segment.transport_address = view.spec.transport_address;
  endpoint.segment.base = view.spec.dram_base;
  endpoint.segment.size = view.spec.dram_size;
  endpoint.segment.remote_key = view.spec.dram_remote_key;
  return endpoint;
}

const std::vector<NodeId>* StoreClient::KnownNodes(std::vector<NodeId>* ids) {
  MutexLock lock(&mu_);
  if (endpoints_.size() > kMaxKnownNodes) return nullptr;
  ids->reserve(endpoints_.size());
  for (const auto& [id, endpoint] : endpoints_) ids->push_back(id);
  return ids;
}

void StoreClient::LearnNodes(const std::vector<NodeView>& nodes) {
  if (nodes.empty()) return;
  MutexLock lock(&mu_);
  for (const NodeView& view : nodes) {
    if (view.id == kNoNode || endpoints_.contains(view.id)) continue;
    endpoints_[view.id] = std::make_shared<Endpoint>(EndpointFrom(view));
  }
}

void StoreClient::Forget(NodeId node) {
  MutexLock lock(&mu_);
  endpoints_.erase(node);
}

void StoreClient::Invalidate(std::span<const std::string> keys) {
  if (cache_ == nullptr) return;
  // First the count, then the entries: a get answered before the change
  // either sees the count move (and caches nothing) or cached before the
  // erase below.
  invalidations_.fetch_add(1, std::memory_order_acq_rel);
  for (const std::string& key : keys) cache_->Erase(key);
}

std::vector<Status> StoreClient::PutBatch(std::span<const PutItem> items) {
  std::vector<Status> out = PutItems(items);
  if (cache_ != nullptr) {
    std::vector<std::string> keys;
    keys.reserve(items.size());
    for (const PutItem& item : items) keys.push_back(item.key);
    Invalidate(keys);
  }
  return out;
}

std::vector<Status> StoreClient::PutItems(std::span<const PutItem> items) {
  std::vector<Status> out(items.size());
  PendingPuts batch = StartPuts(items, out);
  PlanPutWrites(items, batch, out);
  const std::vector<Status> written = transport_->Write(batch.writes);
  EndPuts(items, batch, written, out);
  return out;
}

StoreClient::PendingPuts StoreClient::StartPuts(std::span<const PutItem> items,
                                                std::vector<Status>& out) {
  PendingPuts batch;
  batch.requests.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const PutItem& item = items[i];
    if (!item.parts.empty() && !item.value.empty()) {
      out[i] = Status(ErrorReason::kInvalidArgument,
                      "a put item has both a value and parts; give one");
      continue;
    }
    uint64_t size = item.value.size();
    for (std::span<const std::byte> part : item.parts) size += part.size();
    batch.requests.push_back({item.key, size, item.options, id_});
    batch.request_item.push_back(i);
  }
  // A grant's window counts from here: never later than the master's own
  // start of it, whatever the clocks of the two hosts say.
  batch.sent = std::chrono::steady_clock::now();
  batch.placed = master_->PutStart(batch.requests);
  return batch;
}

void StoreClient::PlanPutWrites(std::span<const PutItem> items,
                                PendingPuts& batch, std::vector<Status>& out) {
  // Every placed value goes into its node's segment, a gathered value as
  // one transfer per part at consecutive offsets.
  for (size_t r = 0; r < batch.requests.size(); ++r) {
    const PutItem& item = items[batch.request_item[r]];
    Status& status = out[batch.request_item[r]];
    const Result<ReplicaDescriptor>& placed = batch.placed[r];
    if (!placed.ok()) {
      status = placed.status();
      continue;
    }
    Result<std::shared_ptr<const Endpoint>> ep = EndpointOf(placed->node);
    if (!ep.ok()) {
      status = ep.status();
      continue;
    }
    // Past its grant's window the range may be another put's already (the
    // put was revoked, or a new master handed it out): write nothing.
    const auto window = std::chrono::milliseconds(placed->write_within_ms);
    if (std::chrono::steady_clock::now() >= batch.sent + window) {
      status =
          Status(ErrorReason::kTimeout,
                 "the put's grant ran out (" + std::to_string(window.count()) +
                     " ms) before its write could start; nothing was "
                     "written");
      batch.late_grants.push_back(item.key);
      continue;
    }
    batch.pinned_endpoints.push_back(*ep);
    // The transport only reads from a write's local buffer.
    const auto add_write = [&](std::span<const std::byte> bytes,
                               uint64_t offset) {
      std::span<std::byte> local(const_cast<std::byte*>(bytes.data()),
                                 bytes.size());
      batch.writes.push_back({&(*ep)->segment, offset, local});
      batch.write_request.push_back(r);
    };
    if (item.parts.empty()) {
      add_write(item.value, placed->offset);
    } else {
      uint64_t offset = placed->offset;
      for (std::span<const std::byte> part : item.parts) {
        if (part.empty()) continue;
        add_write(part, offset);
        offset += part.size();
      }
    }
  }
}

void StoreClient::EndPuts(std::span<const PutItem> items, PendingPuts& batch,
                          std::span<const Status> written,
                          std::vector<Status>& out) {
  // A request's first failed write fails it.
  std::vector<Status> write_status(batch.requests.size());
  for (size_t w = 0; w < batch.writes.size(); ++w) {
    Status& s = write_status[batch.write_request[w]];
    if (s.ok() && !written[w].ok()) s = written[w];
  }
  std::vector<std::string> to_end, to_revoke = std::move(batch.late_grants);
  std::vector<size_t> end_item;
  for (size_t r = 0; r < batch.requests.size(); ++r) {
    const size_t i = batch.request_item[r];
    if (!batch.placed[r].ok() || !out[i].ok()) continue;
    if (write_status[r].ok()) {
      to_end.push_back(items[i].key);
      end_item.push_back(i);
    } else {
      out[i] = write_status[r];
      to_revoke.push_back(items[i].key);
      Forget(batch.placed[r]->node);
    }
  }
  if (!to_revoke.empty()) {
    for (Status& s : master_->PutRevoke(id_, to_revoke)) s.IgnoreError();
  }
  std::vector<Status> ended = master_->PutEnd(id_, to_end);
  for (size_t e = 0; e < ended.size(); ++e) out[end_item[e]] = ended[e];
}

void StoreClient::ReadAll(std::span<PlannedRead> reads) {
  // Each item tries its replicas in order (DRAM first). A round reads the
  // current replica of every unfinished item: DRAM reads as one transport
  // batch, SSD reads as one batch per holding node.
  for (PlannedRead& r : reads) {
    r.status = Status(ErrorReason::kUnavailable, "no replica could be read");
  }
  for (size_t round = 0;; ++round) {
    ReadRound plan;
    if (!PlanReadRound(reads, round, plan)) return;
    if (!plan.dram_ops.empty()) ReadDram(plan, round);
    for (auto& [address, node] : plan.ssd_reads) {
      ReadSsd(*node.first, node.second, round);
    }
  }
}

void StoreClient::SettleRead(PlannedRead& r, size_t round, Status s) {
  const ReplicaDescriptor& replica = r.replicas->replicas[round];
  if (s.reason() == ErrorReason::kUnavailable) Forget(replica.node);
  if (s.ok() || round + 1 == r.replicas->replicas.size()) r.status = s;
}

bool StoreClient::PlanReadRound(std::span<PlannedRead> reads, size_t round,
                                ReadRound& plan) {
  bool any = false;
  for (PlannedRead& r : reads) {
    if (r.status.ok() || round >= r.replicas->replicas.size()) continue;
    any = true;
    const ReplicaDescriptor& replica = r.replicas->replicas[round];
    Result<std::shared_ptr<const Endpoint>> ep = EndpointOf(replica.node);
    if (!ep.ok()) {
      SettleRead(r, round, ep.status());
      continue;
    }
    plan.held.push_back(*ep);
    if (replica.tier != Tier::kMemory) {
      auto& [segment, group] = plan.ssd_reads[(*ep)->segment.transport_address];
      segment = &(*ep)->segment;
      group.push_back(&r);
      continue;
    }
    if (r.parts.empty()) {
      plan.dram_ops.push_back({&(*ep)->segment, replica.offset, r.buffer});
      plan.dram_reads.push_back(&r);
    }
    uint64_t offset = replica.offset;
    for (std::span<std::byte> part : r.parts) {
      plan.dram_ops.push_back({&(*ep)->segment, offset, part});
      plan.dram_reads.push_back(&r);
      offset += part.size();
    }
  }
  return any;
}

void StoreClient::ReadDram(ReadRound& plan, size_t round) {
  std::vector<Status> done = transport_->Read(plan.dram_ops);
  // A scattered read's parts are adjacent: its first failure settles it.
  for (size_t i = 0; i < done.size();) {
    PlannedRead& r = *plan.dram_reads[i];
    Status s = done[i];
    for (++i; i < done.size() && plan.dram_reads[i] == &r; ++i) {
      if (s.ok()) s = done[i];
    }
    SettleRead(r, round, s);
  }
}

void StoreClient::ReadSsd(const SegmentEndpoint& segment,
                          std::span<PlannedRead* const> group, size_t round) {
  std::vector<SsdReadTransfer> ops;
  ops.reserve(group.size());
  // The node writes one contiguous value: a scattered read lands in a
  // staging buffer first.
  std::vector<std::vector<std::byte>> staged(group.size());
  for (size_t i = 0; i < group.size(); ++i) {
    PlannedRead* r = group[i];
    if (r->parts.empty()) {
      ops.push_back({r->key, r->buffer});
      continue;
    }
    uint64_t size = 0;
    for (std::span<std::byte> part : r->parts) size += part.size();
    staged[i].resize(size);
    ops.push_back({r->key, staged[i]});
  }
  std::vector<Result<uint64_t>> done = transport_->ReadSsd(segment, ops);
  for (size_t i = 0; i < done.size(); ++i) {
    Status s = done[i].status();
    if (s.ok() && *done[i] != ops[i].buffer.size()) {
      s = Status(ErrorReason::kInternal,
                 "SSD copy has a different size than the object");
    }
    if (s.ok() && !group[i]->parts.empty()) {
      const std::byte* from = staged[i].data();
      for (std::span<std::byte> part : group[i]->parts) {
        std::memcpy(part.data(), from, part.size());
        from += part.size();
      }
    }
    SettleRead(*group[i], round, s);
  }
}

void StoreClient::ReleaseLeases(std::span<const std::string> keys,
                                std::span<const Result<ObjectReplicas>> lists) {
  std::vector<LeaseRelease> releases;
  releases.reserve(lists.size());
  for (size_t i = 0; i < lists.size(); ++i) {
    if (lists[i].ok() && lists[i]->lease_id != 0) {
      releases.push_back({keys[i], lists[i]->lease_id});
    }
  }
  leases_.Release(std::move(releases));
}

void StoreClient::GetCached(std::span<const std::string_view> keys,
                            std::span<const size_t> items,
                            Destination destination,
                            std::vector<Result<uint64_t>>& out,
                            std::vector<size_t>* misses,
                            std::vector<CachedMember>* group_members) {
  const TimePoint now = clock_->Now();
  std::vector<ObjectReplicas> lists;
  lists.reserve(items.size());  // reads point into it
  std::vector<PlannedRead> reads;
  std::vector<size_t> read_item;
  std::vector<TimePoint> valid_until;
  std::vector<uint64_t> group_of;
  std::vector<char> report;
  for (size_t i : items) {
    bool report_due = false;
    std::optional<LocationCache::Entry> entry =
        cache_->Find(keys[i], now, &report_due);
    if (!entry) {
      misses->push_back(i);
      continue;
    }
    ObjectReplicas& list = lists.emplace_back();
    list.size = entry->size;
    list.replicas.push_back(entry->replica);
    PlannedRead read{keys[i], &list, {}, Status::Ok(), {}};
    const Status fits = destination(i, entry->size, read);
    if (!fits.ok()) {
      out[i] = fits;  // the size the master vouched for, a moment ago
      continue;
    }
    reads.push_back(std::move(read));
    read_item.push_back(i);
    valid_until.push_back(entry->valid_until);
    group_of.push_back(entry->group);
    report.push_back(report_due);
  }
  if (reads.empty()) return;
  ReadAll(reads);
  // A read that completed before its grant ran out read the object's
  // bytes; any other asks the master.
  const TimePoint done = clock_->Now();
  std::vector<LeaseRelease> reported;
  for (size_t r = 0; r < reads.size(); ++r) {
    const size_t i = read_item[r];
    if (reads[r].status.ok() && done < valid_until[r]) {
      out[i] = reads[r].replicas->size;
      if (report[r]) reported.push_back({std::string(keys[i]), 0});
      if (group_of[r] != 0) group_members->push_back({i, group_of[r]});
    } else {
      cache_->Erase(keys[i]);
      misses->push_back(i);
    }
  }
  // Recency and promotion see the reads, off this path.
  leases_.Release(std::move(reported));
  std::sort(misses->begin(), misses->end());
}

std::vector<Result<uint64_t>> StoreClient::Get(
    std::span<const std::string_view> keys, Destination destination) {
  std::vector<Result<uint64_t>> out(keys.size(),
                                    Status(ErrorReason::kInternal, "not read"));
  std::vector<size_t> pending(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) pending[i] = i;
  if (cache_ == nullptr) {
    GetViaMaster(keys, pending, destination, out, nullptr);
    return out;
  }
  std::vector<size_t> misses;
  std::vector<CachedMember> cached_members;
  GetCached(keys, pending, destination, out, &misses, &cached_members);
  if (misses.empty()) return out;
  absl::flat_hash_set<uint64_t> groups_asked;
  GetViaMaster(keys, misses, destination, out, &groups_asked);
  if (cached_members.empty()) return out;
  // A batch shows a group as the cache had it a moment ago or as the master
  // has it now, never one part of each: a group may have broken, or been
  // removed and put again, since some members were cached. When any key
  // asked failed (its group may be the one that broke), or the master
  // answered a member of a group also read from the cache, the master
  // confirms the cached members too.
  const bool any_failed = std::any_of(misses.begin(), misses.end(),
                                      [&](size_t i) { return !out[i].ok(); });
  std::vector<size_t> confirm;
  for (const CachedMember& m : cached_members) {
    if (any_failed || groups_asked.contains(m.group)) confirm.push_back(m.item);
  }
  if (!confirm.empty()) GetViaMaster(keys, confirm, destination, out, nullptr);
  return out;
}

void StoreClient::GetViaMaster(std::span<const std::string_view> keys,
                               std::span<const size_t> pending,
                               Destination destination,
                               std::vector<Result<uint64_t>>& out,
                               absl::flat_hash_set<uint64_t>* groups) {
  std::vector<std::string> asked;
  asked.reserve(pending.size());
  for (size_t i : pending) asked.emplace_back(keys[i]);
  // A location grant counts from here: never later than the master's start
  // of it, whatever the clocks of the two hosts say.
  const TimePoint sent = clock_->Now();
  const uint64_t invalidations = invalidations_.load(std::memory_order_acquire);
  // One call: the locations, and the nodes among them this client has
  // not met.
  std::vector<NodeId> known_ids;
  Result<ReadLookup> lookup =
      master_->LookupForRead(asked, false, KnownNodes(&known_ids));
  std::vector<Result<ObjectReplicas>> lists =
      lookup.ok()
          ? std::move(lookup->objects)
          : std::vector<Result<ObjectReplicas>>(asked.size(), lookup.status());
  if (lookup.ok()) LearnNodes(lookup->nodes);
  std::vector<PlannedRead> reads;
  std::vector<size_t> read_item;  // per read: its index in `pending`
  for (size_t p = 0; p < pending.size(); ++p) {
    const size_t i = pending[p];
    if (!lists[p].ok()) {
      out[i] = lists[p].status();
      // A key confirmed here (a cached group member) is cached no more.
      if (cache_ != nullptr) cache_->Erase(asked[p]);
      continue;
    }
    if (groups != nullptr && lists[p]->group) {
      groups->insert(LocationCache::GroupHash(lists[p]->group->group_id));
    }
    PlannedRead read{keys[i], &*lists[p], {}, Status::Ok(), {}};
    const Status fits = destination(i, lists[p]->size, read);
    if (!fits.ok()) {
      out[i] = fits;
      continue;
    }
    out[i] = lists[p]->size;
    reads.push_back(std::move(read));
    read_item.push_back(p);
  }
  ReadAll(reads);
  ReleaseLeases(asked, lists);
  for (size_t r = 0; r < reads.size(); ++r) {
    const size_t p = read_item[r];
    const ObjectReplicas& list = *lists[p];
    if (!reads[r].status.ok()) {
      out[pending[p]] = reads[r].status;
      continue;
    }
    CacheLocation(asked[p], list, sent, invalidations);
  }
}

void StoreClient::CacheLocation(const std::string& key,
                                const ObjectReplicas& list, TimePoint sent,
                                uint64_t invalidations) {
  // Not when this client removed or rewrote keys meanwhile: the answer may
  // predate that.
  if (cache_ == nullptr || list.location_valid_ms == 0 ||
      invalidations_.load(std::memory_order_acquire) != invalidations ||
      list.replicas.empty() || list.replicas.front().tier != Tier::kMemory) {
    return;
  }
  // The lookup counted as this read's access.
  cache_->Insert(
      key,
      {list.replicas.front(), list.size,
       sent + std::chrono::milliseconds(list.location_valid_ms),
       list.group ? LocationCache::GroupHash(list.group->group_id) : 0, sent});
  // A removal or put of this client that began after the check above may
  // have erased the key before the insert: take it out again.
  if (invalidations_.load(std::memory_order_acquire) != invalidations) {
    cache_->Erase(key);
  }
}

std::vector<Result<uint64_t>> StoreClient::GetIntoBatch(
    std::span<const GetIntoItem> items) {
  std::vector<std::string_view> keys;
  keys.reserve(items.size());
  for (const GetIntoItem& item : items) keys.push_back(item.key);
  return Get(keys, [&](size_t i, uint64_t size, PlannedRead& read) -> Status {
    const GetIntoItem& item = items[i];
    if (!item.parts.empty() && !item.buffer.empty()) {
      return Status(ErrorReason::kInvalidArgument,
                    "a get item has both a buffer and parts; give one");
    }
    uint64_t room = item.buffer.size();
    for (std::span<std::byte> part : item.parts) room += part.size();
    if (room < size) {
      return Status(ErrorReason::kBufferTooSmall,
                    "object is " + std::to_string(size) + " bytes; " +
                        (item.parts.empty() ? "buffer holds " : "parts hold ") +
                        std::to_string(room));
    }
    read.parts.clear();
    if (item.parts.empty()) {
      read.buffer = item.buffer.first(size);
      return Status::Ok();
    }
    read.buffer = item.buffer.first(0);
    uint64_t left = size;
    for (std::span<std::byte> part : item.parts) {
      if (left == 0) break;
      if (part.empty()) continue;
      read.parts.push_back(part.first(std::min<uint64_t>(left, part.size())));
      left -= read.parts.back().size();
    }
    return Status::Ok();
  });
}

std::vector<Result<std::vector<std::byte>>> StoreClient::GetBatch(
    std::span<const std::string> keys) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::vector<std::byte>> values(keys.size());
  std::vector<Result<uint64_t>> sizes =
      Get(views, [&](size_t i, uint64_t size, PlannedRead& read) -> Status {
        values[i].resize(size);
        read.buffer = values[i];
        return Status::Ok();
      });
  std::vector<Result<std::vector<std::byte>>> out;
  out.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!sizes[i].ok()) {
      out.emplace_back(sizes[i].status());
    } else {
      out.emplace_back(std::move(values[i]));
    }
  }
  return out;
}

std::vector<Result<ExistsInfo>> StoreClient::ExistsBatch(
    std::span<const std::string> keys) {
  return master_->Exists(keys);
}

Result<PrefixInfo> StoreClient::ProbePrefix(std::span<const std::string> keys) {
  if (keys.empty()) return PrefixInfo{};
  if (cache_ == nullptr) return master_->ProbePrefix(keys);
  // An engine reads the prefix it found next: the same call brings its
  // locations (and the nodes this client has not met), so those reads
  // come from the cache with no call of their own.
  const TimePoint sent = clock_->Now();
  const uint64_t invalidations = invalidations_.load(std::memory_order_acquire);
  std::vector<NodeId> known_ids;
  MT_ASSIGN_OR_RETURN(
      ReadLookup lookup,
      master_->LookupForRead(keys, true, KnownNodes(&known_ids)));
  LearnNodes(lookup.nodes);
  const std::span<const std::string> found =
      keys.first(std::min<size_t>(lookup.objects.size(), keys.size()));
  for (size_t i = 0; i < found.size(); ++i) {
    if (lookup.objects[i].ok()) {
      CacheLocation(found[i], *lookup.objects[i], sent, invalidations);
    }
  }
  // The cache needs only the grants: the read leases end now.
  ReleaseLeases(found, lookup.objects);
  return lookup.prefix;
}

Status StoreClient::CheckHealth() {
  // A probe of no keys reaches the leader and touches no object.
  return master_->ProbePrefix({}).status();
}

std::vector<Status> StoreClient::RemoveBatch(std::span<const std::string> keys,
                                             RemoveOptions options) {
  std::vector<Status> out = master_->Remove(keys, options);
  Invalidate(keys);
  return out;
}

std::vector<Result<GroupInfo>> StoreClient::GetGroupBatch(
    std::span<const std::string> group_ids) {
  std::vector<Result<GroupInfo>> out;
  out.reserve(group_ids.size());
  for (Result<GroupDescription>& d : master_->GetGroup(group_ids)) {
    if (!d.ok()) {
      out.emplace_back(d.status());
      continue;
    }
    GroupInfo info;
    info.status = d->status;
    if (d->break_cause) info.break_cause = BreakCauseName(*d->break_cause);
    for (GroupDescription::Member& m : d->members) {
      info.members.push_back(
          {m.index, std::move(m.key), m.present, std::move(m.tiers)});
    }
    out.emplace_back(std::move(info));
  }
  return out;
}

std::vector<Status> StoreClient::RemoveGroupBatch(
    std::span<const std::string> group_ids, RemoveOptions options) {
  std::vector<Status> out = master_->RemoveGroup(group_ids, options);
  // Entries do not name their group: a group removal forgets them all.
  if (cache_ != nullptr) {
    invalidations_.fetch_add(1, std::memory_order_acq_rel);
    cache_->Clear();
  }
  return out;
}

Status StoreClient::RegisterBuffer(std::span<std::byte> buffer) {
  return transport_->RegisterBuffer(buffer);
}

Status StoreClient::UnregisterBuffer(std::span<std::byte> buffer) {
  return transport_->UnregisterBuffer(buffer);
}

}  // namespace mooncake_tier
