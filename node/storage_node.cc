#include "node/storage_node.h"

#include <algorithm>

#include "spdlog/spdlog.h"

namespace mooncake_tier {

struct StorageNode::Counters {
  std::atomic<uint64_t> heartbeats{0}, heartbeat_failures{0}, registrations{0},
      pulls{0}, pull_failures{0}, offloads_done{0}, offloads_failed{0},
      offload_bytes{0}, ssd_deletes{0}, ssd_reads{0}, ssd_read_bytes{0},
      ssd_read_errors{0}, corrupt_keys_reported{0}, promotions_done{0},
      promotions_failed{0}, promotion_bytes{0}, directory_syncs{0},
      directory_sync_failures{0}, directory_changes{0}, directory_refused{0};
};

Result<std::unique_ptr<StorageNode>> StorageNode::Create(
    StorageNodeOptions options, std::unique_ptr<SsdStore> ssd,
    MasterLink* master, SegmentExporter* exporter) {
  if (options.name.empty()) {
    return Status(ErrorReason::kInvalidArgument, "node name is empty");
  }
  if (options.max_pending_tasks == 0 || options.io_batch == 0 ||
      options.io_workers == 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "max_pending_tasks, io_batch and io_workers must be > 0");
  }
  // Without an SSD store there is nothing to stage.
  const uint64_t staging = ssd ? options.ssd_read_staging_bytes : 0;
  MT_ASSIGN_OR_RETURN(
      std::unique_ptr<DramSegment> segment,
      DramSegment::Create(options.dram_bytes, options.huge_pages,
                          /*shareable=*/true, staging));
  if (options.populate_dram) segment->PopulateInBackground();
  std::unique_ptr<StorageNode> node(
      new StorageNode(std::move(options), std::move(segment), std::move(ssd),
                      master, exporter));
  const DramSegment& s = *node->segment_;
  MT_ASSIGN_OR_RETURN(
      node->endpoint_,
      exporter->Export(node->options_.name, s.base(), s.total_size(),
                       node.get(), s.total_size() - s.size()));
  return node;
}

StorageNode::StorageNode(StorageNodeOptions options,
                         std::unique_ptr<DramSegment> segment,
                         std::unique_ptr<SsdStore> ssd, MasterLink* master,
                         SegmentExporter* exporter)
    : options_(std::move(options)),
      segment_(std::move(segment)),
      ssd_(std::move(ssd)),
      master_(master),
      exporter_(exporter),
      directory_(segment_->size()),
      counters_(std::make_unique<Counters>()) {}

StorageNode::~StorageNode() {
  Stop();
  exporter_->Withdraw(endpoint_);
}

Status StorageNode::Register() {
  NodeSpec spec;
  spec.name = options_.name;
  spec.rpc_address = options_.rpc_address;
  spec.transport_address = endpoint_.transport_address;
  spec.dram_base = endpoint_.base;
  // Only the DRAM part is the master's to allocate, never the staging tail.
  spec.dram_size = segment_->size();
  spec.dram_remote_key = endpoint_.remote_key;
  std::vector<SsdInventoryEntry> inventory;
  if (ssd_) {
    spec.ssd_capacity = ssd_->stats().capacity_bytes;
    for (SsdRecordInfo& r : ssd_->Inventory()) {
      if (r.size == 0) continue;  // empty values are not objects
      inventory.push_back({std::move(r.key), r.size, std::move(r.group)});
    }
  }
  // The directory is reported as it stands, and its acknowledgements start
  // afresh under the new id: no change is applied from the snapshot until
  // the new id is in force (a sync answered meanwhile is dropped; the
  // master sends it again). The lock is not held across the call.
  std::vector<DramEntry> dram;
  {
    MutexLock dir_lock(&dir_mu_);
    spec.keeps_directory = KeepsDirectory();
    // This process registered before: its segment may still take writes
    // of grants made then.
    spec.resumed = counters_->registrations.load() > 0;
    if (spec.keeps_directory) dram = directory_.Entries();
    directory_registering_ = true;
  }
  Result<NodeId> registered = master_->RegisterNode(spec, inventory, dram);
  if (!registered.ok()) {
    MutexLock dir_lock(&dir_mu_);
    directory_registering_ = false;
    return registered.status();
  }
  const NodeId id = *registered;
  {
    MutexLock lock(&mu_);
    offloads_.clear();  // issued to an earlier registration
    promotions_.clear();
  }
  {
    MutexLock dir_lock(&dir_mu_);
    directory_node_ = id;
    directory_acked_ = 0;
    directory_registering_ = false;
  }
  id_.store(id);
  counters_->registrations.fetch_add(1);
  spdlog::info(
      "node '{}' registered as {} with {} SSD objects and {} DRAM objects",
      options_.name, id, inventory.size(), dram.size());
  return Status::Ok();
}

bool StorageNode::KeepsDirectory() const {
  return options_.dram_directory &&
         (threads_running_.load() || directory_by_hand_.load());
}

Result<size_t> StorageNode::SyncDirectoryOnce(Duration wait) {
  NodeId me;
  uint64_t acked;
  {
    MutexLock lock(&dir_mu_);
    me = directory_node_;
    acked = directory_acked_;
    if (directory_registering_) me = kNoNode;
  }
  if (me == kNoNode || me != id()) {
    return Status(ErrorReason::kUnavailable, "not registered yet");
  }
  // Changes come in batches of at most this many (each names a key).
  constexpr uint32_t kMaxChanges = 4096;
  Result<DirectoryChanges> changes =
      master_->SyncDirectory(me, acked, kMaxChanges, wait);
  if (!changes.ok()) {
    counters_->directory_sync_failures.fetch_add(1);
    return changes.status();
  }
  counters_->directory_syncs.fetch_add(1);
  MutexLock lock(&dir_mu_);
  // Registering again, or registered again, meanwhile: these were the old
  // registration's.
  if (directory_node_ != me || directory_registering_) return size_t{0};
  size_t applied = 0;
  for (const DirectoryOp& op : changes->ops) {
    if (op.seq <= directory_acked_) continue;  // sent again
    if (!directory_.Apply(op)) {
      counters_->directory_refused.fetch_add(1);
      uint64_t held_back = 0;
      if (directory_log_.Allow(&held_back)) {
        spdlog::warn(
            "node '{}': directory change {} for '{}' at offset {} refused "
            "(outside the segment or another key there) ({} more since)",
            options_.name, op.seq, op.entry.key, op.entry.offset, held_back);
      }
    }
    directory_acked_ = op.seq;
    ++applied;
  }
  counters_->directory_changes.fetch_add(applied);
  return applied;
}

std::vector<DramEntry> StorageNode::DirectoryEntries() const {
  MutexLock lock(&dir_mu_);
  return directory_.Entries();
}

Status StorageNode::Deregister() {
  const NodeId node = id_.exchange(kNoNode);
  if (node == kNoNode) return Status::Ok();
  // Bounded by the link's deadline (gRPC) or a local call: a shutdown
  // never waits on a master that is gone.
  Status left = master_->DeregisterNode(node);
  if (left.ok()) {
    spdlog::info("node '{}': deregistered {} from the master", options_.name,
                 node);
  } else if (left.reason() == ErrorReason::kNodeNotFound) {
    // Expired, replaced, or a restarted master: nothing left to drop.
    spdlog::info("node '{}': the master no longer knew {}: {}", options_.name,
                 node, left.ToString());
  } else {
    spdlog::warn(
        "node '{}': deregistering {} failed ({}); the master drops it after "
        "node_ttl",
        options_.name, node, left.ToString());
  }
  return left;
}

size_t StorageNode::PendingTasks() const {
  MutexLock lock(&mu_);
  return offloads_.size() + promotions_.size() + running_;
}

Status StorageNode::HeartbeatOnce() {
  if (id() == kNoNode) MT_RETURN_IF_ERROR(Register());
  if (ssd_) {
    std::vector<std::string> corrupt = ssd_->TakeCorruptKeys();
    if (!corrupt.empty()) {
      spdlog::warn("node '{}': {} corrupt SSD records dropped", options_.name,
                   corrupt.size());
      counters_->corrupt_keys_reported.fetch_add(corrupt.size());
      master_->ReportSsdCorruption(id(), corrupt).IgnoreError();
    }
  }
  std::optional<SsdReport> report;
  if (ssd_) {
    const SsdStoreStats stats = ssd_->stats();
    report = SsdReport{stats.capacity_bytes,      stats.put_limit_bytes,
                       stats.file_bytes,          stats.live_bytes,
                       stats.live_record_bytes,   stats.no_space_refusals,
                       stats.device_bytes_written};
  }
  const Status alive = master_->Heartbeat(id(), report);
  if (!alive.ok()) {
    counters_->heartbeat_failures.fetch_add(1);
    if (alive.reason() == ErrorReason::kNodeNotFound) {
      spdlog::warn("node '{}': master forgot node {}; registering again",
                   options_.name, id());
      return Register();
    }
    return alive;
  }
  counters_->heartbeats.fetch_add(1);
  return Status::Ok();
}

Result<size_t> StorageNode::PullTasksOnce(Duration wait) {
  const NodeId me = id();
  if (me == kNoNode) {
    return Status(ErrorReason::kUnavailable, "not registered yet");
  }
  const size_t pending = PendingTasks();
  const uint32_t room =
      pending >= options_.max_pending_tasks
          ? 0
          : options_.max_pending_tasks - static_cast<uint32_t>(pending);
  Result<NodeTasks> tasks = master_->PullTasks(me, room, wait);
  if (!tasks.ok()) {
    counters_->pull_failures.fetch_add(1);
    return tasks.status();
  }
  counters_->pulls.fetch_add(1);
  const size_t got = tasks->offloads.size() + tasks->promotions.size() +
                     tasks->ssd_deletes.size();
  if (got == 0) return got;
  MutexLock lock(&mu_);
  // Registered again meanwhile: that work was the old registration's, and
  // the master has reaped it.
  if (id() != me) return size_t{0};
  for (Task& t : tasks->offloads) offloads_.push_back(std::move(t));
  for (Task& t : tasks->promotions) promotions_.push_back(std::move(t));
  for (std::string& k : tasks->ssd_deletes) deletes_.push_back(std::move(k));
  work_cv_.Signal();
  return got;
}

size_t StorageNode::RunTasksOnce() {
  std::vector<std::string> deletes;
  std::vector<Task> offloads;
  std::vector<Task> promotions;
  {
    MutexLock lock(&mu_);
    deletes.assign(std::make_move_iterator(deletes_.begin()),
                   std::make_move_iterator(deletes_.end()));
    deletes_.clear();
    // One SSD batch: up to io_batch tasks and io_batch_bytes (at least one).
    uint64_t bytes = 0;
    while (!offloads_.empty() && offloads.size() < options_.io_batch &&
           (offloads.empty() ||
            bytes + offloads_.front().source.size <= options_.io_batch_bytes)) {
      bytes += offloads_.front().source.size;
      offloads.push_back(std::move(offloads_.front()));
      offloads_.pop_front();
    }
    while (!promotions_.empty() && promotions.size() < options_.io_batch) {
      promotions.push_back(std::move(promotions_.front()));
      promotions_.pop_front();
    }
    running_ += offloads.size() + promotions.size();
    if (!deletes.empty()) ++deleting_;
  }
  const size_t batch = offloads.size() + promotions.size();
  const size_t done = deletes.size() + batch;
  // Deletions first: a later copy of the same key must survive them, also
  // one another worker is about to write.
  if (!deletes.empty()) {
    RunDeletes(std::move(deletes));
    MutexLock lock(&mu_);
    --deleting_;
    deletes_done_cv_.SignalAll();
  }
  if (batch > 0) {
    {
      MutexLock lock(&mu_);
      while (deleting_ > 0) deletes_done_cv_.Wait();
    }
    if (!offloads.empty()) RunOffloads(std::move(offloads));
    if (!promotions.empty()) RunPromotions(std::move(promotions));
    MutexLock lock(&mu_);
    running_ -= batch;
    room_cv_.SignalAll();
  }
  if (ssd_) Compact(done == 0);
  return done;
}

void StorageNode::Compact(bool idle) {
  // Deletions free disk space only once their files are compacted: one
  // step when the node is idle, and between batches too while the store is
  // near its limit, which is where the master keeps a full SSD tier (one
  // step a batch: a step reads and rewrites up to a file, and the pull
  // loop waits for it).
  if (!idle && !ssd_->UnderPressure()) return;
  Result<bool> compacted =
      idle ? ssd_->CompactStep()
           : ssd_->CompactStep(SsdStore::kPressureDeadRatio);
  uint64_t held_back = 0;
  if (!compacted.ok() && compaction_log_.Allow(&held_back)) {
    spdlog::warn("node '{}': compaction stopped: {} ({} more since)",
                 options_.name, compacted.status().ToString(), held_back);
  }
}

void StorageNode::RunDeletes(std::vector<std::string> keys) {
  if (!ssd_) return;
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<Status> results = ssd_->RemoveBatch(views);
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) {
      counters_->ssd_deletes.fetch_add(1);
    } else if (results[i].reason() != ErrorReason::kObjectNotFound) {
      uint64_t held_back = 0;
      if (delete_log_.Allow(&held_back)) {
        spdlog::warn("node '{}': SSD delete failed: {} ({} more since)",
                     options_.name, results[i].ToString(), held_back);
      }
    }
  }
}

void StorageNode::RunOffloads(std::vector<Task> batch) {
  const NodeId me = id();
  std::vector<SsdWrite> writes;
  std::vector<const Task*> written;
  std::vector<TaskFailure> failed;
  std::vector<TaskId> succeeded;
  for (const Task& task : batch) {
    Result<std::span<std::byte>> range =
        segment_->Range(task.source.offset, task.source.size);
    Status why = range.status();
    if (why.ok() && !ssd_) {
      why = Status(ErrorReason::kNoSpace, "node has no SSD tier");
    }
    if (!why.ok()) {
      failed.push_back({task.id, std::move(why)});
      continue;
    }
    // The source replica is pinned by the task: its bytes are stable.
    writes.push_back({task.key, task.group, *range});
    written.push_back(&task);
  }
  std::vector<Status> results;
  if (!writes.empty()) results = ssd_->PutBatch(writes);
  for (size_t i = 0; i < written.size(); ++i) {
    const Task& task = *written[i];
    if (!results[i].ok()) {
      failed.push_back({task.id, results[i]});
      continue;
    }
    counters_->offload_bytes.fetch_add(task.source.size);
    succeeded.push_back(task.id);
  }
  counters_->offloads_failed.fetch_add(failed.size());
  counters_->offloads_done.fetch_add(succeeded.size());
  // One report per outcome for the whole batch. TASK_NOT_FOUND for a task
  // reaped meanwhile: the master has queued the deletion of that copy
  // itself, ordered before any later offload of the key; a local delete
  // here could remove that later copy instead.
  if (!failed.empty()) master_->NotifyOffloadFailure(me, failed);
  if (!succeeded.empty()) master_->NotifyOffloadSuccess(me, succeeded);
}

void StorageNode::RunPromotions(std::vector<Task> batch) {
  const NodeId me = id();
  struct Staged {
    const Task* task;
    ReplicaDescriptor target;
    std::vector<std::byte> bounce;  // only when staged on another node
  };
  std::vector<TaskId> ids;
  ids.reserve(batch.size());
  for (const Task& task : batch) ids.push_back(task.id);
  // On error the master has settled the task (no DRAM, object gone).
  std::vector<Result<ReplicaDescriptor>> targets =
      master_->PromotionAllocStart(me, ids);
  std::vector<Staged> staged;
  staged.reserve(batch.size());
  for (size_t i = 0; i < batch.size() && i < targets.size(); ++i) {
    if (!targets[i].ok()) {
      counters_->promotions_failed.fetch_add(1);
      continue;
    }
    staged.push_back({&batch[i], *targets[i], {}});
  }
  std::vector<SsdRead> reads;
  for (Staged& s : staged) {
    std::span<std::byte> into;
    if (s.target.node == me) {
      // Straight into the staged range of our own segment: no copy.
      Result<std::span<std::byte>> range =
          segment_->Range(s.target.offset, s.target.size);
      if (range.ok()) into = *range;
    } else {
      s.bounce.resize(s.target.size);
      into = s.bounce;
    }
    SsdRead read;
    read.key = s.task->key;
    read.buffer = into;
    reads.push_back(read);
  }
  if (ssd_) ssd_->ReadBatch(reads);
  std::vector<TaskFailure> failed;
  std::vector<TaskId> succeeded;
  for (size_t i = 0; i < staged.size(); ++i) {
    Staged& s = staged[i];
    Status why = ssd_ ? reads[i].status
                      : Status(ErrorReason::kObjectNotFound, "no SSD tier");
    if (why.ok() && reads[i].buffer.empty()) {
      why = Status(ErrorReason::kInternal, "staged range outside the segment");
    }
    if (why.ok() && reads[i].size != s.task->source.size) {
      why = Status(ErrorReason::kObjectNotFound,
                   "SSD copy has another size than the object");
    }
    if (why.ok() && s.target.node != me) {
      why = WriteToPeer(s.target, s.bounce);
    }
    if (!why.ok()) {
      failed.push_back({s.task->id, std::move(why)});
      continue;
    }
    counters_->promotion_bytes.fetch_add(s.task->source.size);
    succeeded.push_back(s.task->id);
  }
  counters_->promotions_failed.fetch_add(failed.size());
  counters_->promotions_done.fetch_add(succeeded.size());
  if (!failed.empty()) master_->NotifyPromotionFailure(me, failed);
  if (!succeeded.empty()) master_->NotifyPromotionSuccess(me, succeeded);
}

Status StorageNode::WriteToPeer(const ReplicaDescriptor& target,
                                std::span<std::byte> bytes) {
  if (options_.peer_transport == nullptr) {
    return Status(ErrorReason::kUnavailable,
                  "promotion staged on another node and no transport to it");
  }
  MT_ASSIGN_OR_RETURN(const NodeView peer, master_->GetNode(target.node));
  SegmentEndpoint endpoint;
  endpoint.transport_address = peer.spec.transport_address;
  endpoint.base = peer.spec.dram_base;
  endpoint.size = peer.spec.dram_size;
  endpoint.remote_key = peer.spec.dram_remote_key;
  const SegmentTransfer op{&endpoint, target.offset, bytes};
  return options_.peer_transport->Write({&op, 1})[0];
}

std::vector<Result<uint64_t>> StorageNode::ServeSsdReads(
    std::span<const SsdReadTransfer> ops) {
  if (!ssd_) {
    return std::vector<Result<uint64_t>>(
        ops.size(),
        Status(ErrorReason::kObjectNotFound, "node has no SSD tier"));
  }
  std::vector<SsdRead> reads(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    reads[i].key = ops[i].key;
    reads[i].buffer = ops[i].buffer;
  }
  ssd_->ReadBatch(reads);
  std::vector<Result<uint64_t>> out;
  out.reserve(reads.size());
  for (SsdRead& r : reads) {
    if (r.status.ok()) {
      counters_->ssd_reads.fetch_add(1);
      counters_->ssd_read_bytes.fetch_add(r.size);
      out.emplace_back(r.size);
    } else {
      counters_->ssd_read_errors.fetch_add(1);
      out.emplace_back(std::move(r.status));
    }
  }
  return out;
}

void StorageNode::Start() {
  MutexLock lock(&mu_);
  if (heartbeat_thread_.joinable()) return;
  stopping_ = false;
  // Before the first registration (the heartbeat thread's): the node
  // registers with a directory.
  threads_running_.store(true);
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  pull_thread_ = std::thread([this] { PullLoop(); });
  if (options_.dram_directory) {
    directory_thread_ = std::thread([this] { DirectoryLoop(); });
  }
  for (uint32_t i = 0; i < options_.io_workers; ++i) {
    worker_threads_.emplace_back([this] { WorkerLoop(); });
  }
}

void StorageNode::Stop() {
  {
    MutexLock lock(&mu_);
    if (!heartbeat_thread_.joinable()) return;
    stopping_ = true;
    stop_cv_.SignalAll();
    work_cv_.SignalAll();
    room_cv_.SignalAll();
  }
  // A pull waiting at the master for work ends now (any tasks it still
  // brings are dropped unrun; the master reaps them with the node).
  master_->InterruptPull(id());
  heartbeat_thread_.join();
  pull_thread_.join();
  if (directory_thread_.joinable()) directory_thread_.join();
  for (std::thread& worker : worker_threads_) worker.join();
  // Deregister only now. Before the heartbeat thread is joined, a heartbeat
  // answered NODE_NOT_FOUND would register the node again; before the
  // worker is joined, its last batch would report tasks the master has
  // already reaped. Until here the node still serves its segment and SSD
  // reads, so replicas the master hands out meanwhile stay readable. The
  // SSD sync comes after: readers are no longer sent here while it runs.
  Deregister().IgnoreError();  // logged; the master falls back to node_ttl
  if (ssd_) {
    Status synced = ssd_->Sync();
    if (!synced.ok()) {
      spdlog::error("node '{}': SSD sync at stop failed: {}", options_.name,
                    synced.ToString());
    }
  }
  MutexLock lock(&mu_);
  heartbeat_thread_ = std::thread();
  pull_thread_ = std::thread();
  directory_thread_ = std::thread();
  worker_threads_.clear();
  threads_running_.store(false);
}

void StorageNode::DirectoryLoop() {
  // As PullLoop: a failed sync (master down, node not registered yet)
  // backs off, doubling up to a second. While changes come, the next sync
  // goes at once: it carries their acknowledgement, which puts wait for.
  constexpr Duration kFirstBackoff = std::chrono::milliseconds(20);
  Duration backoff = kFirstBackoff;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
    }
    Result<size_t> got = SyncDirectoryOnce(options_.pull_wait);
    if (got.ok()) {
      backoff = kFirstBackoff;
      continue;
    }
    if (BackOff(got.status(), directory_log_, "syncing the DRAM directory",
                &backoff)) {
      return;
    }
  }
}

bool StorageNode::BackOff(const Status& failed, LogLimiter& log,
                          std::string_view what, Duration* backoff) {
  constexpr Duration kMaxBackoff = std::chrono::seconds(1);
  {
    // Stop cancels the calls in flight: that failure is the node's own
    // doing, not worth a warning at every clean shutdown.
    MutexLock lock(&mu_);
    if (stopping_) return true;
  }
  // A master that is down or forgot the node is expected (the heartbeat
  // registers again): not worth a line.
  uint64_t held_back = 0;
  if (failed.reason() != ErrorReason::kNodeNotFound &&
      failed.reason() != ErrorReason::kUnavailable && log.Allow(&held_back)) {
    spdlog::warn("node '{}': {} failed: {} ({} more since)", options_.name,
                 what, failed.ToString(), held_back);
  }
  MutexLock lock(&mu_);
  if (stop_cv_.WaitFor(*backoff, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return stopping_;
      })) {
    return true;
  }
  *backoff = std::min(*backoff * 2, kMaxBackoff);
  return false;
}

void StorageNode::HeartbeatLoop() {
  while (true) {
    Status s = HeartbeatOnce();
    uint64_t held_back = 0;
    if (!s.ok() && heartbeat_log_.Allow(&held_back)) {
      spdlog::warn("node '{}': heartbeat failed: {} ({} more since)",
                   options_.name, s.ToString(), held_back);
    }
    MutexLock lock(&mu_);
    if (stop_cv_.WaitFor(
            options_.heartbeat_interval,
            [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_; })) {
      return;
    }
  }
}

void StorageNode::PullLoop() {
  // After a failed pull (master down, node not registered yet) the loop
  // backs off, doubling up to a second: never a busy loop.
  constexpr Duration kFirstBackoff = std::chrono::milliseconds(20);
  Duration backoff = kFirstBackoff;
  while (true) {
    {
      MutexLock lock(&mu_);
      // Ask only with room: a full node takes no more than it can run.
      room_cv_.WaitFor(std::chrono::milliseconds(200),
                       [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                         return stopping_ || offloads_.size() +
                                                     promotions_.size() +
                                                     running_ <
                                                 options_.max_pending_tasks;
                       });
      if (stopping_) return;
    }
    Result<size_t> got = PullTasksOnce(options_.pull_wait);
    if (got.ok()) {
      backoff = kFirstBackoff;
      continue;
    }
    if (BackOff(got.status(), pull_log_, "asking the master for work",
                &backoff)) {
      return;
    }
  }
}

void StorageNode::WorkerLoop() {
  while (true) {
    {
      MutexLock lock(&mu_);
      // Wake for work, or now and then for a compaction step.
      work_cv_.WaitFor(std::chrono::milliseconds(200),
                       [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                         return stopping_ || !offloads_.empty() ||
                                !promotions_.empty() || !deletes_.empty();
                       });
      if (stopping_) return;
    }
    RunTasksOnce();
  }
}

StorageNodeStats StorageNode::stats() const {
  StorageNodeStats s;
  s.heartbeats = counters_->heartbeats.load();
  s.heartbeat_failures = counters_->heartbeat_failures.load();
  s.pulls = counters_->pulls.load();
  s.pull_failures = counters_->pull_failures.load();
  s.registrations = counters_->registrations.load();
  s.offloads_done = counters_->offloads_done.load();
  s.offloads_failed = counters_->offloads_failed.load();
  s.offload_bytes = counters_->offload_bytes.load();
  s.promotions_done = counters_->promotions_done.load();
  s.promotions_failed = counters_->promotions_failed.load();
  s.promotion_bytes = counters_->promotion_bytes.load();
  s.ssd_deletes = counters_->ssd_deletes.load();
  s.ssd_reads = counters_->ssd_reads.load();
  s.ssd_read_bytes = counters_->ssd_read_bytes.load();
  s.ssd_read_errors = counters_->ssd_read_errors.load();
  s.corrupt_keys_reported = counters_->corrupt_keys_reported.load();
  s.directory_syncs = counters_->directory_syncs.load();
  s.directory_sync_failures = counters_->directory_sync_failures.load();
  s.directory_changes = counters_->directory_changes.load();
  s.directory_refused = counters_->directory_refused.load();
  {
    MutexLock dir_lock(&dir_mu_);
    s.directory_entries = directory_.size();
    s.directory_bytes = directory_.bytes();
  }
  MutexLock lock(&mu_);
  s.pending_offloads = offloads_.size();
  s.pending_promotions = promotions_.size();
  s.pending_deletes = deletes_.size();
  return s;
}

}  // namespace mooncake_tier
