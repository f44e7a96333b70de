#include "client/location_cache.h"

#include <algorithm>
#include <functional>

#include "absl/strings/string_view.h"

namespace mooncake_tier {

LocationCache::LocationCache(size_t capacity, const Clock* clock)
    : per_stripe_(std::max<size_t>(1, (capacity + kStripes - 1) / kStripes)),
      clock_(clock),
      stripes_(new Stripe[kStripes]) {}

LocationCache::Stripe& LocationCache::StripeOf(std::string_view key) {
  // High bits: the maps inside use the low ones.
  return stripes_[std::hash<std::string_view>{}(key) >> 60 & (kStripes - 1)];
}

std::optional<LocationCache::Entry> LocationCache::Find(std::string_view key,
                                                        TimePoint now,
                                                        bool* report_due) {
  Stripe& stripe = StripeOf(key);
  {
    MutexLock lock(&stripe.mu);
    auto it = stripe.entries.find(absl::string_view(key.data(), key.size()));
    if (it != stripe.entries.end()) {
      if (now < it->second.valid_until) {
        if (report_due != nullptr) {
          *report_due = it->second.reported_at <= now - kReportEvery;
          if (*report_due) it->second.reported_at = now;
        }
        Entry entry = it->second;
        hits_.fetch_add(1, std::memory_order_relaxed);
        return entry;
      }
      stripe.entries.erase(it);
      expired_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

void LocationCache::Insert(std::string_view key, const Entry& entry) {
  Stripe& stripe = StripeOf(key);
  MutexLock lock(&stripe.mu);
  auto it = stripe.entries.find(absl::string_view(key.data(), key.size()));
  if (it != stripe.entries.end()) {
    const TimePoint reported_at = it->second.reported_at;
    it->second = entry;
    // A renewed grant: the master saw the read that renewed it.
    it->second.reported_at = std::max(reported_at, entry.reported_at);
  } else {
    if (stripe.entries.size() >= per_stripe_) {
      // An expired entry if the first few hold one, else the first.
      const TimePoint now = clock_->Now();
      auto victim = stripe.entries.begin();
      size_t looked = 0;
      for (auto i = stripe.entries.begin();
           i != stripe.entries.end() && looked < 8; ++i, ++looked) {
        if (i->second.valid_until <= now) {
          victim = i;
          break;
        }
      }
      stripe.entries.erase(victim);
      dropped_.fetch_add(1, std::memory_order_relaxed);
    }
    stripe.entries.emplace(std::string(key), entry);
  }
  inserted_.fetch_add(1, std::memory_order_relaxed);
}

void LocationCache::Erase(std::string_view key) {
  Stripe& stripe = StripeOf(key);
  MutexLock lock(&stripe.mu);
  if (auto it = stripe.entries.find(absl::string_view(key.data(), key.size()));
      it != stripe.entries.end()) {
    stripe.entries.erase(it);
  }
}

uint64_t LocationCache::GroupHash(std::string_view group_id) {
  return std::hash<std::string_view>{}(group_id) | 1;
}

void LocationCache::Clear() {
  for (size_t i = 0; i < kStripes; ++i) {
    MutexLock lock(&stripes_[i].mu);
    stripes_[i].entries.clear();
  }
}

LocationCache::Stats LocationCache::stats() const {
  Stats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.expired = expired_.load(std::memory_order_relaxed);
  s.inserted = inserted_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < kStripes; ++i) {
    MutexLock lock(&stripes_[i].mu);
    s.entries += stripes_[i].entries.size();
  }
  return s;
}

}  // namespace mooncake_tier
