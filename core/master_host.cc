#include "core/master_host.h"

#include <utility>

#include "core/local_master.h"
#include "core/master.h"

namespace mooncake_tier {

Result<std::unique_ptr<MasterHost>> MasterHost::Create(MasterConfig config,
                                                       const Clock* clock) {
  if (std::string error = config.Validate(); !error.empty()) {
    return Status(ErrorReason::kInvalidArgument,
                  "invalid master configuration: " + error);
  }
  return std::unique_ptr<MasterHost>(new MasterHost(
      std::make_unique<Master>(std::move(config), clock), clock));
}

MasterHost::MasterHost(std::unique_ptr<Master> master, const Clock* clock)
    : clock_(clock),
      master_(std::move(master)),
      api_(std::make_unique<LocalMasterApi>(master_.get())),
      link_(std::make_unique<LocalMasterLink>(master_.get())) {}

MasterHost::~MasterHost() = default;

MasterAdmin& MasterHost::admin() { return *master_; }
const MasterAdmin& MasterHost::admin() const { return *master_; }

void MasterHost::Tick() { master_->Tick(); }

}  // namespace mooncake_tier
