#pragma once

// Options of the metadata engine (Master). Defaults are the production
// defaults of ARCHITECTURE.md; the daemon exposes each as a flag. Fixed at
// start, except the knobs marked "Run-time tunable" (RuntimeConfigChange,
// Master::UpdateRuntimeConfig) and the promotion options.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "core/eviction_policy_kind.h"
#include "core/promotion_options.h"
#include "protocol/types.h"

namespace mooncake_tier {

struct MasterConfig {
  // Object-table stripes. REQUIRES: a power of two. Default: 1024.
  uint32_t shard_count = 1024;

  // How long a GetReplicaList protects the object from eviction and
  // non-forced removal. Default: 10 s.
  Duration lease_ttl = std::chrono::seconds(10);
  // A put still processing after this long is revoked and its space freed.
  // Default: 30 s.
  Duration put_timeout = std::chrono::seconds(30);
  // How long a client may start writing into a range PutStart granted,
  // counted from its PutStart (the reply says so: write_within_ms); it
  // writes nothing later. This bounds when a late write can land in space
  // the master handed out again: after put_timeout revoked the put (hence
  // capped at put_timeout), after the node was expired and came back
  // (capped at half of node_ttl, when it stopped being placed on), and
  // after a restart, when a master cannot know what its predecessor
  // granted and holds placements on resumed nodes for this long plus
  // late_write_margin (inherited_grant_window). Writes larger than this
  // window's worth of bandwidth fail (TIMEOUT). Default: 2 s.
  Duration grant_window = std::chrono::seconds(2);
  // A write started just before its grant ran out lands this much later
  // at most (one batch's transfer; a client paused inside one copy longer
  // than this is the one case time cannot cover). Default: 250 ms.
  Duration late_write_margin = std::chrono::milliseconds(250);
  // How long after this master started a predecessor's grants may still be
  // written: resumed nodes (NodeSpec::resumed) get no placements before.
  // Unset: LongestGrant() + late_write_margin (a lone master restarted). A
  // leader of a new term sets late_write_margin, since every grant of an
  // earlier term ran out with that term's lease window (ha.md).
  std::optional<Duration> inherited_grant_window;
  // The grant_window in force, after its caps.
  Duration EffectiveGrantWindow() const;
  // How long a client may read an object's DRAM copy at the location a
  // GetReplicaList gave, with no further call (its location cache),
  // counted from before it sent the call (ObjectReplicas::location_valid_ms).
  // Until the last such grant on an object ran out, the DRAM range of a copy
  // that goes (evicted, removed even by force, dropped after an offload or
  // a promotion) is not handed out again: the bytes a cached reader finds
  // are still the object's. Capped like grant_window (put_timeout, half of
  // node_ttl), and fences resumed nodes like it (LongestGrant). 0: no
  // grants, every read asks the master. Default: 2 s.
  Duration location_grant = std::chrono::seconds(2);
  // location_grant after the same caps as grant_window.
  Duration EffectiveLocationGrant() const;
  // The longer of the two grants in force: how long after a restart (or a
  // node's return) ranges handed out before may still be written or read.
  Duration LongestGrant() const {
    return std::max(EffectiveGrantWindow(), EffectiveLocationGrant());
  }
  // How long a PutEnd waits for the node holding the object to record it
  // in its DRAM directory (nodes that keep one; ha.md) before it answers
  // TIMEOUT. Default: 5 s.
  Duration directory_record_timeout = std::chrono::seconds(5);

  // DRAM eviction starts when used/capacity >= high watermark and frees
  // until used/capacity <= high watermark - eviction ratio.
  // Default: 0.90 and 0.05. REQUIRES: 0 < ratio < high <= 1.
  // Run-time tunable (both).
  double eviction_high_watermark = 0.90;
  double eviction_ratio = 0.05;
  // The same for each node's SSD tier, where eviction runs just below the
  // limit in small batches: the SSD's capacity is the tier's hit ratio,
  // and it needs no room for puts (offloads in flight count as used, so
  // room for them is made ahead). Capped per node by what its store needs
  // for dead records (SsdFillCap), and at 0.90 with a ratio of at least
  // 0.05 under a policy that evicts out of the log's order (LRU).
  // Default: 0.99 and 0.01. Run-time tunable (both).
  double ssd_high_watermark = 0.99;
  double ssd_eviction_ratio = 0.01;
  // The order in which each node's SSD tier gives up units
  // (core/eviction_policy.h). Default: kClock. Run-time tunable.
  EvictionPolicyKind ssd_eviction_policy = EvictionPolicyKind::kClock;

  // Writeback (offload on_evict): on each node, while the DRAM bytes of
  // units with no whole SSD copy are above this share of its DRAM, the
  // coldest are written to SSD ahead of need; they stay in DRAM, clean,
  // and a put into a full tier drops them at once. Under write_through
  // every put is written back (as if this were 0). Above the eviction
  // target (eviction_high_watermark - eviction_ratio) it acts as that
  // target. REQUIRES: 0 <= mark <= 1. Default: 0.70. Run-time tunable.
  double writeback_watermark = 0.70;
  // A put that finds DRAM full and nothing clean to drop waits at most
  // this long (and never past its RPC deadline) for writeback to free
  // room before NO_SPACE. 0: never waits. Default: 5 s.
  Duration put_wait_timeout = std::chrono::seconds(5);

  // What happens to an object's DRAM copy on eviction. Default: kOff.
  OffloadMode offload_mode = OffloadMode::kOff;
  // Offload tasks handed to a node per PullTasks (it asks again as it
  // finishes, so this bounds a batch, not the rate). Default: 64. Run-time
  // tunable.
  uint32_t offload_max_per_pull = 64;
  // Queued + in-flight offload tasks per node; more is QUEUE_FULL (the
  // object simply stays in DRAM). Default: 4096. Run-time tunable (a
  // lower limit refuses new tasks; those booked stay).
  uint32_t offload_queue_limit = 4096;
  // An offload not reported within this time is reaped and unpinned.
  // Default: 60 s.
  Duration offload_task_timeout = std::chrono::seconds(60);
  // SSD deletions handed to a node per PullTasks. Default: 1024.
  uint32_t ssd_deletes_per_pull = 1024;

  // The id the first node to register gets; later ones count up. Ids are
  // never reused within one master's life. A master that can restart while
  // nodes and clients live on must start beyond every id it handed out
  // before (the daemon uses its start time), so that a stale id held by a
  // client or a node never names a different node. REQUIRES: >= 1.
  // Default: 1.
  NodeId first_node_id = 1;

  // A node silent for node_ttl is dead; silent for half of it, suspect
  // (no new placements). Default: 10 s.
  Duration node_ttl = std::chrono::seconds(10);

  // Group-table stripes. REQUIRES: a power of two. Default: 256.
  uint32_t group_shard_count = 256;
  // Reading a member of a group that is not complete. Default:
  // kAllOrNothing.
  GroupVisibility group_visibility = GroupVisibility::kAllOrNothing;
  // Removing one member of a group. Default: kGroup.
  GroupRemovePolicy group_remove_policy = GroupRemovePolicy::kGroup;
  // A group still filling this long after its first member's PutStart
  // expires and its members are removed. Default: 60 s. Run-time tunable
  // (applies to groups already filling at the next sweep).
  Duration group_fill_timeout = std::chrono::seconds(60);
  // The surviving members of a broken group are removed this long after it
  // broke. Default: 60 s. Run-time tunable.
  Duration group_broken_ttl = std::chrono::seconds(60);
  // Largest group_size accepted: bounds one eviction unit. Default: 4096.
  uint32_t max_group_size = 4096;
  // Groups still filling cannot be evicted (no half group may leave or
  // stay). Once they hold this fraction of DRAM, the first member of a new
  // group is refused with FILLING_GROUPS_FULL; groups already filling may
  // still complete. REQUIRES: 0 < ratio <= 1. Default: 0.5.
  double group_filling_max_ratio = 0.5;

  // Promotion on hit; tunable at run time (Master::SetPromotionOptions).
  PromotionOptions promotion;

  // Alignment of DRAM allocations inside a segment. Default: 64 bytes.
  uint64_t dram_alignment = 64;

  // Empty when valid, otherwise what is wrong.
  std::string Validate() const;
};

// A change of the knobs of MasterConfig that may change while the master
// runs (Master::UpdateRuntimeConfig), promotion's aside; unset fields stay
// as they are. Everything else is fixed at start.
struct RuntimeConfigChange {
  std::optional<double> eviction_high_watermark;
  std::optional<double> eviction_ratio;
  std::optional<double> ssd_high_watermark;
  std::optional<double> ssd_eviction_ratio;
  std::optional<EvictionPolicyKind> ssd_eviction_policy;
  std::optional<double> writeback_watermark;
  std::optional<Duration> group_fill_timeout;
  std::optional<Duration> group_broken_ttl;
  std::optional<uint32_t> offload_max_per_pull;
  std::optional<uint32_t> offload_queue_limit;

  bool empty() const;
  // Sets the fields this change sets in `config`.
  void ApplyTo(MasterConfig& config) const;
};

// What one run-time change did: the effective configuration just before
// and just after it (promotion options included).
struct RuntimeConfigUpdate {
  MasterConfig before;
  MasterConfig after;
};

}  // namespace mooncake_tier
