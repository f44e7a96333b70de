// GET /api/v1/config and PATCH /api/v1/config.
//
// PATCH takes a JSON object in the shape GET returns, holding only the
// fields to change (a merge patch): promotion knobs ("promotion": {...})
// and the run-time knobs of kRuntimeKnobs; fields fixed at start and
// unknown fields are 400. Names and types are checked here; the engine
// then applies the whole patch in one step over the configuration as it is
// at that moment (validated whole, all or nothing), so two concurrent
// PATCHes of different fields never undo each other. Every change is
// logged.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string_view>

#include "admin_server/admin_json.h"
#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::admin {
namespace {

using nlohmann::json;

Result<uint64_t> UintField(const json& value, const std::string& name,
                           uint64_t max) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > max) {
    return Status::InvalidArgument(name + " must be an integer in 0.." +
                                   std::to_string(max));
  }
  return value.get<uint64_t>();
}

Result<uint32_t> U32Field(const json& value, const std::string& name) {
  MT_ASSIGN_OR_RETURN(
      uint64_t v, UintField(value, name, std::numeric_limits<uint32_t>::max()));
  return static_cast<uint32_t>(v);
}

Result<Duration> MillisField(const json& value, const std::string& name) {
  // Up to ~100 years: far beyond any timeout, far below overflow.
  MT_ASSIGN_OR_RETURN(uint64_t ms, UintField(value, name, 1ull << 41));
  return std::chrono::duration_cast<Duration>(
      std::chrono::milliseconds(static_cast<int64_t>(ms)));
}

Result<double> DoubleField(const json& value, const std::string& name) {
  if (!value.is_number())
    return Status::InvalidArgument(name + " must be a number");
  return value.get<double>();
}

Result<bool> BoolField(const json& value, const std::string& name) {
  if (!value.is_boolean())
    return Status::InvalidArgument(name + " must be true or false");
  return value.get<bool>();
}

// Overlays the "promotion" object of a patch on `options`. Checks names
// and types; the engine validates the values (as a whole).
Status PatchPromotion(const json& patch, PromotionOptions& o) {
  if (!patch.is_object())
    return Status::InvalidArgument("promotion must be an object");
  for (const auto& [name, value] : patch.items()) {
    const std::string field = "promotion." + name;
    if (name == "on_hit") {
      MT_ASSIGN_OR_RETURN(o.on_hit, BoolField(value, field));
    } else if (name == "policy") {
      std::optional<PromotionPolicy> policy;
      if (value.is_string()) {
        policy = ParsePromotionPolicy(value.get<std::string>());
      }
      if (!policy)
        return Status::InvalidArgument(field + " must be threshold or tinylfu");
      o.policy = *policy;
    } else if (name == "admission_threshold") {
      MT_ASSIGN_OR_RETURN(o.admission_threshold, U32Field(value, field));
    } else if (name == "queue_limit") {
      MT_ASSIGN_OR_RETURN(o.queue_limit, U32Field(value, field));
    } else if (name == "max_per_pull") {
      MT_ASSIGN_OR_RETURN(o.max_per_pull, U32Field(value, field));
    } else if (name == "task_timeout_ms") {
      MT_ASSIGN_OR_RETURN(o.task_timeout, MillisField(value, field));
    } else if (name == "drop_source") {
      MT_ASSIGN_OR_RETURN(o.drop_source, BoolField(value, field));
    } else if (name == "proactive_low_watermark") {
      MT_ASSIGN_OR_RETURN(o.proactive_low_watermark, DoubleField(value, field));
    } else if (name == "proactive_max_per_step") {
      MT_ASSIGN_OR_RETURN(o.proactive_max_per_step, U32Field(value, field));
    } else if (name == "proactive_interval_ms") {
      MT_ASSIGN_OR_RETURN(o.proactive_interval, MillisField(value, field));
    } else {
      return Status::InvalidArgument("unknown field '" + field + "'");
    }
  }
  return Status::Ok();
}

// The top-level knobs other than promotion's that may change at run time.
constexpr std::string_view kRuntimeKnobs[] = {
    "eviction_high_watermark", "eviction_ratio",      "ssd_high_watermark",
    "ssd_eviction_ratio",      "ssd_eviction_policy", "writeback_watermark",
    "group_fill_timeout_ms",   "group_broken_ttl_ms", "offload_max_per_pull",
    "offload_queue_limit"};

bool IsRuntimeKnob(std::string_view name) {
  return std::find(std::begin(kRuntimeKnobs), std::end(kRuntimeKnobs), name) !=
         std::end(kRuntimeKnobs);
}

// A top-level knob other than promotion's, into `change`.
Status PatchRuntimeKnob(const std::string& name, const json& value,
                        RuntimeConfigChange& change) {
  if (name == "eviction_high_watermark") {
    MT_ASSIGN_OR_RETURN(change.eviction_high_watermark,
                        DoubleField(value, name));
  } else if (name == "eviction_ratio") {
    MT_ASSIGN_OR_RETURN(change.eviction_ratio, DoubleField(value, name));
  } else if (name == "ssd_high_watermark") {
    MT_ASSIGN_OR_RETURN(change.ssd_high_watermark, DoubleField(value, name));
  } else if (name == "ssd_eviction_ratio") {
    MT_ASSIGN_OR_RETURN(change.ssd_eviction_ratio, DoubleField(value, name));
  } else if (name == "ssd_eviction_policy") {
    if (value.is_string()) {
      change.ssd_eviction_policy =
          ParseEvictionPolicy(value.get<std::string>());
    }
    if (!change.ssd_eviction_policy) {
      return Status::InvalidArgument(name + " must be clock or lru");
    }
  } else if (name == "writeback_watermark") {
    MT_ASSIGN_OR_RETURN(change.writeback_watermark, DoubleField(value, name));
  } else if (name == "group_fill_timeout_ms") {
    MT_ASSIGN_OR_RETURN(change.group_fill_timeout, MillisField(value, name));
  } else if (name == "group_broken_ttl_ms") {
    MT_ASSIGN_OR_RETURN(change.group_broken_ttl, MillisField(value, name));
  } else if (name == "offload_max_per_pull") {
    MT_ASSIGN_OR_RETURN(change.offload_max_per_pull, U32Field(value, name));
  } else if (name == "offload_queue_limit") {
    MT_ASSIGN_OR_RETURN(change.offload_queue_limit, U32Field(value, name));
  } else {
    return Status::InvalidArgument("unknown field '" + name + "'");
  }
  return Status::Ok();
}

// Every field that changed, as "name": [old, new] ("promotion.x" for
// promotion's).
json Changes(const json& before, const json& after,
             const std::string& prefix = "") {
  json out = json::object();
  for (const auto& [name, value] : after.items()) {
    if (!before.contains(name) || before.at(name) == value) continue;
    if (value.is_object()) {
      out.update(Changes(before.at(name), value, prefix + name + "."));
    } else {
      out[prefix + name] = json::array({before.at(name), value});
    }
  }
  return out;
}

AdminResponse GetConfig(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  return AdminResponse::Json(200, ConfigJson(context.facade->Config()));
}

AdminResponse PatchConfig(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {}));
  MT_ASSIGN_OR_RESPOND(const json patch, JsonObjectBody(request));
  AdminFacade& facade = *context.facade;
  const MasterConfig current = facade.Config();
  const json known = ConfigJson(current);
  RuntimeConfigChange change;
  for (const auto& [name, value] : patch.items()) {
    if (name == "promotion") {
      // Names and types now, on a scratch copy: the edit itself runs in
      // the engine over the options as they are then.
      PromotionOptions scratch = current.promotion;
      MT_RESPOND_IF_ERROR(PatchPromotion(value, scratch));
      continue;
    }
    if (IsRuntimeKnob(name)) {
      MT_RESPOND_IF_ERROR(PatchRuntimeKnob(name, value, change));
    } else if (known.contains(name)) {
      return AdminResponse::BadRequest(
          "'" + name + "' is fixed at start; restart with the new value",
          "NOT_RUNTIME_TUNABLE");
    } else {
      return AdminResponse::BadRequest("unknown field '" + name + "'");
    }
  }
  if (!change.empty() && !facade.Supports(FacadeOp::kSetRuntimeConfig)) {
    return AdminResponse::NotImplemented(FacadeOp::kSetRuntimeConfig);
  }
  PromotionEdit edit;
  if (auto it = patch.find("promotion"); it != patch.end()) {
    edit = [&promotion_patch = *it](PromotionOptions& options) {
      return PatchPromotion(promotion_patch, options);
    };
  }
  MT_ASSIGN_OR_RESPOND(const RuntimeConfigUpdate update,
                       facade.UpdateConfig(change, edit));
  const json after = ConfigJson(update.after);
  const json changed = Changes(ConfigJson(update.before), after);
  if (!changed.empty()) {
    spdlog::info("admin: config changed: {}", changed.dump());
  }
  return AdminResponse::Json(200, after);
}

}  // namespace

void AddConfigRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/config",
             "The effective configuration (promotion knobs as they are now).",
             false, GetConfig});
  table.Add({"PATCH", "/api/v1/config",
             "Changes run-time knobs: a JSON object with only the fields to "
             "change, e.g. {\"promotion\":{\"admission_threshold\":3}}.",
             true, PatchConfig});
}

}  // namespace mooncake_tier::admin
