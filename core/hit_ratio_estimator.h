#pragma once

// What object hit ratio the cache would have at a few multiples of its
// current size, estimated online from the references it serves: the numbers
// an operator wants before adding or removing DRAM.
//
// Method: spatially hashed sampling with miniature simulations (SHARDS,
// Waldspurger et al., FAST'15; "Cache Modeling and Optimization using
// Miniature Simulations", ATC'17). A unit (an object, or a group read as one
// unit) is in the sample when its mixed hash, read as a number t in
// [0, 2^32), is below a threshold T; the sampling rate is R = T / 2^32. The
// test depends on the unit only, so a sampled unit has all of its references
// sampled and an unsampled one none: the sampled references form the trace
// of a workload R times smaller. For each scale s the estimator runs an LRU
// cache of s * capacity * R bytes over that trace, units keeping their real
// sizes, and its hit ratio (hits / references, each reference counting once
// whatever its size) estimates that of an LRU cache of s * capacity bytes
// over the full trace.
//
// Mini caches. Byte-sized LRU: a referenced unit moves to the front, a new
// one enters at the front and units leave from the back until the bytes fit.
// A unit larger than a mini cache's capacity is not admitted to it (the
// reference is a miss and nothing is evicted for it), as a real cache would
// refuse an object larger than itself. One error of the method comes from
// here: a mini cache of a few hundred units cannot represent a
// full cache in which single units are a sizable share of the bytes.
//
// Adaptive rate, bounded memory. A unit is tracked while it is resident in
// at least one mini cache; at most `max_sampled_units` units are tracked, so
// no mini cache ever holds more. When a reference would push the tracked set
// past the bound, T is lowered to the largest t among the tracked units and
// every unit whose t is no longer below T is dropped (at least one, usually
// exactly one); the mini capacities shrink in proportion to the new rate,
// evicting from the back where the dropped units' bytes were not enough
// (adaptive SHARDS). The rate only ever goes down: after the workload or the
// capacity shrinks, build a new estimator to sample densely again. The
// steady rate is about max_sampled_units / (units that fit in the largest
// scale), the densest sample the memory bound allows.
//
// Adjustment (SHARDS_adj). The hit ratio reported is not hits / sampled
// references but (hits + E - n) / E, clamped to [0, 1], where n is the
// number of references sampled and E = R x all references is the number
// expected. On a skewed workload n strays from E mostly because one of the
// few hottest units is in the sample (n > E) or not (n < E), and a unit that
// hot is a hit at every scale; the adjustment takes its surplus out of, or
// its shortfall back into, the hits of every scale alike. Zipf(0.8) over
// 100k units sampled at 5%, 30 seeds: the root-mean-square error goes from
// 0.05-0.09 without it to 0.01-0.02 with it. At rate 1, n = E and the
// estimate is the exact simulation's hits / references. On a workload with
// no hot units (a loop) it can show a few hundredths of hits where there
// are none.
//
// Window. Every `window_references` calls to Reference (sampled or not), all
// counts are halved, so a reference made k windows ago weighs 2^-k and the
// estimates describe roughly the last one to two windows; Reset() starts
// counting from zero. The counts also follow the rate: when it drops from R
// to R', the counts so far are multiplied by R' / R, so that a reference
// sampled before the change weighs what a reference sampled after it does
// (each stands for 1 / R' references of the full trace).
//
// Hashes. The caller's 64-bit hash identifies the unit (two units with the
// same hash are one unit to the estimator). It is run through a salted
// 64-bit finaliser before the test, so sequential ids are fine and the
// sample is unrelated to stripes or sketch rows that read the same hash.
//
// Cost. An unsampled reference: a finaliser, a compare and a counter. A
// sampled one: a hash map lookup and, per scale, an O(1) list update plus
// its evictions (amortised O(1): a unit is evicted once per entry); units
// entering or leaving the tracked set also pay O(log n) in a heap of their
// t values. Memory: O(max_sampled_units * scales.size()).
//
// Thread safety: none. The caller serialises every call (the master holds a
// mutex around its estimator); const calls may run together only when no
// non-const call runs.
//
// Accuracy. A few hundredths of the exact LRU hit ratio once thousands of
// references are sampled (the skewed workload of hit_ratio_estimator_test,
// 200k references, over 30 seeds: errors up to 0.04 at scale 0.5 and 0.02
// at scale 4); the smallest scale,
// holding the fewest sampled units, is the noisiest. Until a mini cache has
// seen about its own capacity in references, its estimate carries the cold
// misses of a cache that is still filling, as the real cache did.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace mooncake_tier {

class HitRatioEstimator {
 public:
  struct Options {
    // Multiples of the cache's capacity to estimate, in the order Estimate()
    // reports them. REQUIRES: at least one; each finite and > 0.
    // Default: {0.5, 1, 2, 4}.
    std::vector<double> scales = {0.5, 1, 2, 4};

    // The sampling rate to start from; the estimator lowers it to stay
    // within max_sampled_units. 1 samples every unit (the mini caches are
    // then exact simulations). REQUIRES: in (0, 1].
    // Default: 0.1: a small working set is sampled densely, and until the
    // bound brings the rate down on a large one, nine references in ten
    // cost only the hash test.
    double initial_rate = 0.1;

    // Bound on the units tracked at once, hence on each mini cache.
    // REQUIRES: in [1, kMaxSampledUnits]. Default: 8192: about 100 bytes a
    // unit with four scales (under 1 MiB), and with the default scales the
    // rate settles where even the 0.5x mini cache holds about 1000 units.
    size_t max_sampled_units = 8192;

    // Calls to Reference between halvings of the counts; 0 never halves
    // (counts run from construction or the last Reset()). Default: 2^22.
    uint64_t window_references = uint64_t{1} << 22;
  };

  // The largest max_sampled_units: unit ids are 32-bit.
  static constexpr size_t kMaxSampledUnits = size_t{1} << 30;

  // One scale's estimate.
  struct Point {
    double scale = 0;
    // scale x the capacity last given to SetCapacity, in bytes.
    uint64_t capacity_bytes = 0;
    // The adjusted hit ratio (see Adjustment), in [0, 1]; 0 while no
    // reference has been sampled.
    double hit_ratio = 0;
    // Sampled references behind the estimate (halved with the window, not
    // rescaled with the rate); with fewer than a few thousand the estimate
    // is rough.
    uint64_t sampled_references = 0;
    // Sampled units resident in this scale's mini cache now.
    size_t resident_units = 0;
  };

  // "" when the options are valid, else what is wrong with them.
  static std::string ValidateOptions(const Options& options);

  // Throws std::invalid_argument when ValidateOptions fails (a start-up
  // configuration error). The capacity starts at 0 (every reference a miss)
  // until SetCapacity.
  explicit HitRatioEstimator(Options options);
  HitRatioEstimator(const HitRatioEstimator&) = delete;
  HitRatioEstimator& operator=(const HitRatioEstimator&) = delete;

  // The cache's current size in bytes. The mini caches follow: a shrink
  // evicts from the back of each at once, a growth leaves room to fill.
  void SetCapacity(uint64_t bytes);

  // One reference (a read) to the unit whose hash is `unit_hash`, `bytes`
  // large. When the unit is sampled, counts a hit or a miss at every scale
  // and updates the mini caches; else only advances the window. A resident
  // unit referenced with a new size counts a hit and takes the new size
  // (leaving a mini cache it no longer fits in).
  void Reference(uint64_t unit_hash, uint64_t bytes);

  // The unit left the store by removal (not by eviction, which the mini
  // caches model themselves): drops it from every mini cache, so that its
  // next reference is a miss. No-op for a unit not tracked.
  void Forget(uint64_t unit_hash);

  // One point per scale, in the order of Options::scales.
  std::vector<Point> Estimate() const;

  // Zeroes the counts (hits, references, the position in the window); the
  // mini caches' contents and the rate are kept, so counting resumes warm.
  void Reset();

  // R = T / 2^32, in (0, 1] (0 only if more than max_sampled_units units
  // had t = 0, which a well-mixed hash makes practically impossible).
  double sampling_rate() const;
  uint64_t capacity_bytes() const { return capacity_; }
  // Units resident in at least one mini cache; never above
  // max_sampled_units between calls.
  size_t tracked_units() const { return index_.size(); }
  const Options& options() const { return options_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  // A tracked unit; its index in units_ is its id.
  struct Unit {
    uint64_t hash = 0;
    uint64_t bytes = 0;
    uint32_t tag = 0;          // t: the top 32 bits of the mixed hash
    uint32_t heap_pos = 0;     // its place in heap_
    uint32_t resident_in = 0;  // mini caches holding it
  };

  // A unit's place in one mini cache's recency list.
  struct Link {
    uint32_t prev = kNone;  // towards the front (more recent)
    uint32_t next = kNone;  // towards the back
    bool resident = false;
  };

  struct MiniCache {
    double scale = 0;
    uint64_t capacity = 0;  // bytes: scale * capacity_ * rate
    uint64_t used = 0;      // bytes of the resident units
    uint32_t front = kNone;
    uint32_t back = kNone;
    size_t units = 0;
    double hits = 0;          // weighted like references_
    std::vector<Link> links;  // by unit id
  };

  // The id of a new tracked unit, resident nowhere yet.
  uint32_t Track(uint64_t hash, uint32_t tag, uint64_t bytes);
  // Stops tracking a unit resident nowhere.
  void Untrack(uint32_t id);
  // Removes a unit from every mini cache and stops tracking it.
  void Drop(uint32_t id);

  void PushFront(MiniCache& cache, uint32_t id);
  // Takes the unit out of the cache's list and its bytes out of `used`.
  void Unlink(MiniCache& cache, uint32_t id);
  // Evicts from the back until the bytes fit, untracking units that were
  // resident in this cache only.
  void EvictToCapacity(MiniCache& cache);
  // Recomputes every mini capacity from capacity_ and the rate, evicting.
  void ApplyCapacities();
  // Lowers T until the tracked set is within max_sampled_units.
  void LowerRate();
  void Halve();

  void HeapPush(uint32_t id);
  void HeapRemove(uint32_t id);
  void HeapSiftUp(uint32_t pos);
  void HeapSiftDown(uint32_t pos);
  void HeapPlace(uint32_t pos, uint32_t id);

  const Options options_;
  uint64_t threshold_;  // T; sampled iff tag < T. At most 2^32.
  uint64_t capacity_ = 0;
  uint64_t window_position_ = 0;  // Reference calls since the last halving
  double references_ = 0;         // sampled, weighted (halvings, rate)
  double window_samples_ = 0;     // sampled, halved only
  double all_references_ = 0;     // every Reference call, halved only

  std::vector<MiniCache> caches_;
  std::vector<Unit> units_;  // by id; ids in free_ are unused
  std::vector<uint32_t> free_;
  absl::flat_hash_map<uint64_t, uint32_t> index_;  // unit hash -> id
  std::vector<uint32_t> heap_;                     // ids, max-heap on tag
};

}  // namespace mooncake_tier
