#pragma once

// The master's side of the nodes' DRAM directories (docs/design/ha.md).
//
// A node that keeps a directory (NodeSpec::keeps_directory) records every
// committed DRAM placement on it, so that a restarted master, or a new
// leader, rebuilds the DRAM tier from the nodes. This log holds, per such
// node, the changes the node has not acknowledged yet, in order:
//
// - an entry added when a put commits (Puts waits until the node has it
//   before acknowledging the put) or a promotion commits;
// - an entry dropped when its replica is released; the space is freed only
//   once the node acknowledged the drop, so a range is never handed to a
//   new put while the node still lists the old object there (after a
//   failover that would read the new bytes as the old object).
//
// The node pulls the changes (Sync, a long poll) and acknowledges them in
// its next Sync; changes it was sent but did not acknowledge are sent
// again, and applying one twice changes nothing.
//
// Thread safety: thread-safe. Ranks after the object stripes (Add and
// DropThenFree are called under one) and before the node registry: the
// frees run after this log's locks are released.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/types.h"

namespace mooncake_tier {

class DramDirectoryLog {
 public:
  // Frees a node's range once its drop is acknowledged (the registry's
  // FreeMemory and the space signal), passing on the DropThenFree's
  // reuse_after. Called with no lock of this log held.
  using FreeFn = std::function<void(NodeId node, uint64_t offset, uint64_t size,
                                    TimePoint reuse_after)>;
  explicit DramDirectoryLog(FreeFn free);
  DramDirectoryLog(const DramDirectoryLog&) = delete;
  DramDirectoryLog& operator=(const DramDirectoryLog&) = delete;

  // `node` keeps a directory from now on (it registered with one).
  void AddNode(NodeId node);
  // The registration is gone (expired, deregistered, replaced): its changes
  // are forgotten, frees waiting for them dropped (the registry forgot the
  // segment) and puts waiting for them woken.
  void DropNode(NodeId node);
  bool Tracks(NodeId node) const;

  // Records a committed placement on `node`. Returns the change's number
  // (WaitRecorded), or 0 when the node keeps no directory.
  uint64_t Add(NodeId node, DramEntry entry);
  // The placement at `offset` goes: its range is freed once the node
  // acknowledged the drop (and handed out again not before `reuse_after`,
  // NodeRegistry::FreeMemory). False when the node keeps no directory: the
  // caller frees the range itself.
  bool DropThenFree(NodeId node, std::string_view key, uint64_t offset,
                    uint64_t size, TimePoint reuse_after = TimePoint::min());

  // The entry at `offset` goes from the node's directory with nothing to
  // free (an entry the master did not take back when the node registered).
  void Discard(NodeId node, std::string_view key, uint64_t offset);

  // Waits until `node` acknowledged change `seq`: OK; UNAVAILABLE when the
  // node's registration went first; TIMEOUT after `timeout` (real time).
  Status WaitRecorded(NodeId node, uint64_t seq, Duration timeout);

  // Where every node's log stands (node -> the next change's number), so
  // that a call can wait for the changes it made without naming them:
  // WaitChangedSince(Mark()) after the call waits until every node whose
  // log moved meanwhile acknowledged all of it (changes of concurrent
  // calls included, which only costs their round trip). Empty, at no
  // cost, when no node keeps a directory.
  using Marks = absl::flat_hash_map<NodeId, uint64_t>;
  Marks Mark() const;
  // OK; or the first node's TIMEOUT (after `timeout`, real time) or
  // UNAVAILABLE (its registration went first).
  Status WaitChangedSince(const Marks& before, Duration timeout);

  // The node's call: acknowledges every change up to `acked`, then returns
  // the changes after it (at most `max`), waiting up to `wait` (real time)
  // when there are none. NODE_NOT_FOUND for a node not tracked.
  Result<DirectoryChanges> Sync(NodeId node, uint64_t acked, size_t max,
                                Duration wait);
  // Ends a Sync of `node` waiting in another thread (the node stops).
  void Interrupt(NodeId node);

  struct Stats {
    uint64_t pending_changes = 0;  // sent or not, not yet acknowledged
    uint64_t pending_free_bytes = 0;
  };
  Stats GetStats() const;
  // The ranges waiting for their drops, each rounded up to `alignment` as
  // the allocators hold them (the audit's figure).
  uint64_t PendingFreeBytes(uint64_t alignment) const;

 private:
  struct PendingFree {
    uint64_t seq;
    uint64_t offset;
    uint64_t size;
    TimePoint reuse_after;
  };
  struct NodeLog {
    Mutex mu;
    CondVar changed{&mu};
    std::deque<DirectoryOp> pending ABSL_GUARDED_BY(mu);
    std::deque<PendingFree> frees ABSL_GUARDED_BY(mu);
    uint64_t next_seq ABSL_GUARDED_BY(mu) = 1;
    uint64_t acked ABSL_GUARDED_BY(mu) = 0;
    uint64_t free_bytes ABSL_GUARDED_BY(mu) = 0;
    bool gone ABSL_GUARDED_BY(mu) = false;
    bool interrupted ABSL_GUARDED_BY(mu) = false;
  };
  std::shared_ptr<NodeLog> Find(NodeId node) const;

  const FreeFn free_;
  mutable SharedMutex mu_;
  absl::flat_hash_map<NodeId, std::shared_ptr<NodeLog>> nodes_
      ABSL_GUARDED_BY(mu_);
  // Nodes tracked: lets puts on a master without directory nodes (tests,
  // in-process nodes) skip the lookup.
  std::atomic<size_t> tracked_{0};
};

}  // namespace mooncake_tier
