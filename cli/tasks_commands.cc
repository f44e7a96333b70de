// mooncake-tierctl promotions list, offloads list: tasks in flight
// (GET /api/v1/promotions, GET /api/v1/offloads).

#include <memory>
#include <string>

#include "cli/admin_commands.h"
#include "cli/format.h"
#include "cli/table.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

enum class TaskKind { kPromotion, kOffload };

void PrintTasks(TaskKind kind, const json& list, const std::string& command,
                Output& out) {
  std::vector<std::string> header = {"ID",   "KEY",   "GROUP", "NODE",
                                     "SIZE", "STATE", "AGE"};
  if (kind == TaskKind::kPromotion) header.push_back("FORCED");
  Table table(std::move(header));
  for (const json& task : Field(list, "tasks")) {
    const json& group = Field(task, "group");
    std::vector<std::string> row = {
        Cell(task, "id"),
        Cell(task, "key"),
        group.is_object() ? Cell(group, "id") + "[" + Cell(group, "index") + "]"
                          : "-",
        Cell(task, "node"),
        HumanBytes(static_cast<uint64_t>(Number(task, "size"))),
        Cell(task, "state"),
        HumanMillis(static_cast<int64_t>(Number(task, "age_ms")))};
    if (kind == TaskKind::kPromotion) row.push_back(Cell(task, "forced"));
    table.AddRow(std::move(row));
  }
  out.PrintList(table, kind == TaskKind::kPromotion ? "no promotions in flight"
                                                    : "no offloads in flight");
  NoteMorePages(list, command, out);
}

void RegisterTaskGroup(CLI::App& app, CliContext& context, TaskKind kind) {
  const bool promotion = kind == TaskKind::kPromotion;
  const std::string name = promotion ? "promotions" : "offloads";
  CLI::App& group = *app.add_subcommand(
      name, promotion ? "Promotion tasks in flight (SSD -> DRAM)"
                      : "Offload tasks in flight (DRAM -> SSD)");
  group.require_subcommand(1);
  auto query = std::make_shared<ListQuery>();
  CLI::App& list = *group.add_subcommand(
      "list", "Tasks by id: key, group, node, size, state, age");
  AddListFlags(list, *query);
  list.footer(
      "With -o json: {\"tasks\":[...],\"next_cursor\"} as the server "
      "pages them (merged over every page with --all).");
  OnAdminCommand(
      list, context,
      [kind, query, name](AdminClient& client, Output& out,
                          Failure*) -> Status {
        MT_ASSIGN_OR_RETURN(json tasks, kind == TaskKind::kPromotion
                                            ? client.ListPromotions(*query)
                                            : client.ListOffloads(*query));
        PrintDocument(out, tasks,
                      [&] { PrintTasks(kind, tasks, name + " list", out); });
        return Status();
      });
}

}  // namespace

void RegisterTasksCommands(CLI::App& app, CliContext& context) {
  RegisterTaskGroup(app, context, TaskKind::kPromotion);
  RegisterTaskGroup(app, context, TaskKind::kOffload);
}

}  // namespace mooncake_tier::cli
