#include "core/hit_ratio_estimator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "base/hash_mix.h"

namespace mooncake_tier {
namespace {

// T when every unit is sampled: t is a 32-bit number.
constexpr uint64_t kFullThreshold = uint64_t{1} << 32;

// XORed into the caller's hash before mixing, so the sample is not the set
// of units whose plain MixHash(hash) is small, which other users of the same
// hash might favour or avoid. Any constant would do.
constexpr uint64_t kSampleSalt = 0x6a09e667f3bcc909ull;

uint32_t TagOf(uint64_t unit_hash) {
  return static_cast<uint32_t>(MixHash(unit_hash ^ kSampleSalt) >> 32);
}

// Bytes from a product of doubles, saturating where a cast would overflow.
uint64_t ToBytes(double bytes) {
  constexpr double kMax = 0x1p64;
  return bytes >= kMax ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

// Validates before any member is built from the options.
const HitRatioEstimator::Options& Checked(
    const HitRatioEstimator::Options& options) {
  const std::string error = HitRatioEstimator::ValidateOptions(options);
  if (!error.empty()) throw std::invalid_argument(error);
  return options;
}

}  // namespace

std::string HitRatioEstimator::ValidateOptions(const Options& options) {
  if (options.scales.empty()) {
    return "hit ratio estimator needs at least one scale";
  }
  for (const double scale : options.scales) {
    if (!std::isfinite(scale) || scale <= 0) {
      return "hit ratio estimator scales must be finite and > 0, got " +
             std::to_string(scale);
    }
  }
  // Written so that NaN fails too.
  if (!(options.initial_rate > 0 && options.initial_rate <= 1)) {
    return "hit ratio estimator initial_rate must be in (0, 1], got " +
           std::to_string(options.initial_rate);
  }
  if (options.max_sampled_units < 1 ||
      options.max_sampled_units > kMaxSampledUnits) {
    return "hit ratio estimator max_sampled_units must be in [1, " +
           std::to_string(kMaxSampledUnits) + "], got " +
           std::to_string(options.max_sampled_units);
  }
  return "";
}

HitRatioEstimator::HitRatioEstimator(Options options)
    : options_(Checked(options)) {
  // At least 1, so that a tiny rate still samples something.
  threshold_ = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::llround(
             options_.initial_rate * static_cast<double>(kFullThreshold))));
  caches_.resize(options_.scales.size());
  for (size_t i = 0; i < caches_.size(); ++i) {
    caches_[i].scale = options_.scales[i];
  }
}

double HitRatioEstimator::sampling_rate() const {
  return static_cast<double>(threshold_) / static_cast<double>(kFullThreshold);
}

void HitRatioEstimator::SetCapacity(uint64_t bytes) {
  capacity_ = bytes;
  ApplyCapacities();
}

void HitRatioEstimator::Reference(uint64_t unit_hash, uint64_t bytes) {
  if (options_.window_references != 0 &&
      ++window_position_ >= options_.window_references) {
    Halve();
    window_position_ = 0;
  }
  all_references_ += 1;
  const uint32_t tag = TagOf(unit_hash);
  if (tag >= threshold_) return;

  references_ += 1;
  window_samples_ += 1;
  const auto found = index_.find(unit_hash);
  const uint32_t id =
      found == index_.end() ? Track(unit_hash, tag, bytes) : found->second;
  const uint64_t old_bytes = units_[id].bytes;
  units_[id].bytes = bytes;
  for (MiniCache& cache : caches_) {
    Link& link = cache.links[id];
    if (link.resident) {
      cache.hits += 1;
      // `used` still holds the old size; Unlink takes out the new one.
      cache.used = cache.used - old_bytes + bytes;
      Unlink(cache, id);
      if (bytes <= cache.capacity) PushFront(cache, id);
    } else if (bytes <= cache.capacity) {
      PushFront(cache, id);
    } else {
      continue;
    }
    // The referenced unit is at the front and fits, so it is never evicted
    // here; units behind it are.
    EvictToCapacity(cache);
  }
  if (units_[id].resident_in == 0) Untrack(id);
  if (index_.size() > options_.max_sampled_units) LowerRate();
}

void HitRatioEstimator::Forget(uint64_t unit_hash) {
  if (TagOf(unit_hash) >= threshold_) return;
  const auto found = index_.find(unit_hash);
  if (found != index_.end()) Drop(found->second);
}

std::vector<HitRatioEstimator::Point> HitRatioEstimator::Estimate() const {
  std::vector<Point> points;
  points.reserve(caches_.size());
  // SHARDS_adj: the sampled references the rate predicts. references_ was
  // rescaled to the current rate at every change, so the plain count of
  // references times the current rate is what it should be on average.
  const double expected = all_references_ * sampling_rate();
  for (const MiniCache& cache : caches_) {
    Point point;
    point.scale = cache.scale;
    point.capacity_bytes =
        ToBytes(cache.scale * static_cast<double>(capacity_));
    if (references_ > 0 && expected > 0) {
      point.hit_ratio = std::clamp(
          (cache.hits + expected - references_) / expected, 0.0, 1.0);
    }
    point.sampled_references =
        static_cast<uint64_t>(std::llround(window_samples_));
    point.resident_units = cache.units;
    points.push_back(point);
  }
  return points;
}

void HitRatioEstimator::Reset() {
  window_position_ = 0;
  references_ = 0;
  window_samples_ = 0;
  all_references_ = 0;
  for (MiniCache& cache : caches_) cache.hits = 0;
}

uint32_t HitRatioEstimator::Track(uint64_t hash, uint32_t tag, uint64_t bytes) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(units_.size());
    units_.emplace_back();
    for (MiniCache& cache : caches_) cache.links.emplace_back();
  }
  Unit& unit = units_[id];
  unit.hash = hash;
  unit.bytes = bytes;
  unit.tag = tag;
  unit.resident_in = 0;
  index_.emplace(hash, id);
  HeapPush(id);
  return id;
}

void HitRatioEstimator::Untrack(uint32_t id) {
  index_.erase(units_[id].hash);
  HeapRemove(id);
  free_.push_back(id);
}

void HitRatioEstimator::Drop(uint32_t id) {
  for (MiniCache& cache : caches_) {
    if (cache.links[id].resident) Unlink(cache, id);
  }
  Untrack(id);
}

void HitRatioEstimator::PushFront(MiniCache& cache, uint32_t id) {
  Link& link = cache.links[id];
  link.prev = kNone;
  link.next = cache.front;
  link.resident = true;
  if (cache.front != kNone) {
    cache.links[cache.front].prev = id;
  } else {
    cache.back = id;
  }
  cache.front = id;
  cache.used += units_[id].bytes;
  ++cache.units;
  ++units_[id].resident_in;
}

void HitRatioEstimator::Unlink(MiniCache& cache, uint32_t id) {
  Link& link = cache.links[id];
  if (link.prev != kNone) {
    cache.links[link.prev].next = link.next;
  } else {
    cache.front = link.next;
  }
  if (link.next != kNone) {
    cache.links[link.next].prev = link.prev;
  } else {
    cache.back = link.prev;
  }
  link = Link{};
  cache.used -= units_[id].bytes;
  --cache.units;
  --units_[id].resident_in;
}

void HitRatioEstimator::EvictToCapacity(MiniCache& cache) {
  while (cache.used > cache.capacity) {
    const uint32_t victim = cache.back;
    Unlink(cache, victim);
    if (units_[victim].resident_in == 0) Untrack(victim);
  }
}

void HitRatioEstimator::ApplyCapacities() {
  const double sampled_bytes = static_cast<double>(capacity_) * sampling_rate();
  for (MiniCache& cache : caches_) {
    cache.capacity = ToBytes(cache.scale * sampled_bytes);
    EvictToCapacity(cache);
  }
}

void HitRatioEstimator::LowerRate() {
  const uint64_t old_threshold = threshold_;
  // Every tracked tag is below the old T, so this lowers T, and the loop
  // drops at least the unit on top of the heap.
  threshold_ = units_[heap_.front()].tag;
  while (!heap_.empty() && units_[heap_.front()].tag >= threshold_) {
    Drop(heap_.front());
  }
  const double factor =
      static_cast<double>(threshold_) / static_cast<double>(old_threshold);
  references_ *= factor;
  for (MiniCache& cache : caches_) cache.hits *= factor;
  ApplyCapacities();
}

void HitRatioEstimator::Halve() {
  references_ *= 0.5;
  window_samples_ *= 0.5;
  all_references_ *= 0.5;
  for (MiniCache& cache : caches_) cache.hits *= 0.5;
}

void HitRatioEstimator::HeapPlace(uint32_t pos, uint32_t id) {
  heap_[pos] = id;
  units_[id].heap_pos = pos;
}

void HitRatioEstimator::HeapPush(uint32_t id) {
  heap_.push_back(id);
  units_[id].heap_pos = static_cast<uint32_t>(heap_.size() - 1);
  HeapSiftUp(units_[id].heap_pos);
}

void HitRatioEstimator::HeapRemove(uint32_t id) {
  const uint32_t pos = units_[id].heap_pos;
  const uint32_t last = heap_.back();
  heap_.pop_back();
  if (last == id) return;
  HeapPlace(pos, last);
  // The moved unit may belong above or below its new place, not both.
  HeapSiftUp(pos);
  HeapSiftDown(units_[last].heap_pos);
}

void HitRatioEstimator::HeapSiftUp(uint32_t pos) {
  const uint32_t id = heap_[pos];
  while (pos > 0) {
    const uint32_t parent = (pos - 1) / 2;
    if (units_[heap_[parent]].tag >= units_[id].tag) break;
    HeapPlace(pos, heap_[parent]);
    pos = parent;
  }
  HeapPlace(pos, id);
}

void HitRatioEstimator::HeapSiftDown(uint32_t pos) {
  const uint32_t id = heap_[pos];
  const size_t size = heap_.size();
  while (true) {
    size_t child = 2 * size_t{pos} + 1;
    if (child >= size) break;
    if (child + 1 < size &&
        units_[heap_[child + 1]].tag > units_[heap_[child]].tag) {
      ++child;
    }
    if (units_[heap_[child]].tag <= units_[id].tag) break;
    HeapPlace(pos, heap_[child]);
    pos = static_cast<uint32_t>(child);
  }
  HeapPlace(pos, id);
}

}  // namespace mooncake_tier
