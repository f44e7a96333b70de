#include "core/admission_sketch.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "base/hash_mix.h"

namespace mooncake_tier {
namespace {

constexpr uint32_t kCountersPerWord = 8;
constexpr uint32_t kCounterBits = 8;
constexpr uint64_t kCounterMask = 0xff;
// Every counter of a word shifted right by one, without the bit that slides
// in from the counter above.
constexpr uint64_t kHalveMask = 0x7f7f7f7f7f7f7f7full;

// One odd multiplier per row, drawn once at random; any odd constants with
// well-spread bits would do.
constexpr uint64_t kRowMultipliers[AdmissionSketch::kMaxDepth] = {
    0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
    0xd6e8feb86659fd93ull, 0xa0761d6478bd642full, 0xe7037ed1a0b428dbull,
    0x8ebc6af09c88c6e3ull, 0x589965cc75374cc3ull,
};

uint64_t WithCounter(uint64_t word, uint32_t shift, uint32_t value) {
  return (word & ~(kCounterMask << shift)) |
         (static_cast<uint64_t>(value) << shift);
}

// Validates before any member is sized from the arguments.
uint32_t CheckedWidth(uint32_t width, uint32_t depth) {
  const std::string error = AdmissionSketch::ValidateShape(width, depth);
  if (!error.empty()) throw std::invalid_argument(error);
  return width;
}

}  // namespace

std::string AdmissionSketch::ValidateShape(uint32_t width, uint32_t depth) {
  if (width < kMinWidth || width > kMaxWidth || !std::has_single_bit(width)) {
    return "admission sketch width must be a power of two in [" +
           std::to_string(kMinWidth) + ", " + std::to_string(kMaxWidth) +
           "], got " + std::to_string(width);
  }
  if (depth < 1 || depth > kMaxDepth) {
    return "admission sketch depth must be in [1, " +
           std::to_string(kMaxDepth) + "], got " + std::to_string(depth);
  }
  return "";
}

AdmissionSketch::AdmissionSketch(uint32_t width, uint32_t depth,
                                 uint64_t sample_size)
    : width_(CheckedWidth(width, depth)),
      depth_(depth),
      width_bits_(static_cast<uint32_t>(std::countr_zero(width))),
      sample_size_(sample_size == 0 ? uint64_t{width} * depth : sample_size),
      words_count_(width / kCountersPerWord * depth),
      words_(new std::atomic<uint64_t>[words_count_]) {
  for (uint32_t i = 0; i < words_count_; ++i) {
    words_[i].store(0, std::memory_order_relaxed);
  }
}

void AdmissionSketch::Locate(uint64_t hash, Slot* slots) const {
  const uint64_t mixed = MixHash(hash);
  for (uint32_t row = 0; row < depth_; ++row) {
    const uint64_t column =
        (mixed * kRowMultipliers[row]) >> (64 - width_bits_);
    const uint64_t counter = uint64_t{row} * width_ + column;
    slots[row].word = static_cast<uint32_t>(counter / kCountersPerWord);
    slots[row].shift =
        static_cast<uint32_t>(counter % kCountersPerWord) * kCounterBits;
  }
}

uint32_t AdmissionSketch::Read(const Slot& slot) const {
  return static_cast<uint32_t>(
      (words_[slot.word].load(std::memory_order_relaxed) >> slot.shift) &
      kCounterMask);
}

void AdmissionSketch::RaiseTo(const Slot& slot, uint32_t target) {
  std::atomic<uint64_t>& word = words_[slot.word];
  uint64_t seen = word.load(std::memory_order_relaxed);
  while (((seen >> slot.shift) & kCounterMask) < target) {
    // On failure `seen` is reloaded: a neighbour in the same word changed,
    // or another increment already raised this counter.
    if (word.compare_exchange_weak(seen, WithCounter(seen, slot.shift, target),
                                   std::memory_order_relaxed)) {
      return;
    }
  }
}

uint32_t AdmissionSketch::Increment(uint64_t hash) {
  Slot slots[kMaxDepth];
  Locate(hash, slots);
  uint32_t minimum = kMaxCount;
  for (uint32_t row = 0; row < depth_; ++row) {
    minimum = std::min(minimum, Read(slots[row]));
  }
  const uint32_t target = std::min(minimum + 1, kMaxCount);
  if (minimum < kMaxCount) {
    for (uint32_t row = 0; row < depth_; ++row) RaiseTo(slots[row], target);
  }
  // Saturated keys still count towards the period: aging follows traffic.
  const uint64_t done = increments_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (done % sample_size_ != 0) return target;
  HalveAll();
  halvings_.fetch_add(1, std::memory_order_relaxed);
  return std::max<uint32_t>(Estimate(hash), 1);
}

uint32_t AdmissionSketch::Estimate(uint64_t hash) const {
  Slot slots[kMaxDepth];
  Locate(hash, slots);
  uint32_t minimum = kMaxCount;
  for (uint32_t row = 0; row < depth_; ++row) {
    minimum = std::min(minimum, Read(slots[row]));
  }
  return minimum;
}

void AdmissionSketch::HalveAll() {
  for (uint32_t i = 0; i < words_count_; ++i) {
    std::atomic<uint64_t>& word = words_[i];
    uint64_t seen = word.load(std::memory_order_relaxed);
    // A CAS rather than a plain store so that an increment landing between
    // the load and the write is halved with the rest, not wiped out.
    while (seen != 0 &&
           !word.compare_exchange_weak(seen, (seen >> 1) & kHalveMask,
                                       std::memory_order_relaxed)) {
    }
  }
}

void AdmissionSketch::Clear() {
  for (uint32_t i = 0; i < words_count_; ++i) {
    words_[i].store(0, std::memory_order_relaxed);
  }
}

AdmissionSketch::Stats AdmissionSketch::stats() const {
  Stats stats;
  stats.increments = increments_.load(std::memory_order_relaxed);
  stats.halvings = halvings_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace mooncake_tier
