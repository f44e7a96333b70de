// GET /api/v1/nodes: nodes with state, heartbeat age, use and pending
// tasks, by id, paginated.

#include "absl/container/flat_hash_map.h"
#include "admin_server/admin_json.h"
#include "admin_server/admin_routes.h"
#include "admin_server/request_parsing.h"

namespace mooncake_tier::admin {
namespace {

AdminResponse ListNodes(const AdminRequest& request, AdminContext& context) {
  MT_RESPOND_IF_ERROR(OnlyQuery(request, {"limit", "cursor"}));
  MT_ASSIGN_OR_RESPOND(const size_t limit, PageLimit(request));
  MT_ASSIGN_OR_RESPOND(const uint64_t after, IdCursor(request));

  AdminFacade& facade = *context.facade;
  absl::flat_hash_map<NodeId, uint64_t> pending;
  for (TaskKind kind : {TaskKind::kOffload, TaskKind::kPromotion}) {
    for (const Task& task : facade.Tasks(kind)) ++pending[task.node];
  }
  std::string next;
  const std::vector<NodeView> page = PageById(
      facade.Nodes(), [](const NodeView& n) { return n.id; }, after, limit,
      &next);
  absl::flat_hash_map<NodeId, NodeMemoryView> memory;
  for (NodeMemoryView& view : facade.Memory()) memory[view.node] = view;
  const TimePoint now = facade.Now();
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeView& node : page) {
    auto it = pending.find(node.id);
    auto held = memory.find(node.id);
    nodes.push_back(NodeJson(node, now, it == pending.end() ? 0 : it->second,
                             held == memory.end() ? nullptr : &held->second));
  }
  return AdminResponse::Json(
      200, {{"nodes", std::move(nodes)}, {"next_cursor", next}});
}

}  // namespace

void AddNodeRoutes(RouteTable& table) {
  table.Add({"GET", "/api/v1/nodes",
             "Nodes: state, heartbeat age, DRAM (and how it is held) and SSD "
             "use (and what the store reports), pending tasks. "
             "?limit=&cursor=",
             false, ListNodes});
}

}  // namespace mooncake_tier::admin
