#include "bench/trace_sim.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <limits>
#include <list>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace mooncake_tier::bench {
namespace {

using nlohmann::json;

Status LineError(size_t line, const std::string& what) {
  return Status(ErrorReason::kInvalidArgument,
                "line " + std::to_string(line) + ": " + what);
}

bool IsBlank(const std::string& line) {
  return line.find_first_not_of(" \t\r\n") == std::string::npos;
}

// One non-blank line of a trace.
Result<TraceRequest> ParseRequestLine(const std::string& text, size_t line) {
  const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return LineError(line, "not valid JSON");
  if (!object.is_object()) return LineError(line, "not a JSON object");
  TraceRequest request;
  const auto timestamp = object.find("timestamp");
  if (timestamp == object.end()) {
    return LineError(line, "no \"timestamp\" field");
  }
  if (!timestamp->is_number_unsigned() ||
      timestamp->get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return LineError(line, "\"timestamp\" is " + timestamp->dump() +
                               ", not a non-negative integer (ms)");
  }
  request.timestamp_ms = timestamp->get<int64_t>();
  const auto hash_ids = object.find("hash_ids");
  if (hash_ids == object.end()) {
    return LineError(line, "no \"hash_ids\" field");
  }
  if (!hash_ids->is_array()) {
    return LineError(line, "\"hash_ids\" is not an array");
  }
  request.blocks.reserve(hash_ids->size());
  for (size_t i = 0; i < hash_ids->size(); ++i) {
    const json& id = (*hash_ids)[i];
    if (!id.is_number_unsigned()) {
      return LineError(line, "\"hash_ids\"[" + std::to_string(i) + "] is " +
                                 id.dump() + ", not a non-negative integer");
    }
    request.blocks.push_back(id.get<uint64_t>());
  }
  return request;
}

// The cache models. Access(block, position) references `block` at
// `position` in the flattened reference sequence: returns whether it was
// cached, and leaves it cached (inserting it, evicting if full).

class InfiniteCache {
 public:
  bool Access(uint64_t block, size_t /*position*/) {
    return !blocks_.insert(block).second;
  }

 private:
  std::unordered_set<uint64_t> blocks_;
};

class LruCache {
 public:
  explicit LruCache(uint64_t capacity) : capacity_(capacity) {}

  bool Access(uint64_t block, size_t /*position*/) {
    if (capacity_ == 0) return false;
    const auto it = index_.find(block);
    if (it != index_.end()) {
      recency_.splice(recency_.begin(), recency_, it->second);
      return true;
    }
    if (index_.size() == capacity_) {
      index_.erase(recency_.back());
      recency_.pop_back();
    }
    recency_.push_front(block);
    index_.emplace(block, recency_.begin());
    return false;
  }

 private:
  const uint64_t capacity_;
  std::list<uint64_t> recency_;  // most recent first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> index_;
};

// S3-FIFO (trace_sim.h). Blocks are one unit each, so queue lengths are
// occupancy. Every cached block is in exactly one of small_ and main_, and
// no key is both cached and in the ghost.
class S3FifoCache {
 public:
  explicit S3FifoCache(uint64_t capacity)
      : capacity_(capacity),
        small_capacity_(capacity == 0 ? 0
                                      : std::max<uint64_t>(1, capacity / 10)),
        ghost_capacity_(capacity - small_capacity_) {}

  bool Access(uint64_t block, size_t /*position*/) {
    if (capacity_ == 0) return false;
    const auto it = frequency_.find(block);
    if (it != frequency_.end()) {
      if (it->second < kMaxFrequency) ++it->second;
      return true;
    }
    // Look the key up before evicting: the eviction may add to the ghost
    // and push its oldest key out, which may be this one.
    const bool was_ghost = Forget(block);
    if (frequency_.size() == capacity_) EvictOne();
    (was_ghost ? main_ : small_).push_back(block);
    frequency_.emplace(block, 0);
    return false;
  }

 private:
  static constexpr uint8_t kMaxFrequency = 3;

  // Takes eviction steps until one block has left the cache. Ends: a step
  // from small_ either evicts or moves a block to main_ for good, and a
  // step from main_ either evicts or spends a counter unit that a hit paid
  // for, so the steps are O(1) amortized per reference.
  void EvictOne() {
    while (true) {
      if (small_.size() >= small_capacity_ || main_.empty()) {
        const uint64_t head = small_.front();
        small_.pop_front();
        const auto it = frequency_.find(head);
        if (it->second > 0) {
          it->second = 0;
          main_.push_back(head);
          continue;
        }
        frequency_.erase(it);
        Remember(head);
        return;
      }
      const uint64_t head = main_.front();
      main_.pop_front();
      const auto it = frequency_.find(head);
      if (it->second > 0) {
        --it->second;
        main_.push_back(head);
        continue;
      }
      frequency_.erase(it);
      return;
    }
  }

  // Adds `block` to the ghost's tail, dropping its oldest key when full.
  void Remember(uint64_t block) {
    if (ghost_capacity_ == 0) return;
    if (ghost_index_.size() == ghost_capacity_) {
      ghost_index_.erase(ghost_.front());
      ghost_.pop_front();
    }
    ghost_.push_back(block);
    ghost_index_.emplace(block, std::prev(ghost_.end()));
  }

  // Removes `block` from the ghost; whether it was there.
  bool Forget(uint64_t block) {
    const auto it = ghost_index_.find(block);
    if (it == ghost_index_.end()) return false;
    ghost_.erase(it->second);
    ghost_index_.erase(it);
    return true;
  }

  const uint64_t capacity_;
  // The small queue's share: 1 or more, 0 only when capacity_ is.
  const uint64_t small_capacity_;
  const uint64_t ghost_capacity_;                    // main's capacity, in keys
  std::deque<uint64_t> small_;                       // oldest first
  std::deque<uint64_t> main_;                        // oldest first
  std::unordered_map<uint64_t, uint8_t> frequency_;  // of every cached block
  // Keys evicted from small_, oldest first; the ghost forgets from the
  // middle on a ghost hit, hence a list and an index into it.
  std::list<uint64_t> ghost_;
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> ghost_index_;
};

// CLOCK as a FIFO with reinsertion (trace_sim.h).
class ClockCache {
 public:
  explicit ClockCache(uint64_t capacity) : capacity_(capacity) {}

  bool Access(uint64_t block, size_t /*position*/) {
    if (capacity_ == 0) return false;
    const auto it = referenced_.find(block);
    if (it != referenced_.end()) {
      it->second = true;
      return true;
    }
    if (referenced_.size() == capacity_) EvictOne();
    fifo_.push_back(block);
    referenced_.emplace(block, false);
    return false;
  }

 private:
  // Ends within one round of the queue, since each reinsertion clears a
  // bit; each cleared bit was set by a hit, so the reinsertions are O(1)
  // amortized per reference.
  void EvictOne() {
    while (true) {
      const uint64_t head = fifo_.front();
      fifo_.pop_front();
      const auto it = referenced_.find(head);
      if (!it->second) {
        referenced_.erase(it);
        return;
      }
      it->second = false;
      fifo_.push_back(head);
    }
  }

  const uint64_t capacity_;
  std::deque<uint64_t> fifo_;  // cached blocks, oldest (the hand) first
  std::unordered_map<uint64_t, bool> referenced_;  // cached block -> bit
};

// Belady's MIN. Needs, for each position, the position of the next
// reference to the same block (kNever when there is none).
class BeladyCache {
 public:
  static constexpr size_t kNever = std::numeric_limits<size_t>::max();

  BeladyCache(uint64_t capacity, std::vector<size_t> next_use)
      : capacity_(capacity), next_use_(std::move(next_use)) {}

  bool Access(uint64_t block, size_t position) {
    if (capacity_ == 0) return false;
    const auto it = next_of_cached_.find(block);
    const bool cached = it != next_of_cached_.end();
    if (cached) {
      by_next_use_.erase({it->second, block});
    } else if (next_of_cached_.size() == capacity_) {
      const auto farthest = std::prev(by_next_use_.end());
      next_of_cached_.erase(farthest->second);
      by_next_use_.erase(farthest);
    }
    const size_t next = next_use_[position];
    next_of_cached_[block] = next;
    by_next_use_.insert({next, block});
    return cached;
  }

 private:
  const uint64_t capacity_;
  const std::vector<size_t> next_use_;
  // Cached blocks by their next reference; the last is the victim.
  std::set<std::pair<size_t, uint64_t>> by_next_use_;
  std::unordered_map<uint64_t, size_t> next_of_cached_;
};

// next[i]: the position of the next reference to the block referenced at
// position i of the flattened sequence, or BeladyCache::kNever.
std::vector<size_t> NextUsePositions(std::span<const TraceRequest> requests) {
  size_t total = 0;
  for (const TraceRequest& r : requests) total += r.blocks.size();
  std::vector<size_t> next(total, BeladyCache::kNever);
  std::unordered_map<uint64_t, size_t> later;  // block -> next position seen
  size_t position = total;
  for (auto r = requests.rbegin(); r != requests.rend(); ++r) {
    for (auto b = r->blocks.rbegin(); b != r->blocks.rend(); ++b) {
      --position;
      const auto [it, inserted] = later.try_emplace(*b, position);
      if (!inserted) {
        next[position] = it->second;
        it->second = position;
      }
    }
  }
  return next;
}

// Runs `cache` over `requests` under the prefix rule (trace_sim.h).
template <typename Cache>
CacheSimResult Replay(std::span<const TraceRequest> requests, Cache& cache) {
  CacheSimResult result;
  size_t position = 0;
  for (const TraceRequest& request : requests) {
    bool in_prefix = true;
    for (uint64_t block : request.blocks) {
      const bool cached = cache.Access(block, position++);
      in_prefix = in_prefix && cached;
      result.resident += cached ? 1 : 0;
      result.prefix_hits += in_prefix ? 1 : 0;
    }
    result.references += request.blocks.size();
  }
  return result;
}

}  // namespace

Result<Trace> ReadTrace(std::istream& in) {
  Trace trace;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (IsBlank(text)) continue;
    Result<TraceRequest> request = ParseRequestLine(text, line);
    if (!request.ok()) return request.status();
    trace.requests.push_back(std::move(request).value());
  }
  if (in.bad()) {
    return Status(ErrorReason::kIoError,
                  "read failed after line " + std::to_string(line));
  }
  return trace;
}

Result<Trace> ReadTraceFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status(ErrorReason::kIoError, "cannot open trace file '" + path +
                                             "': " + std::strerror(errno));
  }
  Result<Trace> trace = ReadTrace(in);
  if (!trace.ok()) {
    return Status(trace.status().reason(),
                  "trace file '" + path + "', " + trace.status().message());
  }
  return trace;
}

double CacheSimResult::HitRatio() const {
  return references > 0 ? static_cast<double>(prefix_hits) / references : 0;
}

CacheSimResult SimulateCache(std::span<const TraceRequest> requests,
                             EvictionPolicy policy, uint64_t capacity_blocks) {
  if (policy == EvictionPolicy::kLru) {
    LruCache cache(capacity_blocks);
    return Replay(requests, cache);
  }
  if (policy == EvictionPolicy::kS3Fifo) {
    S3FifoCache cache(capacity_blocks);
    return Replay(requests, cache);
  }
  if (policy == EvictionPolicy::kClock) {
    ClockCache cache(capacity_blocks);
    return Replay(requests, cache);
  }
  BeladyCache cache(capacity_blocks, NextUsePositions(requests));
  return Replay(requests, cache);
}

CacheSimResult SimulateInfiniteCache(std::span<const TraceRequest> requests) {
  InfiniteCache cache;
  return Replay(requests, cache);
}

}  // namespace mooncake_tier::bench
