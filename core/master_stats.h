#pragma once

// Counters and gauges of the metadata engine. The counter list is declared
// once (MOONCAKE_TIER_MASTER_COUNTERS); the live atomics, the plain snapshot
// and the visitor the metrics layer uses are all generated from it.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "core/dram_pressure.h"
#include "core/group_table.h"
#include "core/node_registry.h"

namespace mooncake_tier {

#define MOONCAKE_TIER_MASTER_COUNTERS(X)                                      \
  X(put_started)            /* PutStart that reserved space */                \
  X(put_completed)          /* PutEnd that made an object visible */          \
  X(put_revoked)            /* PutRevoke by the client */                     \
  X(put_timed_out)          /* puts freed by the put timeout */               \
  X(put_no_space)           /* PutStart refused with NO_SPACE */              \
  X(put_waits)              /* puts that waited for DRAM to free */           \
  X(put_wait_us)            /* sum of those waits */                          \
  X(put_evictions)          /* reserved clean units dropped by puts */        \
  X(memory_rounds)          /* memory rounds (eviction, writeback) */         \
  X(memory_rounds_by_puts)  /* of them: run by a put that found no room */    \
  X(memory_rounds_by_pulls) /* of them: run by a node's pull (writeback       \
                               behind) */                                     \
  X(put_rejected)           /* PutStart refused for bad input/exists */       \
  X(get_memory_hit)         /* GetReplicaList with a DRAM replica */          \
  X(get_local_disk_hit)     /* GetReplicaList served by SSD only */           \
  X(get_miss)               /* GetReplicaList of an absent object */          \
  X(get_group_incomplete)   /* refused: member of an incomplete group */      \
  X(exists_calls)                                                             \
  X(prefix_probes)          /* ProbePrefix calls */                           \
  X(leases_released)        /* readers' leases ended by ReleaseLeases */      \
  X(leases_expired)         /* lease periods ended by the TTL: readers        \
                               that never released (crashed, or old) */       \
  X(location_grants)        /* GetReplicaList answers a client may cache */   \
  X(cached_reads_reported)  /* reads clients served from their location       \
                               caches, reported afterwards (a hot key at      \
                               most every 100 ms per client) */               \
  X(removes)                /* objects removed by Remove */                   \
  X(evicted_memory_objects) /* DRAM replicas dropped by eviction */           \
  X(evicted_memory_bytes)                                                     \
  X(evicted_disk_objects) /* SSD replicas dropped by eviction */              \
  X(evicted_disk_bytes)                                                       \
  X(ssd_reinserted_objects) /* SSD objects the clock eviction gave another    \
                               turn (read since they entered) */              \
  X(objects_evicted)        /* objects gone from the store by eviction */     \
  X(offload_queued)                                                           \
  X(offload_completed)                                                        \
  X(offload_bytes)       /* bytes committed to SSD by offload */              \
  X(offload_failed)      /* reported failed by the node */                    \
  X(offload_timed_out)   /* reaped by the offload timeout */                  \
  X(offload_node_lost)   /* reaped with their node */                         \
  X(offload_queue_full)  /* not queued: the node's queue was full */          \
  X(offload_pauses)      /* offloads to a node paused: SSD full */            \
  X(offload_discarded)   /* completed after the object was removed */         \
  X(writeback_queued)    /* offloads that keep the DRAM copy */               \
  X(writeback_completed) /* of them: landed (the copy turned clean) */        \
  X(writeback_bytes)                                                          \
  X(nodes_registered)                                                         \
  X(nodes_expired)             /* nodes declared dead (silent or replaced)*/  \
  X(nodes_deregistered)        /* nodes that left cleanly (DeregisterNode) */ \
  X(objects_lost)              /* objects whose last replica died */          \
  X(inventory_restored)        /* SSD objects rebuilt from node inventory */  \
  X(ssd_corruptions)           /* SSD records reported corrupt by nodes */    \
  X(promotion_attempts)        /* reads that found a unit only on SSD */      \
  X(promotion_queued)          /* promotion tasks queued */                   \
  X(promotion_completed)       /* DRAM copies committed */                    \
  X(promotion_useful)          /* of them: read from DRAM afterwards (counted \
                                  at the first DRAM read) */                  \
  X(promotion_deduped)         /* already queued: not a failure */            \
  X(promotion_admission_gated) /* sketch estimate too low */                  \
  X(promotion_watermark_gated) /* DRAM at the high watermark */               \
  X(promotion_queue_full)      /* in flight at promotion queue_limit */       \
  X(promotion_alloc_failed)    /* no DRAM for the staged copy */              \
  X(promotion_transfer_failed) /* the node could not write the bytes */       \
  X(promotion_source_lost)     /* the SSD copy or the object went */          \
  X(promotion_timeout)         /* reaped by the task timeout */               \
  X(promotion_node_lost)       /* reaped with their node */                   \
  X(promotion_bytes)           /* bytes committed to DRAM */                  \
  X(promotion_duration_us)     /* sum of queue-to-commit times */             \
  X(promotion_forced)          /* queued by an operator */                    \
  X(promotion_proactive)       /* units queued by proactive promotion */      \
  X(promotion_dropped_sources) /* SSD copies dropped after promotion */       \
  X(put_unrecorded) /* PutEnd whose node did not record it in time */         \
  X(dram_restored)  /* DRAM objects rebuilt from node directories */

// Upper bounds of the buckets of promotion latency (queued to committed);
// a last bucket holds what is above them. Fixed: a histogram's buckets
// may not change while Prometheus scrapes it.
inline constexpr std::array<Duration, 14> kPromotionDurationBounds = {
    std::chrono::milliseconds(1),    std::chrono::milliseconds(2),
    std::chrono::milliseconds(5),    std::chrono::milliseconds(10),
    std::chrono::milliseconds(25),   std::chrono::milliseconds(50),
    std::chrono::milliseconds(100),  std::chrono::milliseconds(250),
    std::chrono::milliseconds(500),  std::chrono::seconds(1),
    std::chrono::milliseconds(2500), std::chrono::seconds(5),
    std::chrono::seconds(10),        std::chrono::seconds(30)};
// Per-bucket (not cumulative) counts for those bounds plus +Inf.
using PromotionDurationBuckets =
    std::array<uint64_t, kPromotionDurationBounds.size() + 1>;

// Upper bounds of the buckets of put waits (a put that found DRAM full
// waiting for writeback to free room); a last bucket holds what is above.
inline constexpr std::array<Duration, 12> kPutWaitBounds = {
    std::chrono::microseconds(100),  std::chrono::microseconds(250),
    std::chrono::microseconds(500),  std::chrono::milliseconds(1),
    std::chrono::microseconds(2500), std::chrono::milliseconds(5),
    std::chrono::milliseconds(10),   std::chrono::milliseconds(25),
    std::chrono::milliseconds(50),   std::chrono::milliseconds(100),
    std::chrono::milliseconds(500),  std::chrono::seconds(2)};
using PutWaitBuckets = std::array<uint64_t, kPutWaitBounds.size() + 1>;

// Live counters; relaxed atomics (monotonic, read for reporting only).
struct MasterCounters {
#define MOONCAKE_TIER_COUNTER_FIELD(name) std::atomic<uint64_t> name{0};
  MOONCAKE_TIER_MASTER_COUNTERS(MOONCAKE_TIER_COUNTER_FIELD)
#undef MOONCAKE_TIER_COUNTER_FIELD
  // Completed promotions by latency (sum and count: promotion_duration_us
  // and promotion_completed).
  std::array<std::atomic<uint64_t>, kPromotionDurationBounds.size() + 1>
      promotion_duration_buckets{};
  // Put waits by duration (sum and count: put_wait_us and put_waits).
  std::array<std::atomic<uint64_t>, kPutWaitBounds.size() + 1>
      put_wait_buckets{};
};

// A point-in-time copy: counters plus gauges.
struct MasterStats {
#define MOONCAKE_TIER_COUNTER_FIELD(name) uint64_t name = 0;
  MOONCAKE_TIER_MASTER_COUNTERS(MOONCAKE_TIER_COUNTER_FIELD)
#undef MOONCAKE_TIER_COUNTER_FIELD

  uint64_t objects = 0;
  uint64_t pending_puts = 0;
  TierUsage memory;
  TierUsage local_disk;
  // The SSD bytes operators gave the nodes (--ssd-capacity), alive and
  // suspect: local_disk.used over it is how much of what was configured
  // holds readable objects (local_disk.capacity is what the stores can
  // hold after their overhead and the file system's room).
  uint64_t ssd_configured_bytes = 0;
  // The object hit ratio the store would have at multiples of its object
  // capacity (DRAM plus SSD), estimated from a sample of what it serves
  // (HitRatioForecast; by scale, ascending).
  struct ForecastPoint {
    double scale = 0;
    uint64_t capacity_bytes = 0;
    double hit_ratio = 0;
    uint64_t sampled_references = 0;
  };
  std::vector<ForecastPoint> hit_ratio_forecast;
  double forecast_sampling_rate = 0;
  uint64_t nodes_alive = 0;
  uint64_t nodes_suspect = 0;
  uint64_t nodes_dead = 0;  // declared dead and not registered again since
  uint64_t offload_tasks_queued = 0;
  uint64_t offload_tasks_in_flight = 0;  // dispatched, not yet reported
  uint64_t ssd_deletes_pending = 0;
  uint64_t promotion_tasks_queued = 0;
  uint64_t promotion_in_flight = 0;  // tasks alive (queued to committed)
  uint64_t promotion_sketch_halvings = 0;
  PromotionDurationBuckets promotion_duration_buckets{};
  uint64_t filling_group_bytes = 0;  // DRAM held by groups still filling
  PutWaitBuckets put_wait_buckets{};
  // Every node's DRAM by how it is held (sums of the last memory round's
  // per-node figures), the clean reserve left for puts, and the bytes of
  // offload tasks queued or in flight (writeback and eviction alike).
  MemoryBreakdown memory_held;
  uint64_t memory_reserve_bytes = 0;
  // Freed DRAM held back until readers' location grants on it ran out.
  uint64_t held_memory_bytes = 0;
  uint64_t offload_bytes_pending = 0;
  GroupStateCounts groups;              // groups by state, now
  GroupCounterSnapshot group_counters;  // group events so far

  // Calls visitor(name, value) for every counter, in declaration order.
  template <typename Visitor>
  void VisitCounters(Visitor&& visitor) const {
#define MOONCAKE_TIER_COUNTER_VISIT(name) \
  visitor(std::string_view(#name), name);
    MOONCAKE_TIER_MASTER_COUNTERS(MOONCAKE_TIER_COUNTER_VISIT)
#undef MOONCAKE_TIER_COUNTER_VISIT
  }
};

// Cross-checks of the engine's bookkeeping, for tests and the admin API.
struct AuditReport {
  uint64_t allocated_memory_bytes = 0;     // what the allocators hold
  uint64_t replica_memory_bytes = 0;       // what live + detached replicas need
  uint64_t dropping_memory_bytes = 0;      // ranges freed once nodes drop them
  uint64_t held_memory_bytes = 0;          // freed, held for location grants
  uint64_t ssd_used_bytes = 0;             // the registry's SSD accounting
  uint64_t replica_disk_bytes = 0;         // sum of local_disk replica sizes
  uint64_t total_refcnt = 0;               // pins on live replicas
  uint64_t detached_replicas = 0;          // removed but still pinned
  uint64_t tasks = 0;                      // offload + promotion tasks booked
  uint64_t filling_group_bytes = 0;        // DRAM of groups filling, summed
  int64_t filling_group_bytes_booked = 0;  // the running total kept for it
  bool consistent() const {
    return allocated_memory_bytes == replica_memory_bytes +
                                         dropping_memory_bytes +
                                         held_memory_bytes &&
           ssd_used_bytes == replica_disk_bytes &&
           static_cast<int64_t>(filling_group_bytes) ==
               filling_group_bytes_booked;
  }
};

}  // namespace mooncake_tier
