// GET /api/v1/promotions and GET /api/v1/offloads: tasks in flight, by id,
// paginated.

#include "admin_server/admin_json.h"
#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"

namespace mooncake_tier::admin {
namespace {

AdminResponse ListTasks(TaskKind kind, const AdminRequest& request,
                        AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {"limit", "cursor"}));
  MT_ASSIGN_OR_RESPOND(const size_t limit, PageLimit(request));
  MT_ASSIGN_OR_RESPOND(const uint64_t after, IdCursor(request));
  std::string next;
  const std::vector<Task> page = PageById(
      context.facade->Tasks(kind), [](const Task& t) { return t.id; }, after,
      limit, &next);
  const TimePoint now = context.facade->Now();
  nlohmann::json tasks = nlohmann::json::array();
  for (const Task& task : page) tasks.push_back(TaskJson(task, now));
  return AdminResponse::Json(
      200, {{"tasks", std::move(tasks)}, {"next_cursor", next}});
}

}  // namespace

void AddTaskRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/promotions",
             "Promotion tasks in flight: key, group, node, size, state, age. "
             "?limit=&cursor=",
             false, [](const AdminRequest& request, AdminContext& context) {
               return ListTasks(TaskKind::kPromotion, request, context);
             }});
  table.Add({"GET", "/api/v1/offloads",
             "Offload tasks in flight: key, group, node, size, state, age. "
             "?limit=&cursor=",
             false, [](const AdminRequest& request, AdminContext& context) {
               return ListTasks(TaskKind::kOffload, request, context);
             }});
}

}  // namespace mooncake_tier::admin
