#pragma once

// The master role of mooncake-tierd in a high-availability cluster
// (`master --etcd ... --cluster NAME`; docs/design/ha.md). Every master of
// the cluster campaigns through etcd (ha::LeaderElector); the one elected
// serves, the others stand by and fail every call with NOT_LEADER naming
// the leader, so clients and nodes given the masters' addresses follow it
// (rpc/master_stub.h).
//
// Each term gets a master of its own, built empty when this process is
// elected and dropped when it steps down: what the cluster holds is
// rebuilt from the nodes, which register with the new leader with their
// DRAM directories and SSD inventories, exactly as after a lone master's
// restart. Until the nodes the previous leader knew have registered (or
// `recovery_timeout` passed) the new leader serves nodes only, and
// answers clients UNAVAILABLE (retry here): a read in that window would
// miss objects that exist, and a put could shadow one.
//
// The leader keeps the names of its nodes in etcd (under
// /mooncake-tier/<cluster>/nodes/, written only while its election key
// holds its term), which is how its successor knows whom to wait for.
//
// Every call is served only while Leading() holds (checked when the call
// starts and again before its reply), so a leader that was paused past
// its lease answers nothing it decided in an older term; nodes refuse
// replies of older terms (rpc/grpc_master_link.h).
//
// Thread safety: thread-safe.

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/periodic_thread.h"
#include "core/master_config.h"
#include "rpc/master_source.h"

namespace mooncake_tier {
class MasterHost;  // core/master_host.h
}  // namespace mooncake_tier

namespace mooncake_tier::ha {
class EtcdClient;
class LeaderElector;
}  // namespace mooncake_tier::ha

namespace mooncake_tier::daemon {

struct HaMasterOptions {
  // etcd client URLs, "host:port". REQUIRES: at least one.
  std::vector<std::string> etcd;
  // The cluster's name: masters with the same name elect one leader.
  // REQUIRES: 1-128 printable ASCII characters other than space and '/'.
  std::string cluster;
  // The gRPC address this master publishes when it leads (where clients
  // and nodes are sent). REQUIRES: non-empty, a port other than 0.
  std::string advertise;
  // The admin HTTP address it publishes with it ("" when none): a
  // standby's admin API names it.
  std::string admin_advertise;
  // The etcd lease that carries leadership. Default: 2 s (etcd's
  // minimum with its default flags). REQUIRES: >= 1 s.
  std::chrono::seconds lease_ttl{2};
  // How long a new leader waits for the previous leader's nodes before it
  // serves clients anyway. Default: 10 s. REQUIRES: >= 0.
  Duration recovery_timeout = std::chrono::seconds(10);
  // The engine's configuration for each term's master.
  // REQUIRES: config.Validate() is empty.
  MasterConfig config;
  // How often the background steps run. Default: 100 ms. REQUIRES: > 0.
  Duration tick_interval = std::chrono::milliseconds(100);
};

enum class MasterRole : uint8_t { kStandby, kLeader };
std::string_view MasterRoleName(MasterRole role);

// What the operator surface shows of this master's place in the cluster.
struct HaView {
  MasterRole role = MasterRole::kStandby;
  // This master's term while it leads; else the leader's, as last seen
  // (0: none seen).
  uint64_t term = 0;
  std::string leader;        // the leader's gRPC address ("" unknown)
  std::string leader_admin;  // its admin address ("" unknown or none)
  // Changes of leader this process saw (a new term after another).
  uint64_t failovers = 0;
  // Leader only: still waiting for the previous leader's nodes.
  bool recovering = false;
  size_t nodes_expected = 0;
  size_t nodes_registered = 0;
  // A standby is in sync when it holds an etcd lease, campaigns, and sees
  // a leader: it can take over within one lease TTL. A leader is.
  bool in_sync = false;
  std::string cluster;
};

class HaMaster final : public rpc::MasterSource {
 public:
  // Validates the options and starts campaigning (etcd may be down: the
  // elector keeps trying). INVALID_ARGUMENT saying what is wrong.
  static Result<std::unique_ptr<HaMaster>> Start(HaMasterOptions options,
                                                 const Clock* clock);
  // Shutdown().
  ~HaMaster() override;
  HaMaster(const HaMaster&) = delete;
  HaMaster& operator=(const HaMaster&) = delete;

  Result<rpc::ServingMaster> Acquire(rpc::Caller caller,
                                     std::string* leader) override;
  bool StillServing(const rpc::ServingMaster& serving) override;
  Duration GrantCap(const rpc::ServingMaster& serving) override;

  // The current term's master while leading, else null. Holding it keeps
  // it alive, not leading.
  std::shared_ptr<MasterHost> current() const;
  HaView View() const;
  const HaMasterOptions& options() const { return options_; }

  // Steps down (a standby takes over at once) and stops. Idempotent.
  void Shutdown();

  // Publishes what the elector stores as this candidate's value.
  static std::string EncodeLeaderValue(const std::string& rpc,
                                       const std::string& admin);

 private:
  struct Term;  // one term's master and its recovery state

  HaMaster(HaMasterOptions options, const Clock* clock);
  void OnElected(uint64_t term) ABSL_LOCKS_EXCLUDED(mu_);
  void OnDeposed(uint64_t term) ABSL_LOCKS_EXCLUDED(mu_);
  // One round of the background steps (the ticker's callback): notes the
  // leader's term and, while this master leads, ticks the term's master
  // and reconciles.
  void Tick();
  // Ends recovery once every expected node registered or the timeout
  // passed, and mirrors the registered nodes' names into etcd.
  void Reconcile(const std::shared_ptr<Term>& term);
  std::shared_ptr<Term> CurrentTerm() const ABSL_LOCKS_EXCLUDED(mu_);
  // Counts a failover when `term` is newer than the newest leader's term
  // seen before (terms only grow). Called by whatever sees a leader: the
  // ticker, View(), the election.
  void NoteLeaderTerm(uint64_t term) const ABSL_LOCKS_EXCLUDED(mu_);
  std::string NodesPrefix() const;

  const HaMasterOptions options_;
  const Clock* const clock_;
  std::unique_ptr<ha::EtcdClient>
      etcd_;  // node names (the elector has its own)
  std::unique_ptr<ha::LeaderElector> elector_;

  mutable Mutex mu_;
  std::shared_ptr<Term> term_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t seen_term_ ABSL_GUARDED_BY(mu_) = 0;
  mutable uint64_t failovers_ ABSL_GUARDED_BY(mu_) = 0;
  PeriodicThread ticker_;
};

}  // namespace mooncake_tier::daemon
