#pragma once

// Which master a MasterService call is served by. A lone master serves
// every call itself (FixedMasterSource); a master in a high-availability
// cluster serves only while it leads, through the master of its current
// term, and otherwise fails each call with NOT_LEADER naming the leader
// (daemon/ha_master.h). The service asks once per call and holds what it
// got until the reply is written, so a term's master outlives the calls it
// is serving even after its process stopped leading.
//
// Thread safety: implementations are thread-safe.

#include <cstdint>
#include <memory>
#include <string>

#include "mooncake_tier/status.h"
#include "protocol/master_api.h"
#include "protocol/master_link.h"

namespace mooncake_tier::rpc {

// Who makes a call: a client (puts, reads, removals) or a storage node
// (registration, heartbeats, tasks, directory). A master recovering after
// a failover serves nodes before clients.
enum class Caller : uint8_t { kClient, kNode };

// The master serving one call.
struct ServingMaster {
  MasterApi* api = nullptr;
  MasterLink* link = nullptr;
  // The leader's term (0 for a lone master): replies to nodes carry it so
  // that a node can refuse an older leader's answers.
  uint64_t term = 0;
  // Keeps `api` and `link` alive while the call uses them.
  std::shared_ptr<const void> hold;
};

class MasterSource {
 public:
  virtual ~MasterSource() = default;
  // The master to serve a call from `caller` with, or the status to fail
  // the call with (NOT_LEADER from a standby, UNAVAILABLE while
  // recovering); then *leader is where the leader serves ("host:port"),
  // empty when unknown.
  virtual Result<ServingMaster> Acquire(Caller caller, std::string* leader) = 0;
  // Asked again before the reply is sent: false fails the call with
  // NOT_LEADER instead (leadership ended while it was served, so what it
  // decided belongs to a term that is over).
  virtual bool StillServing(const ServingMaster& serving) { return true; }
  // How long from now `serving` may still vouch for a put's grant: a
  // leader's grants must run out with its lease's window, so that its
  // successor can hand the same ranges out at once (ha.md). Asked as the
  // PutStart reply is written; the grant's write_within_ms is cut to it.
  virtual Duration GrantCap(const ServingMaster& serving) {
    return Duration::max();
  }
};

// A lone master: every call is served by the same api and link, in term 0.
class FixedMasterSource final : public MasterSource {
 public:
  // `api` and `link` must outlive this object.
  FixedMasterSource(MasterApi* api, MasterLink* link)
      : api_(api), link_(link) {}
  Result<ServingMaster> Acquire(Caller, std::string*) override {
    return ServingMaster{api_, link_, 0, nullptr};
  }

 private:
  MasterApi* const api_;
  MasterLink* const link_;
};

// The trailing-metadata key under which a refused call names the leader
// (lowercase, as gRPC requires).
inline constexpr char kLeaderMetadataKey[] = "mooncake-leader";

}  // namespace mooncake_tier::rpc
