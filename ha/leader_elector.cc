#include "ha/leader_elector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace mooncake_tier::ha {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr milliseconds kFirstRetry(50);
// A failure that repeats is logged again after this long at most.
constexpr std::chrono::seconds kLogEvery(10);
constexpr size_t kMaxClusterName = 128;
// Leases this elector held lately; their keys may linger in the view for a
// moment after the elector let them go.
constexpr size_t kPastLeasesKept = 8;

// Doubling waits between attempts against an unreachable etcd.
class Backoff {
 public:
  explicit Backoff(milliseconds max) : max_(max) { Reset(); }
  milliseconds Next() {
    const milliseconds delay = next_;
    next_ = std::min(next_ * 2, max_);
    return delay;
  }
  void Reset() { next_ = std::min(kFirstRetry, max_); }

 private:
  const milliseconds max_;
  milliseconds next_{0};
};

// Logs a failing call the first time and then at most once per kLogEvery
// while it keeps failing, and once when it works again: an etcd outage
// must not flood the log. One per thread and call.
class FailureLog {
 public:
  FailureLog(const std::string& election, std::string what)
      : election_(election), what_(std::move(what)) {}

  void Failed(const Status& status) {
    ++streak_;
    const SteadyClock::time_point now = SteadyClock::now();
    if (streak_ > 1 && now - last_logged_ < kLogEvery) return;
    last_logged_ = now;
    spdlog::warn("election '{}': {} failed ({} in a row): {}", election_, what_,
                 streak_, status.ToString());
  }
  void Succeeded() {
    if (streak_ == 0) return;
    spdlog::info("election '{}': {} works again after {} failures", election_,
                 what_, streak_);
    streak_ = 0;
  }

 private:
  const std::string& election_;
  const std::string what_;
  uint64_t streak_ = 0;
  SteadyClock::time_point last_logged_;
};

bool ValidClusterName(std::string_view cluster) {
  if (cluster.empty() || cluster.size() > kMaxClusterName) return false;
  return std::all_of(cluster.begin(), cluster.end(),
                     [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

int64_t Nanos(TimePoint t) {
  return std::chrono::duration_cast<Duration>(t.time_since_epoch()).count();
}

}  // namespace

std::string_view StepDownReasonName(StepDownReason reason) {
  switch (reason) {
    case StepDownReason::kLeaseLost:
      return "lease_lost";
    case StepDownReason::kWindowLapsed:
      return "window_lapsed";
    case StepDownReason::kKeyLost:
      return "key_lost";
    case StepDownReason::kResigned:
      return "resigned";
    case StepDownReason::kStopped:
      return "stopped";
  }
  return "unknown";
}

std::string_view ElectorRoleName(ElectorRole role) {
  switch (role) {
    case ElectorRole::kIdle:
      return "idle";
    case ElectorRole::kAcquiringLease:
      return "acquiring_lease";
    case ElectorRole::kCampaigning:
      return "campaigning";
    case ElectorRole::kLeading:
      return "leading";
    case ElectorRole::kStopped:
      return "stopped";
  }
  return "unknown";
}

void LeaseWindow::Confirmed(TimePoint sent, Duration ttl) {
  const TimePoint until = sent + ttl - margin_;
  if (until > valid_until_) valid_until_ = until;
}

// ---------------------------------------------------------------------------
// Construction, Start, Stop

std::string LeaderElector::ElectionName(std::string_view cluster) {
  return "/mooncake-tier/" + std::string(cluster) + "/leader";
}

Result<std::unique_ptr<LeaderElector>> LeaderElector::Create(
    LeaderElectorOptions options, LeaderElectorCallbacks callbacks) {
  if (!ValidClusterName(options.cluster)) {
    return Status::InvalidArgument(
        "cluster name '" + options.cluster +
        "': expected 1-128 printable characters, no space or '/'");
  }
  if (options.value.empty())
    return Status::InvalidArgument("a candidate needs a value");
  if (options.lease_ttl < std::chrono::seconds(1)) {
    return Status::InvalidArgument("lease TTL must be at least 1 s");
  }
  const milliseconds ttl = options.lease_ttl;
  if (options.safety_margin == milliseconds::zero()) {
    options.safety_margin = ttl / 4;
  }
  if (options.renew_interval == milliseconds::zero()) {
    options.renew_interval = ttl / 4;
  }
  if (options.safety_margin < milliseconds::zero() ||
      options.safety_margin >= ttl) {
    return Status::InvalidArgument(
        "safety margin must be within (0, lease TTL)");
  }
  const milliseconds window = ttl - options.safety_margin;
  if (options.renew_interval < milliseconds::zero() ||
      options.renew_interval >= window) {
    return Status::InvalidArgument(
        "renew interval must be within (0, lease TTL - margin)");
  }
  if (options.max_retry_backoff <= milliseconds::zero()) {
    return Status::InvalidArgument("max retry backoff must be > 0");
  }
  if (options.clock == nullptr)
    return Status::InvalidArgument("no clock given");
  options.etcd.call_timeout =
      std::min(options.etcd.call_timeout, window - options.renew_interval);
  options.etcd.watch_idle_timeout =
      std::min<milliseconds>(options.etcd.watch_idle_timeout, ttl);
  MT_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client,
                      EtcdClient::Create(options.etcd));
  return std::unique_ptr<LeaderElector>(new LeaderElector(
      std::move(options), std::move(callbacks), std::move(client)));
}

LeaderElector::LeaderElector(LeaderElectorOptions options,
                             LeaderElectorCallbacks callbacks,
                             std::unique_ptr<EtcdClient> client)
    : options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      election_(ElectionName(options_.cluster)),
      view_prefix_(election_ + "/"),
      client_(std::move(client)),
      window_(options_.safety_margin) {}

LeaderElector::~LeaderElector() { Stop(); }

Status LeaderElector::Start() {
  MutexLock lock(&mu_);
  if (started_ || stop_) {
    return Status(ErrorReason::kNotApplicable,
                  "election '" + election_ + "': elector already started");
  }
  started_ = true;
  role_ = ElectorRole::kAcquiringLease;
  elector_thread_ = std::thread([this] { Run(); });
  renew_thread_ = std::thread([this] { RenewLoop(); });
  watch_thread_ = std::thread([this] { WatchLoop(); });
  return Status::Ok();
}

void LeaderElector::Stop() { Shutdown(/*abandon=*/false); }

void LeaderElector::AbandonForTest() { Shutdown(/*abandon=*/true); }

void LeaderElector::Shutdown(bool abandon) {
  MutexLock serial(&shutdown_mu_);
  std::shared_ptr<CallCanceller> campaign;
  {
    MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
    abandon_ = abandon;
    // A killed process's term ends only when its window does.
    if (!abandon) leading_term_.store(0);
    campaign = campaign_cancel_;
    changed_.SignalAll();
    if (!started_) {
      role_ = ElectorRole::kStopped;
      return;
    }
  }
  if (campaign != nullptr) campaign->Cancel();
  watch_cancel_.Cancel();
  elector_thread_.join();
  renew_thread_.join();
  watch_thread_.join();
  MutexLock lock(&mu_);
  role_ = ElectorRole::kStopped;
}

bool LeaderElector::StopRequested() const {
  MutexLock lock(&mu_);
  return stop_;
}

bool LeaderElector::WaitUnlessStopped(milliseconds delay) {
  const SteadyClock::time_point until = SteadyClock::now() + delay;
  MutexLock lock(&mu_);
  while (!stop_) {
    const SteadyClock::time_point now = SteadyClock::now();
    if (now >= until) return true;
    changed_.WaitFor(until - now);
  }
  return false;
}

// ---------------------------------------------------------------------------
// Queries

bool LeaderElector::Leading(Term* term) const {
  const Term t = leading_term_.load();
  if (t == 0) return false;
  const int64_t until = valid_until_ns_.load();
  // The term is cleared before another lease's window is published: an
  // unchanged term means `until` is this term's window.
  if (leading_term_.load() != t) return false;
  if (Nanos(options_.clock->Now()) >= until) return false;
  if (term != nullptr) *term = t;
  return true;
}

std::optional<LeaderKey> LeaderElector::LeadingKey() const {
  Term term = 0;
  if (!Leading(&term)) return std::nullopt;
  MutexLock lock(&mu_);
  if (leader_key_.revision != term) return std::nullopt;
  return leader_key_;
}

TimePoint LeaderElector::LeaseValidUntil() const {
  return TimePoint(Duration(valid_until_ns_.load()));
}

std::optional<LeaderInfo> LeaderElector::CurrentLeader() const {
  MutexLock lock(&mu_);
  return CurrentLeaderLocked();
}

std::optional<LeaderInfo> LeaderElector::WaitForLeader(
    milliseconds timeout) const {
  const SteadyClock::time_point until = SteadyClock::now() + timeout;
  MutexLock lock(&mu_);
  while (true) {
    std::optional<LeaderInfo> leader = CurrentLeaderLocked();
    if (leader) return leader;
    const SteadyClock::time_point now = SteadyClock::now();
    if (now >= until) return std::nullopt;
    // Bounded: a window that lapses signals nobody.
    changed_.WaitFor(
        std::min<SteadyClock::duration>(until - now, milliseconds(50)));
  }
}

std::optional<LeaderInfo> LeaderElector::CurrentLeaderLocked() const {
  Term term = 0;
  if (Leading(&term)) return LeaderInfo{options_.value, term};
  const Candidate* first = nullptr;
  for (const auto& [key, candidate] : view_) {
    if (first == nullptr ||
        candidate.create_revision < first->create_revision) {
      first = &candidate;
    }
  }
  // Our own key first while we do not lead: nobody leads until it goes.
  if (first == nullptr || OwnLeaseLocked(first->lease)) return std::nullopt;
  return LeaderInfo{first->value, first->create_revision};
}

bool LeaderElector::OwnLeaseLocked(int64_t lease) const {
  if (lease == 0) return false;
  if (lease == lease_ || lease == leader_key_.lease) return true;
  return std::find(past_leases_.begin(), past_leases_.end(), lease) !=
             past_leases_.end() ||
         std::find(stale_leases_.begin(), stale_leases_.end(), lease) !=
             stale_leases_.end();
}

LeaderElectorStats LeaderElector::Stats() const {
  MutexLock lock(&mu_);
  LeaderElectorStats stats = stats_;
  stats.role = role_;
  Term term = 0;
  stats.term = Leading(&term) ? term : 0;
  return stats;
}

void LeaderElector::Resign() {
  MutexLock lock(&mu_);
  if (role_ != ElectorRole::kLeading) return;
  resign_requested_ = true;
  leading_term_.store(0);
  changed_.SignalAll();
}

// ---------------------------------------------------------------------------
// The elector's thread: lease, campaign, lead, step down, again.

void LeaderElector::Run() {
  Backoff backoff(options_.max_retry_backoff);
  FailureLog grant_log(election_, "lease grant");
  FailureLog campaign_log(election_, "campaign");
  int64_t lease = 0;
  while (!StopRequested()) {
    if (lease == 0) {
      Result<int64_t> granted = AcquireLease();
      if (!granted.ok()) {
        grant_log.Failed(granted.status());
        {
          MutexLock lock(&mu_);
          ++stats_.etcd_errors;
        }
        WaitUnlessStopped(backoff.Next());
        continue;
      }
      grant_log.Succeeded();
      lease = *granted;
    }
    Result<LeaderKey> won = CampaignWith(lease);
    if (won.ok()) {
      campaign_log.Succeeded();
      backoff.Reset();
      if (!Announce(*won)) {
        ReleaseLease(lease, /*revoke=*/true);
        lease = 0;
        continue;
      }
      std::optional<StepDownReason> reason = LeadUntilDeposed(*won);
      if (!reason) return;  // abandoned: leave etcd alone
      ReleaseLease(lease, *reason != StepDownReason::kLeaseLost);
      lease = 0;
      continue;
    }
    const ErrorReason why = won.status().reason();
    bool lease_lost;
    {
      MutexLock lock(&mu_);
      lease_lost = lease_lost_;
    }
    if (lease_lost) {  // a renewal said so: a new lease at once
      ReleaseLease(lease, /*revoke=*/false);
      lease = 0;
      continue;
    }
    // ABORTED: stopping (the loop ends). TIMEOUT: campaign_timeout passed
    // with others still ahead; nothing is wrong, campaign again.
    if (why == ErrorReason::kAborted || why == ErrorReason::kTimeout) continue;
    if (why == ErrorReason::kObjectNotFound) {
      // The lease ended or the candidate was withdrawn while waiting.
      ReleaseLease(lease, /*revoke=*/true);
      lease = 0;
    } else {
      campaign_log.Failed(won.status());
      MutexLock lock(&mu_);
      ++stats_.etcd_errors;
    }
    WaitUnlessStopped(backoff.Next());
  }
  bool abandoned;
  {
    MutexLock lock(&mu_);
    abandoned = abandon_;
  }
  if (!abandoned && lease != 0) ReleaseLease(lease, /*revoke=*/true);
}

Result<int64_t> LeaderElector::AcquireLease() {
  std::vector<int64_t> stale;
  {
    MutexLock lock(&mu_);
    role_ = ElectorRole::kAcquiringLease;
    stale = stale_leases_;
  }
  // A lease of an earlier term may still hold the first key of the
  // election (etcd restarts a lease's TTL when it restarts): revoke it, or
  // every candidate, this one included, would wait for it.
  for (int64_t old : stale) {
    const Status revoked = client_->RevokeLease(old);
    if (!revoked.ok() && revoked.reason() != ErrorReason::kObjectNotFound) {
      if (revoked.reason() == ErrorReason::kUnavailable ||
          revoked.reason() == ErrorReason::kTimeout) {
        return revoked;  // etcd unreachable: a grant would fail too
      }
      spdlog::warn("election '{}': giving up revoking lease {}: {}", election_,
                   old, revoked.ToString());
    }
    MutexLock lock(&mu_);
    std::erase(stale_leases_, old);
  }
  const TimePoint sent = options_.clock->Now();
  MT_ASSIGN_OR_RETURN(LeaseGrant grant,
                      client_->GrantLease(options_.lease_ttl.count()));
  MutexLock lock(&mu_);
  lease_ = grant.id;
  lease_lost_ = false;
  window_.Reset();
  window_.Confirmed(sent, std::chrono::seconds(grant.ttl_seconds));
  PublishWindowLocked();
  ++stats_.leases_granted;
  role_ = ElectorRole::kCampaigning;
  changed_.SignalAll();  // the renewal thread takes it up
  return grant.id;
}

Result<LeaderKey> LeaderElector::CampaignWith(int64_t lease) {
  auto cancel = std::make_shared<CallCanceller>();
  {
    MutexLock lock(&mu_);
    // Checked under the lock that Stop and the renewal thread take to read
    // campaign_cancel_: either they see this canceller or it sees them.
    if (stop_ || lease_lost_) {
      return Status(ErrorReason::kAborted, "stopping or lease lost");
    }
    campaign_cancel_ = cancel;
    role_ = ElectorRole::kCampaigning;
  }
  Result<LeaderKey> won =
      client_->Campaign(election_, lease, options_.value, cancel.get());
  MutexLock lock(&mu_);
  campaign_cancel_.reset();
  return won;
}

bool LeaderElector::Announce(const LeaderKey& key) {
  MutexLock lock(&mu_);
  if (stop_) return false;
  if (lease_lost_ || lease_ != key.lease ||
      !window_.ValidAt(options_.clock->Now())) {
    spdlog::warn("election '{}': won term {} but {}; campaigning again",
                 election_, key.revision,
                 lease_lost_ || lease_ != key.lease
                     ? "the lease is gone"
                     : "no renewal was confirmed within the window");
    return false;
  }
  leader_key_ = key;
  key_lost_ = false;
  window_lapsed_ = false;
  resign_requested_ = false;
  role_ = ElectorRole::kLeading;
  ++stats_.elections_won;
  leading_term_.store(key.revision);
  // The view may already know the key is gone (deleted by someone else
  // between the campaign's answer and now).
  CheckOwnKeyLocked();
  changed_.SignalAll();
  return true;
}

std::optional<StepDownReason> LeaderElector::LeadUntilDeposed(
    const LeaderKey& key) {
  const Term term = key.revision;
  spdlog::info("election '{}': '{}' leads, term {}", election_, options_.value,
               term);
  if (callbacks_.on_elected) callbacks_.on_elected(term);
  StepDownReason reason;
  {
    MutexLock lock(&mu_);
    while (true) {
      if (stop_) {
        if (abandon_) return std::nullopt;
        reason = StepDownReason::kStopped;
        break;
      }
      if (resign_requested_) {
        reason = StepDownReason::kResigned;
        break;
      }
      if (lease_lost_) {
        reason = StepDownReason::kLeaseLost;
        break;
      }
      if (key_lost_) {
        reason = StepDownReason::kKeyLost;
        break;
      }
      const TimePoint now = options_.clock->Now();
      if (window_lapsed_ || !window_.ValidAt(now)) {
        reason = StepDownReason::kWindowLapsed;
        break;
      }
      // Renewals signal; the bound also serves a clock driven by hand.
      changed_.WaitFor(std::min<Duration>(window_.valid_until() - now,
                                          options_.renew_interval));
    }
    leading_term_.store(0);
    leader_key_ = LeaderKey{};
    role_ = stop_ ? ElectorRole::kStopped : ElectorRole::kAcquiringLease;
    ++stats_.step_downs[size_t(reason)];
    changed_.SignalAll();
  }
  spdlog::warn("election '{}': '{}' no longer leads term {}: {}", election_,
               options_.value, term, StepDownReasonName(reason));
  if (callbacks_.on_deposed) callbacks_.on_deposed(term, reason);
  return reason;
}

void LeaderElector::ReleaseLease(int64_t lease, bool revoke) {
  bool reachable = false;
  {
    MutexLock lock(&mu_);
    if (lease_ == lease) {
      // etcd confirmed the lease within the window: it will likely answer
      // a revoke at once. Otherwise do not wait on it here.
      reachable = window_.ValidAt(options_.clock->Now());
      lease_ = 0;
      window_.Reset();
      PublishWindowLocked();
    }
    past_leases_.push_back(lease);
    if (past_leases_.size() > kPastLeasesKept) past_leases_.pop_front();
    if (!revoke) return;
    if (!reachable) {
      // Left to AcquireLease; when stopping, to expire on its own.
      if (!stop_) stale_leases_.push_back(lease);
      return;
    }
  }
  const Status revoked = client_->RevokeLease(lease);
  if (revoked.ok() || revoked.reason() == ErrorReason::kObjectNotFound) return;
  spdlog::warn("election '{}': revoking lease {} failed: {}", election_, lease,
               revoked.ToString());
  MutexLock lock(&mu_);
  if (!stop_) stale_leases_.push_back(lease);
}

// ---------------------------------------------------------------------------
// The renewal thread.

void LeaderElector::RenewLoop() {
  FailureLog log(election_, "lease renewal");
  int64_t last_lease = 0;
  SteadyClock::time_point next_send;
  while (true) {
    const int64_t lease = NextRenewal(&last_lease, &next_send);
    if (lease == 0) return;
    // The window counts from the send: etcd restarts the TTL when it
    // handles the renewal, which is later.
    const TimePoint sent = options_.clock->Now();
    const Result<int64_t> ttl = client_->RenewLease(lease);
    std::shared_ptr<CallCanceller> campaign;
    const bool failed =
        !ttl.ok() && ttl.status().reason() != ErrorReason::kObjectNotFound;
    if (failed) {
      log.Failed(ttl.status());
    } else {
      log.Succeeded();
    }
    {
      MutexLock lock(&mu_);
      if (failed) ++stats_.renewals_failed;
      if (lease_ != lease) continue;  // let go meanwhile
      if (ttl.ok()) {
        ++stats_.renewals_ok;
        // A term whose window lapsed stays over even though the lease
        // lived: its leader has already seen Leading() false.
        if (role_ == ElectorRole::kLeading &&
            !window_.ValidAt(options_.clock->Now())) {
          DeposeLocked(&window_lapsed_);
        }
        window_.Confirmed(sent, std::chrono::seconds(*ttl));
        PublishWindowLocked();
      } else if (!failed) {  // etcd says the lease is gone
        DeposeLocked(&lease_lost_);
        campaign = campaign_cancel_;  // it campaigns with that lease: end it
      }
      changed_.SignalAll();
    }
    if (campaign != nullptr) campaign->Cancel();
  }
}

int64_t LeaderElector::NextRenewal(int64_t* last_lease,
                                   SteadyClock::time_point* next_send) {
  MutexLock lock(&mu_);
  while (!stop_) {
    if (lease_ == 0 || lease_lost_) {
      changed_.Wait();
      continue;
    }
    const SteadyClock::time_point now = SteadyClock::now();
    if (lease_ != *last_lease) {  // its grant was its first confirmation
      *last_lease = lease_;
      *next_send = now + options_.renew_interval;
    }
    if (now >= *next_send) {
      *next_send = now + options_.renew_interval;
      return lease_;
    }
    changed_.WaitFor(*next_send - now);
  }
  return 0;
}

// ---------------------------------------------------------------------------
// The leader view: the election's keys, read once and then watched.

void LeaderElector::WatchLoop() {
  Backoff backoff(options_.max_retry_backoff);
  FailureLog log(election_, "leader watch");
  while (!StopRequested()) {
    Status status;
    bool delivered = false;
    Result<PrefixRange> range = client_->GetPrefix(view_prefix_);
    if (range.ok()) {
      ResetView(*range);
      status = client_->WatchPrefix(
          view_prefix_, range->revision + 1,
          [&](const WatchBatch& batch) {
            if (!delivered) log.Succeeded();
            delivered = true;
            ApplyToView(batch);
            return true;
          },
          &watch_cancel_);
      if (status.reason() == ErrorReason::kAborted) return;
    } else {
      status = range.status();
    }
    if (delivered) backoff.Reset();
    // A compacted start revision is routine: read again at once.
    if (status.reason() != ErrorReason::kNotApplicable) {
      log.Failed(status);
      MutexLock lock(&mu_);
      ++stats_.etcd_errors;
    }
    WaitUnlessStopped(backoff.Next());
  }
}

void LeaderElector::ResetView(const PrefixRange& range) {
  MutexLock lock(&mu_);
  view_.clear();
  for (const KeyValue& kv : range.kvs) {
    view_[kv.key] = Candidate{kv.value, kv.create_revision, kv.lease};
  }
  view_revision_ = range.revision;
  CheckOwnKeyLocked();
  changed_.SignalAll();
}

void LeaderElector::ApplyToView(const WatchBatch& batch) {
  MutexLock lock(&mu_);
  for (const WatchBatch::Event& event : batch.events) {
    if (event.type == WatchBatch::Event::Type::kPut) {
      view_[event.kv.key] =
          Candidate{event.kv.value, event.kv.create_revision, event.kv.lease};
    } else {
      view_.erase(event.kv.key);
    }
    // Not batch.revision: a "created" message's header revision can run
    // ahead of events still to come.
    view_revision_ = std::max(view_revision_, event.kv.mod_revision);
  }
  CheckOwnKeyLocked();
  changed_.SignalAll();
}

void LeaderElector::CheckOwnKeyLocked() {
  if (role_ != ElectorRole::kLeading || key_lost_) return;
  // The view can only vouch for revisions it has seen.
  if (view_revision_ < leader_key_.revision) return;
  auto it = view_.find(leader_key_.key);
  if (it != view_.end() && it->second.create_revision == leader_key_.revision) {
    return;
  }
  DeposeLocked(&key_lost_);
}

void LeaderElector::DeposeLocked(bool* flag) {
  *flag = true;
  if (role_ == ElectorRole::kLeading) leading_term_.store(0);
  changed_.SignalAll();
}

void LeaderElector::PublishWindowLocked() {
  valid_until_ns_.store(Nanos(window_.valid_until()));
}

}  // namespace mooncake_tier::ha
