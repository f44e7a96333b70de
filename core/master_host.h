#pragma once

// MasterHost: a master as a process (the daemon, the embedded cluster)
// hosts it. It makes the engine and hands out the interfaces its hosts
// use: MasterApi for client calls and MasterLink for node calls (in
// process, core/local_master.h; the gRPC service serves both), MasterAdmin
// for the admin API and metrics, and Tick for the background thread. Hosts
// include this header, never core/master.h: the engine's private changes
// do not rebuild them.
//
// Thread safety: every method is thread-safe (the master's are).

#include <memory>

#include "base/clock.h"
#include "core/master_admin.h"
#include "core/master_config.h"
#include "mooncake_tier/status.h"
#include "protocol/master_api.h"
#include "protocol/master_link.h"

namespace mooncake_tier {

class Master;
class LocalMasterApi;
class LocalMasterLink;

class MasterHost {
 public:
  // INVALID_ARGUMENT, saying what, when `config` does not pass
  // MasterConfig::Validate(). `clock` must outlive the host.
  static Result<std::unique_ptr<MasterHost>> Create(MasterConfig config,
                                                    const Clock* clock);
  ~MasterHost();
  MasterHost(const MasterHost&) = delete;
  MasterHost& operator=(const MasterHost&) = delete;

  MasterApi& api() { return *api_; }
  MasterLink& link() { return *link_; }
  MasterAdmin& admin();
  const MasterAdmin& admin() const;
  // The engine itself, for tests and benchmarks that drive it directly
  // (they include core/master.h); hosts use the interfaces above.
  Master& engine() { return *master_; }
  // The clock every deadline of the master is read from.
  const Clock* clock() const { return clock_; }
  // One pass of the background steps (Master::Tick).
  void Tick();

 private:
  MasterHost(std::unique_ptr<Master> master, const Clock* clock);

  const Clock* const clock_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<MasterApi> api_;
  std::unique_ptr<MasterLink> link_;
};

}  // namespace mooncake_tier
