// Master: construction, run-time configuration and the background tick.
// Every call is its part's (core/README.md); the task reports are in
// master_tasks.cc, the operators' views in master_report.cc.

#include "core/master.h"

#include <stdexcept>

namespace mooncake_tier {
namespace {

MasterConfig CheckedConfig(MasterConfig config) {
  if (std::string error = config.Validate(); !error.empty()) {
    throw std::invalid_argument("invalid master config: " + error);
  }
  return config;
}

}  // namespace

Master::Master(MasterConfig config, const Clock* clock)
    : s_(CheckedConfig(std::move(config)), clock) {}

MasterConfig Master::config() const {
  MasterConfig config = s_.config;
  s_.knobs.CopyTo(config);
  config.promotion = s_.lifecycle.gate().options();
  return config;
}

Result<RuntimeConfigUpdate> Master::UpdateRuntimeConfig(
    const RuntimeConfigChange& change, const PromotionEdit& edit_promotion) {
  MutexLock update(&config_update_mu_);
  RuntimeConfigUpdate out;
  out.before = config();
  MasterConfig next = out.before;
  change.ApplyTo(next);
  if (edit_promotion) MT_RETURN_IF_ERROR(edit_promotion(next.promotion));
  // The whole configuration, as at start: a pair may be wrong only
  // together (a ratio above a watermark that stays).
  if (std::string error = next.Validate(); !error.empty()) {
    return Status(ErrorReason::kInvalidArgument, error);
  }
  // Validated whole: neither store below can fail, so it is all or nothing.
  if (edit_promotion) {
    MT_RETURN_IF_ERROR(s_.lifecycle.gate().SetOptions(next.promotion));
  }
  s_.knobs.Store(next);
  out.after = std::move(next);
  return out;
}

Status Master::SetPromotionOptions(const PromotionOptions& options) {
  return UpdateRuntimeConfig({},
                             [&](PromotionOptions& o) {
                               o = options;
                               return Status::Ok();
                             })
      .status();
}

std::vector<Result<ReplicaDescriptor>> Master::PutStart(
    std::span<const PutStartRequest> requests, TimePoint wait_until) {
  std::vector<HitRatioForecast::Reference> seen;
  seen.reserve(requests.size());
  for (const PutStartRequest& r : requests) seen.push_back({r.key, r.size});
  forecast_.Note(seen);
  return puts_.PutStart(requests, wait_until);
}

std::vector<Result<ObjectReplicas>> Master::GetReplicaList(
    std::span<const std::string> keys) {
  std::vector<Result<ObjectReplicas>> out =
      object_service_.GetReplicaList(keys);
  std::vector<HitRatioForecast::Reference> hits;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (out[i].ok()) hits.push_back({keys[i], out[i]->size});
  }
  forecast_.Note(hits);
  return out;
}

std::vector<Status> Master::Remove(std::span<const std::string> keys,
                                   RemoveOptions options) {
  std::vector<Status> out = object_service_.Remove(keys, options);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (out[i].ok()) forecast_.Forget(keys[i]);
  }
  return out;
}

void Master::Tick() {
  forecast_.SetCapacity(s_.nodes.MemoryUsage().capacity +
                        s_.nodes.SsdUsage().capacity);
  ReleaseHeldMemory();
  ExpireNodes();
  ReapStalledPuts();
  ReapOffloadTasks();
  ReapPromotionTasks();
  SweepGroups();
  tiering_.Round();
  tiering_.EvictSsd();
  PromoteProactively();
}

}  // namespace mooncake_tier
