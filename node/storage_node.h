#pragma once

// A storage node: contributes a DRAM segment to L1 and an SSD store to L2,
// executes the master's offload tasks and SSD deletions, and serves SSD-tier
// reads.
//
// Threads in production (Start): a heartbeat thread that only tells the
// master the node lives (so long I/O can never starve it), a task thread
// that asks the master for work whenever the node has room (a long poll:
// tasks arrive as they are made, as fast as the SSD takes them), and
// io_workers worker threads that do the SSD I/O in batches and report
// results in batches.
// Tests drive the same steps by hand: Register, HeartbeatOnce,
// PullTasksOnce, RunTasksOnce.
//
// Thread safety: thread-safe. ServeSsdReads may be called from any thread
// at any time after Create.

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "node/dram_directory.h"
#include "node/dram_segment.h"
#include "node/log_limiter.h"
#include "node/ssd_store.h"
#include "protocol/master_link.h"
#include "protocol/task.h"
#include "transport/transport.h"

namespace mooncake_tier {

struct StorageNodeOptions {
  // Stable identity across restarts. REQUIRES: non-empty.
  std::string name;
  // DRAM contributed to L1. Default: 256 MiB.
  uint64_t dram_bytes = 256ull << 20;
  // Back the segment with 2 MiB pages when available. Default: false.
  bool huge_pages = false;
  // Fault the whole segment in from a background thread at start
  // (DramSegment::PopulateInBackground): puts into fresh ranges then pay no
  // page faults, and the node holds all its DRAM from the start instead of
  // as puts first touch it. Default: false (the daemon turns it on;
  // in-process nodes of tests and embedded clusters stay lazy).
  bool populate_dram = false;
  // Memory behind the DRAM segment where the node stages SSD-tier reads
  // for clients on its host: they copy the values out of the node's shared
  // memory instead of receiving them over the network stack
  // (docs/design/ucx-transport.md). It is exported with the segment but
  // never published to the master nor allocated by it; requests it cannot
  // hold go the network way. Ignored (no area) on a node without an SSD
  // store; 0 turns staging off. Default: 64 MiB.
  uint64_t ssd_read_staging_bytes = 64ull << 20;
  // Address of this node's RPC service (published to the master).
  std::string rpc_address;
  // How often the node heartbeats. REQUIRES: well below the master's
  // node_ttl. Default: 1 s.
  Duration heartbeat_interval = std::chrono::seconds(1);
  // Offload and promotion tasks accepted but not yet executed; the node
  // asks the master for no more than the room left. Exported as the gauge
  // mooncake_node_max_pending_tasks. Default: 256.
  uint32_t max_pending_tasks = 256;
  // Offloads written to (and promotions read from) the SSD store per
  // batch, at most; a batch also stops at io_batch_bytes. Default: 64.
  uint32_t io_batch = 64;
  // Bytes of one offload batch, at most (a single larger object still
  // goes alone). Default: 32 MiB.
  uint64_t io_batch_bytes = 32ull << 20;
  // Threads running SSD batches (offloads, promotions, deletions): with
  // two, one batch's device time overlaps the next one's checksums and
  // reports. Deletions still come before every offload pulled after them.
  // REQUIRES: >= 1. Default: 2.
  uint32_t io_workers = 2;
  // How long one PullTasks may wait at the master for work (a stop waits
  // for the pull in flight). Default: 250 ms.
  Duration pull_wait = std::chrono::milliseconds(250);
  // Keep a DRAM directory (node/dram_directory.h) while the node's threads
  // run: the master records each committed DRAM placement here before it
  // acknowledges the put, and a restarted master or a new leader rebuilds
  // the DRAM tier from it. A node driven by hand (no Start) keeps none
  // unless a test syncs it (SyncDirectoryOnce). Default: true.
  bool dram_directory = true;
  // Writes the bytes of promotions the master staged on another node's
  // segment (when this one had no room). Null: those promotions fail and
  // the object stays on SSD. Must outlive the node.
  Transport* peer_transport = nullptr;
};

// Monotonic counters of one node, and the depth of its work queues.
struct StorageNodeStats {
  uint64_t heartbeats = 0;
  uint64_t heartbeat_failures = 0;
  uint64_t registrations = 0;
  uint64_t pulls = 0;          // PullTasks answered
  uint64_t pull_failures = 0;  // PullTasks failed (master down, forgotten)
  uint64_t offloads_done = 0;
  uint64_t offloads_failed = 0;
  uint64_t offload_bytes = 0;
  uint64_t ssd_deletes = 0;
  uint64_t ssd_reads = 0;
  uint64_t ssd_read_bytes = 0;
  uint64_t ssd_read_errors = 0;
  uint64_t corrupt_keys_reported = 0;
  uint64_t promotions_done = 0;
  uint64_t promotions_failed = 0;
  uint64_t promotion_bytes = 0;
  uint64_t directory_syncs = 0;          // SyncDirectory answered
  uint64_t directory_sync_failures = 0;  // failed (master down, forgotten)
  uint64_t directory_changes = 0;        // changes applied
  uint64_t directory_refused = 0;        // changes that did not fit
  // Gauges, not counters: work accepted from the master and not yet
  // started (a batch being executed has left these queues).
  uint64_t pending_offloads = 0;
  uint64_t pending_promotions = 0;
  uint64_t pending_deletes = 0;
  uint64_t directory_entries = 0;
  uint64_t directory_bytes = 0;
};

class StorageNode final : public SsdReadHandler {
 public:
  // Maps the DRAM segment (and, with an SSD store, its SSD-read staging
  // tail) and exports it (and SSD reads) through `exporter`; the endpoint
  // and the master see options.dram_bytes. `ssd` may be null (no L2 on
  // this node). `master` and `exporter` must outlive the node.
  static Result<std::unique_ptr<StorageNode>> Create(
      StorageNodeOptions options, std::unique_ptr<SsdStore> ssd,
      MasterLink* master, SegmentExporter* exporter);
  ~StorageNode() override;

  // Registers (again) with the master, reporting the SSD inventory and the
  // DRAM directory. Work handed out to an earlier registration is dropped;
  // the directory stays (the bytes it describes are still in the segment).
  Status Register();
  // Acknowledges the directory changes applied so far and applies the next
  // ones, waiting up to `wait` when there are none. Returns how many it
  // applied. What the directory thread runs; tests call it by hand (then
  // the node must keep a directory: `keep_directory_by_hand`).
  Result<size_t> SyncDirectoryOnce(Duration wait = Duration::zero());
  // A node driven by hand registers with a directory from the next
  // Register on (tests).
  void keep_directory_by_hand() { directory_by_hand_ = true; }
  // The directory's entries (tests, diagnostics).
  std::vector<DramEntry> DirectoryEntries() const;
  // One heartbeat: reports corrupt SSD records, and registers again if the
  // master no longer knows the node. Never waits for work or I/O.
  Status HeartbeatOnce();
  // Asks the master for as much work as the node has room for, waiting up
  // to `wait` when none is queued, and queues what comes for the worker.
  // Returns the tasks and deletions received.
  Result<size_t> PullTasksOnce(Duration wait = Duration::zero());
  // Executes queued deletions, offloads and promotions (and one compaction
  // step when idle). Returns the number of tasks and deletions executed.
  size_t RunTasksOnce();

  // Tells the master this node is leaving (MasterLink::DeregisterNode), so
  // it drops the node's replicas and tasks now rather than after node_ttl,
  // and forgets the id: a later heartbeat registers afresh. Never blocks
  // past the link's deadline; a master that does not confirm is logged and
  // left to expire the node after node_ttl. OK when not registered.
  // REQUIRES: the heartbeat thread is not running (it would register the
  // node again); Stop calls it after joining it.
  Status Deregister();

  // Starts the heartbeat and worker threads. Stop is a clean stop: it
  // joins them, deregisters the node from the master, and syncs the SSD
  // store; the destructor does the same. Only a started node deregisters
  // (a node driven by hand leaves by node_ttl, like a killed one).
  // Idempotent.
  void Start();
  void Stop();

  // SsdReadHandler: SSD-tier reads into the callers' buffers.
  std::vector<Result<uint64_t>> ServeSsdReads(
      std::span<const SsdReadTransfer> ops) override;

  NodeId id() const { return id_.load(); }
  const std::string& name() const { return options_.name; }
  const DramSegment& segment() const { return *segment_; }
  SsdStore* ssd() const { return ssd_.get(); }
  // The configured cap on pending offload and promotion tasks (fixed at
  // creation, so no lock).
  uint32_t max_pending_tasks() const { return options_.max_pending_tasks; }
  StorageNodeStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  StorageNode(StorageNodeOptions options, std::unique_ptr<DramSegment> segment,
              std::unique_ptr<SsdStore> ssd, MasterLink* master,
              SegmentExporter* exporter);

  void RunOffloads(std::vector<Task> batch);
  // Stages DRAM for each task, reads the SSD copies straight into it (or
  // into a bounce buffer when staged on another node) and reports.
  void RunPromotions(std::vector<Task> batch);
  // Writes a promotion's bytes into another node's segment.
  Status WriteToPeer(const ReplicaDescriptor& target,
                     std::span<std::byte> bytes);
  void RunDeletes(std::vector<std::string> keys);
  // Compaction steps after a pull: `idle` when it brought no work.
  void Compact(bool idle);
  void HeartbeatLoop();
  void PullLoop();
  void DirectoryLoop();
  // After a failed call to the master in a loop: logs it (at `log`'s rate;
  // not when the master is down or forgot the node), waits `*backoff` and
  // doubles it up to a second. True when the node is stopping.
  bool BackOff(const Status& failed, LogLimiter& log, std::string_view what,
               Duration* backoff);
  void WorkerLoop();
  bool KeepsDirectory() const;
  // Tasks accepted and not finished: queued, and the batch running.
  size_t PendingTasks() const;

  const StorageNodeOptions options_;
  const std::unique_ptr<DramSegment> segment_;
  const std::unique_ptr<SsdStore> ssd_;
  MasterLink* const master_;
  SegmentExporter* const exporter_;
  SegmentEndpoint endpoint_;
  std::atomic<NodeId> id_{kNoNode};

  mutable Mutex mu_;
  std::deque<Task> offloads_ ABSL_GUARDED_BY(mu_);
  std::deque<Task> promotions_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> deletes_ ABSL_GUARDED_BY(mu_);
  // Tasks of the batches the workers are running.
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  // Workers applying deletions they took. Offloads wait for them: a
  // deletion must reach the store before any offload pulled after it (the
  // master never sends a deletion for a key with an offload in flight).
  uint32_t deleting_ ABSL_GUARDED_BY(mu_) = 0;
  CondVar deletes_done_cv_{&mu_};
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  CondVar stop_cv_{&mu_};  // signalled when stopping
  CondVar work_cv_{&mu_};  // signalled when work is queued or stopping
  CondVar room_cv_{&mu_};  // signalled when a batch ends or stopping
  std::thread heartbeat_thread_;
  std::thread pull_thread_;
  std::thread directory_thread_;
  std::vector<std::thread> worker_threads_;
  std::atomic<bool> threads_running_{false};
  std::atomic<bool> directory_by_hand_{false};

  // The DRAM directory and where its acknowledgements stand: the
  // registration they belong to and the last change applied. While
  // `directory_registering_` (from Register's snapshot until the new id is
  // in force) no change is applied, so none lands between the snapshot the
  // master rebuilds from and the changes it sends next.
  mutable Mutex dir_mu_;
  DramDirectory directory_ ABSL_GUARDED_BY(dir_mu_);
  NodeId directory_node_ ABSL_GUARDED_BY(dir_mu_) = kNoNode;
  uint64_t directory_acked_ ABSL_GUARDED_BY(dir_mu_) = 0;
  bool directory_registering_ ABSL_GUARDED_BY(dir_mu_) = false;

  struct Counters;
  std::unique_ptr<Counters> counters_;
  // Repeating failures are logged at a bounded rate.
  LogLimiter heartbeat_log_;
  LogLimiter pull_log_;
  LogLimiter directory_log_;
  LogLimiter compaction_log_;
  LogLimiter delete_log_;
};

}  // namespace mooncake_tier
