#include "daemon/ha_master.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "core/master_host.h"
#include "daemon/master_process.h"
#include "ha/etcd_client.h"
#include "ha/leader_elector.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace mooncake_tier::daemon {
namespace {

struct LeaderAddresses {
  std::string rpc;
  std::string admin;
};

LeaderAddresses DecodeLeaderValue(const std::string& value) {
  nlohmann::json json = nlohmann::json::parse(value, nullptr, false);
  if (!json.is_object()) return {value, ""};  // a bare address
  LeaderAddresses out;
  if (json.contains("rpc") && json["rpc"].is_string()) {
    out.rpc = json["rpc"].get<std::string>();
  }
  if (json.contains("admin") && json["admin"].is_string()) {
    out.admin = json["admin"].get<std::string>();
  }
  return out;
}

}  // namespace

std::string_view MasterRoleName(MasterRole role) {
  return role == MasterRole::kLeader ? "leader" : "standby";
}

struct HaMaster::Term {
  uint64_t term = 0;
  std::shared_ptr<MasterHost> host;
  ha::LeaderKey key;  // this term's election key: guards its etcd writes
  // Node names the previous leader published; recovery ends once all
  // registered, or at recovery_deadline.
  std::set<std::string> expected;
  TimePoint recovery_deadline;
  std::atomic<bool> recovering{true};
  std::atomic<size_t> registered{0};
  // Node names this term wrote to etcd (the ticker's only).
  std::set<std::string> published;
};

std::string HaMaster::EncodeLeaderValue(const std::string& rpc,
                                        const std::string& admin) {
  nlohmann::json json = {{"rpc", rpc}};
  if (!admin.empty()) json["admin"] = admin;
  return json.dump();
}

HaMaster::HaMaster(HaMasterOptions options, const Clock* clock)
    : options_(std::move(options)), clock_(clock) {}

HaMaster::~HaMaster() { Shutdown(); }

Result<std::unique_ptr<HaMaster>> HaMaster::Start(HaMasterOptions options,
                                                  const Clock* clock) {
  if (std::string error = options.config.Validate(); !error.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "invalid master configuration: " + error);
  }
  if (options.etcd.empty()) {
    return Status(ErrorReason::kInvalidArgument, "--etcd names no endpoint");
  }
  if (options.advertise.empty() || options.advertise.ends_with(":0")) {
    return Status(ErrorReason::kInvalidArgument,
                  "the address to publish as leader ('" + options.advertise +
                      "') needs a host and a fixed port");
  }
  if (options.recovery_timeout < Duration::zero()) {
    return Status(ErrorReason::kInvalidArgument,
                  "recovery timeout must not be negative");
  }
  if (options.tick_interval <= Duration::zero()) {
    return Status(ErrorReason::kInvalidArgument,
                  "tick interval must be positive");
  }
  std::unique_ptr<HaMaster> master(new HaMaster(std::move(options), clock));
  ha::EtcdClientOptions etcd;
  etcd.endpoints = master->options_.etcd;
  MT_ASSIGN_OR_RETURN(master->etcd_, ha::EtcdClient::Create(etcd));

  ha::LeaderElectorOptions elector;
  elector.etcd = etcd;
  elector.cluster = master->options_.cluster;
  elector.value = EncodeLeaderValue(master->options_.advertise,
                                    master->options_.admin_advertise);
  elector.lease_ttl = master->options_.lease_ttl;
  elector.clock = clock;
  HaMaster* self = master.get();
  ha::LeaderElectorCallbacks callbacks;
  callbacks.on_elected = [self](ha::Term term) {
    self->OnElected(static_cast<uint64_t>(term));
  };
  callbacks.on_deposed = [self](ha::Term term, ha::StepDownReason reason) {
    spdlog::warn("master: stepped down from term {} ({})", term,
                 ha::StepDownReasonName(reason));
    self->OnDeposed(static_cast<uint64_t>(term));
  };
  MT_ASSIGN_OR_RETURN(master->elector_,
                      ha::LeaderElector::Create(elector, std::move(callbacks)));
  MT_RETURN_IF_ERROR(master->elector_->Start());
  master->ticker_.Start(master->options_.tick_interval,
                        [self] { self->Tick(); });
  spdlog::info(
      "master: campaigning in cluster '{}' through etcd {} (publishes {})",
      master->options_.cluster, master->options_.etcd.front(),
      master->options_.advertise);
  return master;
}

std::string HaMaster::NodesPrefix() const {
  return "/mooncake-tier/" + options_.cluster + "/nodes/";
}

void HaMaster::OnElected(uint64_t term) {
  auto next = std::make_shared<Term>();
  next->term = term;
  std::optional<ha::LeaderKey> key = elector_->LeadingKey();
  if (!key || static_cast<uint64_t>(key->revision) != term) {
    spdlog::warn("master: elected in term {} but no longer leading", term);
    return;
  }
  next->key = *key;
  NoteLeaderTerm(term);
  // Whom the previous leader served. Unreadable: wait the whole timeout
  // (nobody known means nobody to wait for otherwise).
  Result<ha::PrefixRange> nodes = etcd_->GetPrefix(NodesPrefix());
  if (nodes.ok()) {
    for (const ha::KeyValue& kv : nodes->kvs) {
      next->expected.insert(kv.key.substr(NodesPrefix().size()));
    }
    next->published = next->expected;
  } else {
    spdlog::warn(
        "master: cannot read the cluster's nodes from etcd ({}); "
        "serving clients after the recovery timeout",
        nodes.status().ToString());
    next->expected.insert("");  // never registers
  }
  next->recovery_deadline = clock_->Now() + options_.recovery_timeout;
  next->recovering = !next->expected.empty();
  MasterConfig config = options_.config;
  // Each term's ids start from its election time: a node id never names
  // two nodes across terms.
  if (config.first_node_id == 1) config.first_node_id = FirstNodeIdFromClock();
  // Every grant of an earlier term ran out with that term's lease window
  // (GrantCap), which ended before this election: only a write already
  // under way can still land, within the margin.
  if (!config.inherited_grant_window) {
    config.inherited_grant_window = config.late_write_margin;
  }
  Result<std::unique_ptr<MasterHost>> host = MasterHost::Create(config, clock_);
  if (!host.ok()) {
    spdlog::error("master: cannot create the master of term {}: {}", term,
                  host.status().ToString());
    elector_->Resign();
    return;
  }
  next->host = std::move(*host);
  spdlog::info(
      "master: leading in term {}; waiting for {} node(s) of the "
      "previous term (at most {} ms)",
      term, next->expected.size(),
      std::chrono::duration_cast<std::chrono::milliseconds>(
          options_.recovery_timeout)
          .count());
  MutexLock lock(&mu_);
  term_ = std::move(next);
}

void HaMaster::OnDeposed(uint64_t term) {
  std::shared_ptr<Term> old;
  {
    MutexLock lock(&mu_);
    if (term_ && term_->term == term) old = std::move(term_);
  }
  if (!old) return;
  // Calls in flight hold the old master until they answer (NOT_LEADER:
  // StillServing is false now); the last of them destroys it. Nodes' long
  // polls would wait out their time first: wake them, so the nodes go
  // looking for the new leader at once.
  for (const NodeView& node : old->host->admin().ListNodes()) {
    old->host->link().InterruptPull(node.id);
  }
  spdlog::info("master: dropped the master of term {}", term);
}

std::shared_ptr<HaMaster::Term> HaMaster::CurrentTerm() const {
  MutexLock lock(&mu_);
  return term_;
}

std::shared_ptr<MasterHost> HaMaster::current() const {
  std::shared_ptr<Term> term = CurrentTerm();
  return term ? term->host : nullptr;
}

Result<rpc::ServingMaster> HaMaster::Acquire(rpc::Caller caller,
                                             std::string* leader) {
  ha::Term leading = 0;
  std::shared_ptr<Term> term = CurrentTerm();
  if (term && elector_->Leading(&leading) &&
      static_cast<uint64_t>(leading) == term->term) {
    if (caller == rpc::Caller::kClient && term->recovering.load()) {
      *leader = options_.advertise;  // retry here
      return Status(ErrorReason::kUnavailable,
                    "master recovering after a failover: " +
                        std::to_string(term->registered.load()) + " of " +
                        std::to_string(term->expected.size()) +
                        " nodes registered again");
    }
    rpc::ServingMaster serving;
    serving.api = &term->host->api();
    serving.link = &term->host->link();
    serving.term = term->term;
    serving.hold = term;
    return serving;
  }
  std::optional<ha::LeaderInfo> seen = elector_->CurrentLeader();
  if (seen) {
    const LeaderAddresses addresses = DecodeLeaderValue(seen->value);
    if (addresses.rpc != options_.advertise) *leader = addresses.rpc;
    return Status(ErrorReason::kNotLeader,
                  "this master is a standby of cluster '" + options_.cluster +
                      "'; the leader serves at " + addresses.rpc + " (term " +
                      std::to_string(seen->term) + ")");
  }
  return Status(ErrorReason::kNotLeader,
                "this master is a standby of cluster '" + options_.cluster +
                    "' and sees no leader (an election is under way, or "
                    "etcd is unreachable)");
}

Duration HaMaster::GrantCap(const rpc::ServingMaster&) {
  return elector_->LeaseValidUntil() - clock_->Now();
}

bool HaMaster::StillServing(const rpc::ServingMaster& serving) {
  ha::Term leading = 0;
  return elector_->Leading(&leading) &&
         static_cast<uint64_t>(leading) == serving.term;
}

HaView HaMaster::View() const {
  HaView view;
  view.cluster = options_.cluster;
  std::shared_ptr<Term> term = CurrentTerm();
  std::optional<ha::LeaderInfo> seen = elector_->CurrentLeader();
  if (seen) NoteLeaderTerm(static_cast<uint64_t>(seen->term));
  ha::Term leading = 0;
  if (term && elector_->Leading(&leading) &&
      static_cast<uint64_t>(leading) == term->term) {
    view.role = MasterRole::kLeader;
    view.term = term->term;
    view.leader = options_.advertise;
    view.leader_admin = options_.admin_advertise;
    view.recovering = term->recovering.load();
    view.nodes_expected = term->expected.size();
    view.nodes_registered = term->registered.load();
    view.in_sync = true;
  } else {
    view.role = MasterRole::kStandby;
    if (seen) {
      const LeaderAddresses addresses = DecodeLeaderValue(seen->value);
      view.term = static_cast<uint64_t>(seen->term);
      view.leader = addresses.rpc;
      view.leader_admin = addresses.admin;
    }
    const ha::LeaderElectorStats stats = elector_->Stats();
    view.in_sync = seen.has_value() &&
                   stats.role == ha::ElectorRole::kCampaigning &&
                   elector_->LeaseValidUntil() > clock_->Now();
  }
  MutexLock lock(&mu_);
  view.failovers = failovers_;
  return view;
}

void HaMaster::Reconcile(const std::shared_ptr<Term>& term) {
  std::set<std::string> alive;
  for (const NodeView& node : term->host->admin().ListNodes()) {
    if (node.state != NodeState::kDead) alive.insert(node.spec.name);
  }
  size_t registered = 0;
  for (const std::string& name : term->expected) {
    registered += alive.count(name);
  }
  term->registered = registered;
  if (term->recovering.load() && (registered == term->expected.size() ||
                                  clock_->Now() >= term->recovery_deadline)) {
    term->recovering = false;
    spdlog::info("master: term {} serves clients ({} of {} nodes back)",
                 term->term, registered, term->expected.size());
  }
  // While recovering, a node not yet back stays listed (it may still
  // come); after, the list is the nodes this term serves.
  std::vector<ha::WriteOp> ops;
  for (const std::string& name : alive) {
    if (!term->published.count(name)) {
      ops.push_back(ha::WriteOp::Put(NodesPrefix() + name, "1"));
    }
  }
  if (!term->recovering.load()) {
    for (const std::string& name : term->published) {
      if (!alive.count(name) && !name.empty()) {
        ops.push_back(ha::WriteOp::Delete(NodesPrefix() + name));
      }
    }
  }
  if (ops.empty()) return;
  if (ops.size() > 100) ops.resize(100);  // etcd's txn limit is 128
  Result<bool> written =
      etcd_->FencedWrite(term->key.key, term->key.revision, ops);
  if (!written.ok() || !*written) {
    // Retried on the next tick; a write refused means the term is over.
    return;
  }
  for (const ha::WriteOp& op : ops) {
    const std::string name = op.key.substr(NodesPrefix().size());
    if (op.kind == ha::WriteOp::Kind::kPut) {
      term->published.insert(name);
    } else {
      term->published.erase(name);
    }
  }
}

void HaMaster::NoteLeaderTerm(uint64_t term) const {
  if (term == 0) return;
  MutexLock lock(&mu_);
  if (term <= seen_term_) return;
  if (seen_term_ != 0) ++failovers_;
  seen_term_ = term;
}

void HaMaster::Tick() {
  if (std::optional<ha::LeaderInfo> seen = elector_->CurrentLeader()) {
    NoteLeaderTerm(static_cast<uint64_t>(seen->term));
  }
  std::shared_ptr<Term> term = CurrentTerm();
  if (!term || !StillServing(
                   rpc::ServingMaster{nullptr, nullptr, term->term, nullptr})) {
    return;
  }
  term->host->Tick();
  Reconcile(term);
}

void HaMaster::Shutdown() {
  ticker_.Stop();
  // Steps down and revokes the lease: a standby leads within moments.
  if (elector_) elector_->Stop();
  MutexLock lock(&mu_);
  term_.reset();
}

}  // namespace mooncake_tier::daemon
