#pragma once

// How often each key was read lately, approximately: a Count-Min Sketch that
// the promotion admission consults on the get path. Fixed memory, no per-key
// state, never forgets a key outright but lets old popularity fade.
//
// Shape. `depth` rows of `width` counters (width a power of two). A key,
// given as its 64-bit hash, owns one counter per row; its estimate is the
// smallest of them. Colliding keys only ever add to a counter, so the
// estimate never falls below the true count (see Concurrency for the two
// exceptions); with N increments since the counters were last zero, each row
// over-counts a key by N/width on average, and the smallest of `depth`
// independent rows exceeds the truth by more than e*N/width with probability
// at most e^-depth (about 2% at depth 4).
//
// Counters. 8 bits, saturating at kMaxCount (255), packed eight to a 64-bit
// word. Why not TinyLFU's 4 bits: a 4-bit counter stops at 15, which would
// cap promotion_admission_threshold at 15 and make every moderately hot key
// tie with every other one; 8 bits let the estimate reach far past any
// threshold an operator would set (default 2) while 4096 x 4 still costs
// only 16 KiB.
//
// Update rule: conservative. An increment raises only the key's counters
// that hold its current minimum (each to minimum + 1); counters already above
// it, inflated by other keys, are left alone. The estimate is the same as
// with "add one everywhere", but the shared counters grow much more slowly,
// which matters at the low counts the admission threshold looks at.
//
// Aging. Every `sample_size` calls to Increment (default width x depth, the
// architecture's choice) every counter is halved, so a key's weight decays
// by half per period and a key not read for a few periods falls back to 0.
// The thread whose Increment completes the period does the halving, word by
// word, before it returns.
//
// Rows. The caller's hash is first run through a 64-bit finaliser (so weak
// hashes such as small integers spread out), then row r takes the top
// log2(width) bits of (mixed * M_r) for a fixed odd constant M_r per row.
// Multiply-and-take-the-top-bits with a randomly drawn odd multiplier is a
// universal hash family (two distinct inputs meet with probability at most
// 2/width), and the M_r are unrelated constants, so the rows behave as
// independent draws from that family for any input not built against them.
//
// Concurrency. Thread-safe, lock-free: counters are relaxed atomic words
// updated by compare-and-swap, so increments of different keys never lose
// counts, even when they share a counter. The result is approximate in two
// documented ways, both harmless for admission:
//   - increments of the same key that overlap in time may count as one (both
//     read the same minimum and raise it to the same value): it takes a
//     burst on one key to lose counts, and that key then reaches the
//     threshold on a following read;
//   - a halving is not atomic across the table: an increment that overlaps
//     it may be halved or not, and may restore a counter of its own key the
//     halving had just lowered.
// Clear() races the same way with concurrent increments.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mooncake_tier {

class AdmissionSketch {
 public:
  static constexpr uint32_t kDefaultWidth = 4096;
  static constexpr uint32_t kDefaultDepth = 4;
  static constexpr uint32_t kMinWidth = 8;  // one counter word per row
  static constexpr uint32_t kMaxWidth = 1u << 24;
  static constexpr uint32_t kMaxDepth = 8;
  static constexpr uint32_t kMaxCount = 255;

  struct Stats {
    uint64_t increments = 0;  // calls to Increment since construction
    uint64_t halvings = 0;    // aging passes done

    // Calls visitor(name, value) for every counter, in declaration order.
    template <typename Visitor>
    void VisitCounters(Visitor&& visitor) const {
      visitor(std::string_view("increments"), increments);
      visitor(std::string_view("halvings"), halvings);
    }
  };

  // "" when a sketch of this shape can be built, else why not.
  // REQUIRES of the constructor: width a power of two in
  // [kMinWidth, kMaxWidth]; depth in [1, kMaxDepth].
  static std::string ValidateShape(uint32_t width, uint32_t depth);

  // `sample_size`: calls to Increment between halvings; 0 means
  // width * depth. Throws std::invalid_argument when ValidateShape fails
  // (a start-up configuration error).
  explicit AdmissionSketch(uint32_t width = kDefaultWidth,
                           uint32_t depth = kDefaultDepth,
                           uint64_t sample_size = 0);
  AdmissionSketch(const AdmissionSketch&) = delete;
  AdmissionSketch& operator=(const AdmissionSketch&) = delete;

  // Counts one access to the key whose hash is `hash` (HashKey(key), or
  // HashedKey::hash) and returns its estimate including this access, in
  // [1, kMaxCount]. When this call completes a period it halves the table
  // first and returns the estimate after the halving.
  uint32_t Increment(uint64_t hash);

  // The key's estimate, in [0, kMaxCount]; counts nothing.
  uint32_t Estimate(uint64_t hash) const;

  // Sets every counter to zero. Stats and the position in the aging period
  // are kept.
  void Clear();

  Stats stats() const;
  uint32_t width() const { return width_; }
  uint32_t depth() const { return depth_; }
  uint64_t sample_size() const { return sample_size_; }

 private:
  // Where one of the key's counters lives: a word and a bit offset in it.
  struct Slot {
    uint32_t word;
    uint32_t shift;
  };

  // The key's counter in each of the depth_ rows.
  void Locate(uint64_t hash, Slot* slots) const;
  uint32_t Read(const Slot& slot) const;
  // Raises the counter at `slot` to `target` unless it already holds more.
  void RaiseTo(const Slot& slot, uint32_t target);
  void HalveAll();

  const uint32_t width_;
  const uint32_t depth_;
  const uint32_t width_bits_;  // log2(width_)
  const uint64_t sample_size_;
  const uint32_t words_count_;
  const std::unique_ptr<std::atomic<uint64_t>[]> words_;
  std::atomic<uint64_t> increments_{0};
  std::atomic<uint64_t> halvings_{0};
};

}  // namespace mooncake_tier
