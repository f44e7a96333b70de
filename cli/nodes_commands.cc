// mooncake-tierctl nodes list: GET /api/v1/nodes.

#include <memory>
#include <string>

#include "cli/admin_commands.h"
#include "cli/format.h"
#include "cli/table.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

void PrintNodes(const json& list, Output& out) {
  Table table({"ID", "NAME", "STATE", "HEARTBEAT", "UPTIME", "DRAM", "SSD",
               "TASKS", "RPC_ADDRESS"});
  for (const json& node : Field(list, "nodes")) {
    table.AddRow(
        {Cell(node, "id"), Cell(node, "name"), Cell(node, "state"),
         HumanMillis(static_cast<int64_t>(Number(node, "heartbeat_age_ms"))) +
             " ago",
         HumanMillis(static_cast<int64_t>(Number(node, "uptime_ms"))),
         TierUse(Field(node, "dram")), TierUse(Field(node, "ssd")),
         Cell(node, "pending_tasks"), Cell(node, "rpc_address")});
  }
  out.PrintList(table, "no storage nodes registered");
  NoteMorePages(list, "nodes list", out);
}

}  // namespace

void RegisterNodesCommands(CLI::App& app, CliContext& context) {
  CLI::App& nodes = *app.add_subcommand("nodes", "Storage nodes");
  nodes.require_subcommand(1);
  auto query = std::make_shared<ListQuery>();
  CLI::App& list = *nodes.add_subcommand(
      "list",
      "Nodes by id: state, heartbeat age, DRAM and SSD use, pending tasks");
  AddListFlags(list, *query);
  list.footer(
      "With -o json: {\"nodes\":[...],\"next_cursor\"} as the server pages "
      "them (merged over every page with --all).");
  OnAdminCommand(list, context,
                 [query](AdminClient& client, Output& out, Failure*) -> Status {
                   MT_ASSIGN_OR_RETURN(json nodes, client.ListNodes(*query));
                   PrintDocument(out, nodes, [&] { PrintNodes(nodes, out); });
                   return Status();
                 });
}

}  // namespace mooncake_tier::cli
