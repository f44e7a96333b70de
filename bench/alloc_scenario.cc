#include "bench/alloc_scenario.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_units.h"
#include "base/space_allocator.h"

namespace mooncake_tier::bench {
namespace {

constexpr uint64_t kCapacity = 1ull << 30;
constexpr uint64_t kAlignment = 64;
// Share of fill-phase steps that free a random live block.
constexpr uint64_t kFreePercent = 40;
// Before the timed churn the segment is trimmed to this fill, so most
// allocations succeed and the free space is fragmented by earlier frees.
constexpr double kChurnFill = 0.85;
constexpr uint64_t kDefaultChurnPairs = 500'000;
constexpr uint64_t kAllocSeed = 0x6d6f6f6e;

// The baseline: free extents ordered by offset, the first one large enough
// found by a linear scan; frees coalesce with both neighbours.
//
// Thread safety: not thread-safe.
class FirstFitAllocator {
 public:
  FirstFitAllocator(uint64_t capacity, uint64_t alignment)
      : alignment_(alignment), capacity_(capacity & ~(alignment - 1)) {
    free_.emplace(0, capacity_);
  }

  std::optional<uint64_t> Allocate(uint64_t size) {
    const uint64_t need = RoundUp(size);
    if (need == 0) return std::nullopt;
    auto it = std::find_if(free_.begin(), free_.end(),
                           [need](const auto& e) { return e.second >= need; });
    if (it == free_.end()) return std::nullopt;
    const uint64_t offset = it->first;
    if (it->second == need) {
      free_.erase(it);
    } else {
      // Carve from the front: re-key the node instead of reallocating it.
      auto hint = std::next(it);
      auto node = free_.extract(it);
      node.key() += need;
      node.mapped() -= need;
      free_.insert(hint, std::move(node));
    }
    allocated_ += need;
    return offset;
  }

  bool Free(uint64_t offset, uint64_t size) {
    const uint64_t len = RoundUp(size);
    uint64_t start = offset;
    uint64_t end = offset + len;
    auto next = free_.lower_bound(offset);
    if (len == 0 || len > allocated_ ||
        (next != free_.end() && next->first < end)) {
      return false;
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      const uint64_t prev_end = prev->first + prev->second;
      if (prev_end > start) return false;
      if (prev_end == start) {
        start = prev->first;
        free_.erase(prev);
      }
    }
    if (next != free_.end() && next->first == end) {
      end += next->second;
      next = free_.erase(next);
    }
    free_.emplace_hint(next, start, end - start);
    allocated_ -= len;
    return true;
  }

  uint64_t capacity() const { return capacity_; }
  uint64_t allocated_bytes() const { return allocated_; }
  size_t free_extent_count() const { return free_.size(); }

 private:
  uint64_t RoundUp(uint64_t size) const {
    return (size + alignment_ - 1) & ~(alignment_ - 1);
  }

  const uint64_t alignment_;
  const uint64_t capacity_;
  uint64_t allocated_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> size
};

enum class Mix { kKvBlocks, kUniform64k };

std::string_view MixName(Mix mix) {
  return mix == Mix::kKvBlocks ? "kv_blocks" : "uniform_64k";
}

// kv_blocks: 64 KiB .. 2 MiB in powers of two, each +-6.25% jitter, like
// KV blocks of different layer shapes and token counts.
uint64_t DrawSize(Mix mix, std::mt19937_64& rng) {
  if (mix == Mix::kUniform64k) return 64 * kKiB;
  const uint64_t base = (64 * kKiB) << (rng() % 6);
  return base - base / 16 + rng() % (base / 8);
}

// One churn step: free the live block picked by `pick`, allocate `size`.
struct Step {
  uint64_t size;
  uint64_t pick;
};

std::vector<Step> MakeChurnSteps(Mix mix, uint64_t pairs) {
  std::mt19937_64 rng(kAllocSeed + 1);
  std::vector<Step> steps(pairs);
  for (Step& step : steps) step = {DrawSize(mix, rng), rng()};
  return steps;
}

struct Block {
  uint64_t offset;
  uint64_t size;
};

// Frees the live block `pick` selects; false if the allocator refused.
template <typename Allocator>
bool FreePicked(Allocator& alloc, std::vector<Block>& live, uint64_t pick) {
  const size_t index = pick % live.size();
  const Block block = live[index];
  live[index] = live.back();
  live.pop_back();
  return alloc.Free(block.offset, block.size);
}

struct AllocFigures {
  bool ok = true;
  double utilisation_at_failure = 0;
  size_t free_extents_at_failure = 0;
  double ops_per_s = 0;
  uint64_t churn_failures = 0;
};

// Allocates with kFreePercent random frees interleaved until the first
// allocation fails; records the fill and fragmentation at that point.
template <typename Allocator>
void FillUntilFailure(Allocator& alloc, Mix mix, std::vector<Block>& live,
                      AllocFigures& out) {
  std::mt19937_64 rng(kAllocSeed);
  for (;;) {
    const bool free_one = rng() % 100 < kFreePercent;
    const uint64_t size = DrawSize(mix, rng);
    const uint64_t pick = rng();
    if (free_one && !live.empty()) {
      out.ok = FreePicked(alloc, live, pick) && out.ok;
      continue;
    }
    const std::optional<uint64_t> offset = alloc.Allocate(size);
    if (!offset) break;
    live.push_back({*offset, size});
  }
  out.utilisation_at_failure =
      static_cast<double>(alloc.allocated_bytes()) / alloc.capacity();
  out.free_extents_at_failure = alloc.free_extent_count();
}

// Trims to kChurnFill, then times one free and one allocation per step.
template <typename Allocator>
void Churn(Allocator& alloc, std::vector<Block>& live,
           std::span<const Step> steps, AllocFigures& out) {
  std::mt19937_64 rng(kAllocSeed + 2);
  while (!live.empty() && alloc.allocated_bytes() > kChurnFill * kCapacity) {
    out.ok = FreePicked(alloc, live, rng()) && out.ok;
  }
  const auto start = std::chrono::steady_clock::now();
  for (const Step& step : steps) {
    if (!live.empty()) out.ok = FreePicked(alloc, live, step.pick) && out.ok;
    const std::optional<uint64_t> offset = alloc.Allocate(step.size);
    if (offset) {
      live.push_back({*offset, step.size});
    } else {
      ++out.churn_failures;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  out.ops_per_s = seconds > 0 ? 2.0 * steps.size() / seconds : 0;
}

template <typename Allocator>
AllocFigures Measure(Mix mix, std::span<const Step> steps) {
  Allocator alloc(kCapacity, kAlignment);
  std::vector<Block> live;
  AllocFigures figures;
  FillUntilFailure(alloc, mix, live, figures);
  Churn(alloc, live, steps, figures);
  return figures;
}

bool RunMix(ResultSink& sink, Mix mix, uint64_t pairs) {
  sink.Progress("alloc: " + std::string(MixName(mix)) + ", " +
                std::to_string(pairs) + " churn pairs");
  const std::vector<Step> steps = MakeChurnSteps(mix, pairs);
  const AllocFigures best_fit = Measure<SpaceAllocator>(mix, steps);
  const AllocFigures first_fit = Measure<FirstFitAllocator>(mix, steps);
  sink.Emit({
      {"scenario", "alloc"},
      {"mix", MixName(mix)},
      {"capacity_bytes", kCapacity},
      {"alignment", kAlignment},
      {"churn_ops", 2 * pairs},
      {"ops_per_s", best_fit.ops_per_s},
      {"churn_alloc_failures", best_fit.churn_failures},
      {"utilisation_at_first_failure", best_fit.utilisation_at_failure},
      {"free_extents_at_failure", best_fit.free_extents_at_failure},
      {"baseline_first_fit_ops_per_s", first_fit.ops_per_s},
      {"baseline_churn_alloc_failures", first_fit.churn_failures},
      {"baseline_utilisation_at_first_failure",
       first_fit.utilisation_at_failure},
      {"baseline_free_extents_at_failure", first_fit.free_extents_at_failure},
      {"speedup", first_fit.ops_per_s > 0
                      ? best_fit.ops_per_s / first_fit.ops_per_s
                      : 0.0},
  });
  if (!best_fit.ok) sink.Progress("alloc: SpaceAllocator refused a free");
  if (!first_fit.ok) sink.Progress("alloc: the baseline refused a free");
  return best_fit.ok && first_fit.ok;
}

}  // namespace

int RunAllocScenario(const CommonOptions& options, ResultSink& sink) {
  const uint64_t pairs =
      std::max<uint64_t>(1, std::llround(kDefaultChurnPairs * options.scale));
  bool ok = true;
  for (Mix mix : {Mix::kKvBlocks, Mix::kUniform64k}) {
    ok = RunMix(sink, mix, pairs) && ok;
  }
  return ok ? 0 : 1;
}

}  // namespace mooncake_tier::bench
