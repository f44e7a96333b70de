#pragma once

// LeaderElector: elects one leader among the master processes of a cluster
// through etcd's election API (EtcdClient::Campaign), and tells each
// process, cheaply and at any moment, whether it may act as leader.
//
// Each elector holds a lease of `lease_ttl`, keeps it alive with one
// renewal every `renew_interval` (on a thread of its own, so a campaign
// blocked for minutes never delays one), and campaigns with it under the
// election "/mooncake-tier/<cluster>/leader". etcd answers the campaign
// once every earlier candidate's key is gone; the winner's term is its
// key's create revision, which only grows.
//
// Safety: a leader acts only inside its lease's safe window. A renewal
// SENT at t and confirmed by etcd keeps the lease at etcd until at least
// t + TTL (etcd restarts the TTL when it handles the renewal, after t), so
// no other candidate can win before then. The window ends `safety_margin`
// earlier, at t + TTL - margin, measured on `clock`: Leading() turns false
// there by itself, even if this process was paused or cut off from etcd
// and its threads never ran. The margin covers clock-rate differences and
// the time between a caller's Leading() check and its act. ha/README.md
// has the whole argument.
//
// The leader steps down (on_deposed, then campaigns again with a fresh
// lease) when etcd says its lease is gone, when its key is deleted, when
// the window lapses without a confirmed renewal, on Resign(), and on
// Stop().
//
// Thread safety: every method may be called from any thread. Callbacks run
// on the elector's own thread, one at a time, with no lock held; they must
// not call Stop() or AbandonForTest() (those join that thread).

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "ha/etcd_client.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::ha {

// A leader's term: the create revision of its election key. Terms only
// grow; 0 means none.
using Term = int64_t;

// Why a leader stopped leading.
enum class StepDownReason : uint8_t {
  kLeaseLost,     // a renewal answered that the lease is gone
  kWindowLapsed,  // no renewal confirmed within the safe window
  kKeyLost,       // the election key was deleted (not by this elector)
  kResigned,      // Resign()
  kStopped,       // Stop()
};
inline constexpr size_t kStepDownReasonCount = 5;
// "lease_lost", "window_lapsed", ... (for logs and metric labels).
std::string_view StepDownReasonName(StepDownReason reason);

// Where an elector is in its cycle:
//   kIdle -> (Start) kAcquiringLease -> kCampaigning -> kLeading
//   -> (step down) kAcquiringLease -> ... ; any -> (Stop) kStopped.
enum class ElectorRole : uint8_t {
  kIdle,            // not started
  kAcquiringLease,  // revoking leases of earlier terms, granting a new one
  kCampaigning,     // waiting in the election
  kLeading,
  kStopped,
};
std::string_view ElectorRoleName(ElectorRole role);

// The step-down deadline of one lease, as pure arithmetic so it can be
// tested on a ManualClock: valid until the latest confirmed renewal's SEND
// time + its TTL - margin. A reply that comes late moves nothing later than
// its request's send time allows; an older request's reply never moves the
// deadline back.
//
// Thread safety: none (the elector guards it).
class LeaseWindow {
 public:
  // REQUIRES: margin >= 0.
  explicit LeaseWindow(Duration margin) : margin_(margin) {}

  // Forgets the lease: not valid until a confirmation.
  void Reset() { valid_until_ = TimePoint::min(); }
  // etcd granted or renewed the lease, with `ttl`, in answer to a request
  // sent at `sent`.
  void Confirmed(TimePoint sent, Duration ttl);

  // TimePoint::min() when nothing was confirmed since Reset().
  TimePoint valid_until() const { return valid_until_; }
  bool ValidAt(TimePoint now) const { return now < valid_until_; }

 private:
  const Duration margin_;
  TimePoint valid_until_ = TimePoint::min();
};

// Who leads, as an elector last saw it.
struct LeaderInfo {
  std::string value;  // the leader's LeaderElectorOptions::value
  Term term = 0;
};

struct LeaderElectorOptions {
  // How to reach etcd. The elector overrides two fields: call_timeout is
  // cut to at most lease_ttl - safety_margin - renew_interval (a renewal
  // answered later than that could no longer keep the window open, and a
  // hung call must not hold up the next one), and watch_idle_timeout to at
  // most lease_ttl (how soon a silent etcd is noticed by the leader view).
  EtcdClientOptions etcd;

  // Names the election: "/mooncake-tier/<cluster>/leader".
  // REQUIRES: 1-128 printable ASCII characters other than space and '/'.
  std::string cluster;

  // What this candidate publishes when it leads: the address clients and
  // nodes are redirected to ("host:port"). REQUIRES: non-empty.
  std::string value;

  // TTL asked for the lease. etcd raises it to its minimum (1.5 election
  // timeouts rounded up to seconds: 2 s with etcd's default flags); the
  // elector then uses the TTL etcd granted. Default: 2 s.
  // REQUIRES: >= 1 s.
  std::chrono::seconds lease_ttl{2};

  // How much earlier than etcd could let the lease expire this leader
  // stops acting. Default (0): lease_ttl / 4.
  // REQUIRES: 0 < safety_margin < lease_ttl once defaulted.
  std::chrono::milliseconds safety_margin{0};

  // Time between renewals (from one send to the next). Default (0):
  // lease_ttl / 4. REQUIRES: 0 < renew_interval < lease_ttl - safety_margin
  // once defaulted (several renewals fit in each window).
  std::chrono::milliseconds renew_interval{0};

  // Longest pause between attempts while etcd is unreachable (the first
  // retry comes after 50 ms, then twice as long each time).
  // Default: 1 s. REQUIRES: > 0.
  std::chrono::milliseconds max_retry_backoff{1000};

  // Measures the safe window. Renewals and retries are paced in real time
  // whatever the clock. Not owned; must outlive the elector.
  // Default: SystemClock::Default(). REQUIRES: non-null.
  const Clock* clock = SystemClock::Default();
};

// Called on the elector's thread (see the class comment).
struct LeaderElectorCallbacks {
  // This candidate leads from now on, in `term`. Leading() is already true
  // (unless leadership ended at once: on_deposed then follows).
  std::function<void(Term term)> on_elected;
  // This candidate no longer leads `term`. Leading() is already false. On
  // Resign() and Stop() the lease is revoked only after this returns, so no
  // successor starts before the callback finished; after a lost lease, key
  // or window a successor may already lead.
  std::function<void(Term term, StepDownReason reason)> on_deposed;
};

// Counters for metrics (a snapshot).
struct LeaderElectorStats {
  ElectorRole role = ElectorRole::kIdle;
  Term term = 0;  // while Leading(), else 0
  uint64_t elections_won = 0;
  std::array<uint64_t, kStepDownReasonCount> step_downs{};  // by reason
  uint64_t leases_granted = 0;
  uint64_t renewals_ok = 0;
  uint64_t renewals_failed = 0;  // etcd unreachable or erring; not "gone"
  // Failed lease grants, campaigns and leader-view reads.
  uint64_t etcd_errors = 0;
};

class LeaderElector {
 public:
  // "/mooncake-tier/<cluster>/leader".
  static std::string ElectionName(std::string_view cluster);

  // INVALID_ARGUMENT when the options break a REQUIRES. Does not contact
  // etcd.
  static Result<std::unique_ptr<LeaderElector>> Create(
      LeaderElectorOptions options, LeaderElectorCallbacks callbacks = {});
  // Stop().
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts campaigning in the background; returns at once. An unreachable
  // etcd is retried for as long as it takes. NOT_APPLICABLE when already
  // started (an elector runs once).
  Status Start();

  // Whether this candidate leads now: elected, not stepped down, and the
  // safe window has not passed by the clock. Lock-free; check it right
  // before acting as leader. Sets *term when true.
  bool Leading(Term* term = nullptr) const;

  // End of the current lease's safe window (TimePoint::min() without a
  // lease). While leading, Leading() turns false there at the latest.
  TimePoint LeaseValidUntil() const;

  // The leader as last seen through a watch on the election, this
  // candidate included; nullopt when nobody leads (or this candidate's own
  // key is first but it does not lead, as when its lease outlives a step-
  // down). Changes reach it as soon as etcd reports them; while etcd is
  // unreachable it shows the last leader seen.
  std::optional<LeaderInfo> CurrentLeader() const;
  // Waits up to `timeout` for CurrentLeader() to have a value.
  std::optional<LeaderInfo> WaitForLeader(
      std::chrono::milliseconds timeout) const;

  // Steps down if leading (Leading() is false on return; on_deposed
  // follows on the elector's thread, then the lease is revoked), then
  // campaigns again, behind the candidates already waiting. Nothing when
  // not leading.
  void Resign();

  // Stops the elector: Leading() is false on return, a waiting campaign is
  // withdrawn, a held lease revoked (so a standby takes over at once; if
  // etcd was unreachable for the whole window it is left to expire), and
  // on_deposed(kStopped) has run if this candidate led. Returns at once
  // against a live etcd; against one that stopped answering it waits for
  // the calls already sent, which cannot be interrupted: one call timeout,
  // rarely two (500 ms each at TTL 1 s, 1 s at the default 2 s; measured
  // 500 ms). Idempotent.
  void Stop();

  // Stops every thread without telling etcd anything and without stepping
  // down, as if the process had been killed: the lease expires on its own,
  // and Leading() stays true until the window passes. For tests.
  void AbandonForTest();

  // This candidate's key in the election while it leads (its revision is
  // the term), for writes fenced on it (EtcdClient::FencedWrite); nullopt
  // otherwise.
  std::optional<LeaderKey> LeadingKey() const ABSL_LOCKS_EXCLUDED(mu_);

  LeaderElectorStats Stats() const;
  const std::string& election() const { return election_; }
  // The options after defaults were applied.
  const LeaderElectorOptions& options() const { return options_; }

 private:
  struct Candidate {
    std::string value;
    int64_t create_revision = 0;
    int64_t lease = 0;
  };

  LeaderElector(LeaderElectorOptions options, LeaderElectorCallbacks callbacks,
                std::unique_ptr<EtcdClient> client);

  void Shutdown(bool abandon) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- The elector's thread.
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // Revokes leases of earlier terms, then grants a new one and makes it
  // the current lease.
  Result<int64_t> AcquireLease() ABSL_LOCKS_EXCLUDED(mu_);
  Result<LeaderKey> CampaignWith(int64_t lease) ABSL_LOCKS_EXCLUDED(mu_);
  // Publishes leadership of `key` unless something ended it already.
  bool Announce(const LeaderKey& key) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until leadership ends, steps down and calls on_deposed; nullopt
  // when abandoned (nothing stepped down).
  std::optional<StepDownReason> LeadUntilDeposed(const LeaderKey& key)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stops renewing `lease`. `revoke`: revoke it now if etcd answered within
  // the window (else remember it for AcquireLease, unless stopping).
  void ReleaseLease(int64_t lease, bool revoke) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits `delay` (real time) or until Stop; false when stopping.
  bool WaitUnlessStopped(std::chrono::milliseconds delay)
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- The renewal thread.
  void RenewLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the current lease is due for renewal; 0 when stopping.
  int64_t NextRenewal(int64_t* last_lease,
                      std::chrono::steady_clock::time_point* next_send)
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- The leader-view thread.
  void WatchLoop() ABSL_LOCKS_EXCLUDED(mu_);
  void ResetView(const PrefixRange& range) ABSL_LOCKS_EXCLUDED(mu_);
  void ApplyToView(const WatchBatch& batch) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- Shared helpers.
  // Ends leadership at once (Leading() false) for `*flag`'s reason; the
  // elector's thread does the rest.
  void DeposeLocked(bool* flag) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Mirrors window_ into valid_until_ns_ for Leading().
  void PublishWindowLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deposes the leader when the view shows its key gone.
  void CheckOwnKeyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OwnLeaseLocked(int64_t lease) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<LeaderInfo> CurrentLeaderLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool StopRequested() const ABSL_LOCKS_EXCLUDED(mu_);

  const LeaderElectorOptions options_;
  const LeaderElectorCallbacks callbacks_;
  const std::string election_;     // the election's name
  const std::string view_prefix_;  // election_ + "/": its candidates' keys
  const std::unique_ptr<EtcdClient> client_;

  // Serialises Stop() and AbandonForTest().
  Mutex shutdown_mu_ ABSL_ACQUIRED_BEFORE(mu_);

  mutable Mutex mu_;
  // Signalled on every change below (stop, a lease, a renewal, the view).
  mutable CondVar changed_{&mu_};
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool abandon_ ABSL_GUARDED_BY(mu_) = false;
  ElectorRole role_ ABSL_GUARDED_BY(mu_) = ElectorRole::kIdle;

  // The lease being renewed (0: none) and its window.
  int64_t lease_ ABSL_GUARDED_BY(mu_) = 0;
  LeaseWindow window_ ABSL_GUARDED_BY(mu_);
  // Leases of earlier terms not known to be gone: they may hold a key that
  // blocks the election (a lease outlives an etcd restart), so they are
  // revoked before the next grant.
  std::vector<int64_t> stale_leases_ ABSL_GUARDED_BY(mu_);
  // The last few leases let go: their keys may linger in the view briefly.
  std::deque<int64_t> past_leases_ ABSL_GUARDED_BY(mu_);
  // The campaign running now, so Stop and a lost lease can end it.
  std::shared_ptr<CallCanceller> campaign_cancel_ ABSL_GUARDED_BY(mu_);

  // While leading: the key, and why leadership must end.
  LeaderKey leader_key_ ABSL_GUARDED_BY(mu_);
  bool lease_lost_ ABSL_GUARDED_BY(mu_) = false;
  bool key_lost_ ABSL_GUARDED_BY(mu_) = false;
  bool window_lapsed_ ABSL_GUARDED_BY(mu_) = false;
  bool resign_requested_ ABSL_GUARDED_BY(mu_) = false;

  // The election's candidates by key, as of view_revision_.
  std::map<std::string, Candidate> view_ ABSL_GUARDED_BY(mu_);
  int64_t view_revision_ ABSL_GUARDED_BY(mu_) = 0;

  LeaderElectorStats stats_ ABSL_GUARDED_BY(mu_);

  // Read without the lock by Leading(). Written under mu_: the term is
  // cleared before a later lease's window is published, so a reader that
  // sees the term unchanged around its read of the window read that
  // term's window.
  std::atomic<Term> leading_term_{0};
  std::atomic<int64_t> valid_until_ns_{
      TimePoint::min().time_since_epoch().count()};

  CallCanceller watch_cancel_;
  std::thread elector_thread_;
  std::thread renew_thread_;
  std::thread watch_thread_;
};

}  // namespace mooncake_tier::ha
