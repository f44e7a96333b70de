// mooncake-tierctl groups list|get|promote|evict|rm: /api/v1/groups. Group
// ids are percent-encoded into one path segment by the admin client.

#include <memory>
#include <string>

#include "cli/admin_commands.h"
#include "cli/format.h"
#include "cli/table.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

struct GroupFlags {
  std::string id;
  bool force = false;  // rm
};

void PrintGroups(const json& list, const std::string& state, Output& out) {
  Table table({"GROUP", "STATE", "PRESENT/EXPECTED"});
  for (const json& group : Field(list, "groups")) {
    table.AddRow({Cell(group, "id"), Cell(group, "state"),
                  Cell(group, "present") + "/" + Cell(group, "expected")});
  }
  out.PrintList(table,
                state.empty() ? "no groups" : "no groups in state " + state);
  NoteMorePages(list, "groups list", out);
}

void PrintGroup(const json& group, Output& out) {
  out.PrintLine("group:    " + Cell(group, "id"));
  std::string state = Cell(group, "state");
  if (Field(group, "break_cause").is_string()) {
    state += " (" + Cell(group, "break_cause") + ")";
  }
  out.PrintLine("state:    " + state);
  out.PrintLine("members:  " + Cell(group, "present") + " of " +
                Cell(group, "expected") + " present");
  out.PrintLine("");
  Table members({"INDEX", "KEY", "PRESENT", "TIERS"});
  for (const json& member : Field(group, "members")) {
    members.AddRow({Cell(member, "index"), Cell(member, "key"),
                    Cell(member, "present"),
                    JoinCells(Field(member, "tiers"), "-")});
  }
  out.PrintTable(members);
}

ActionTarget Target(const GroupFlags& flags) {
  return {"group '" + flags.id + "'", /*group=*/true,
          "the group is not in a state for this (a complete group whose "
          "members are on SSD only can be promoted); 'mooncake-tierctl "
          "groups get " +
              flags.id + "' shows its members' tiers"};
}

Status RunRemove(const GroupFlags& flags, AdminClient& client, Output& out) {
  MT_ASSIGN_OR_RETURN(AdminReply reply,
                      client.RemoveGroup(flags.id, flags.force));
  PrintDocument(out, reply.body, [&] {
    out.PrintLine("removed group '" + flags.id + "' and every member");
  });
  return Status();
}

CLI::App& AddIdCommand(CLI::App& groups, const char* name,
                       const char* description, GroupFlags& flags) {
  CLI::App& command = *groups.add_subcommand(name, description);
  command.add_option("ID", flags.id, "The group's id")->required();
  return command;
}

void RegisterList(CLI::App& groups, CliContext& context) {
  auto query = std::make_shared<ListQuery>();
  CLI::App& list = *groups.add_subcommand(
      "list", "Groups by id with state and members present/expected");
  list.add_option("--state", query->state, "Only groups in this state")
      ->type_name("S")
      ->check(CLI::IsMember({"filling", "complete", "broken", "expired"}));
  AddListFlags(list, *query);
  list.footer(
      "With -o json: {\"groups\":[{\"id\",\"state\",\"expected\","
      "\"present\"}...],\"next_cursor\"} (merged over every page with "
      "--all).");
  OnAdminCommand(list, context,
                 [query](AdminClient& client, Output& out, Failure*) -> Status {
                   MT_ASSIGN_OR_RETURN(json groups, client.ListGroups(*query));
                   PrintDocument(out, groups, [&] {
                     PrintGroups(groups, query->state, out);
                   });
                   return Status();
                 });
}

}  // namespace

void RegisterGroupsCommands(CLI::App& app, CliContext& context) {
  CLI::App& groups = *app.add_subcommand(
      "groups",
      "Groups (objects that live and go as one unit): list, describe, "
      "promote, evict, remove");
  groups.require_subcommand(1);
  RegisterList(groups, context);

  auto get_flags = std::make_shared<GroupFlags>();
  CLI::App& get = AddIdCommand(
      groups, "get", "State, present/expected, members with their tiers",
      *get_flags);
  get.footer(
      "Exit 3 when the group does not exist. With -o json: the "
      "server's group document.");
  OnAdminCommand(
      get, context,
      [get_flags](AdminClient& client, Output& out, Failure*) -> Status {
        MT_ASSIGN_OR_RETURN(json group, client.GetGroup(get_flags->id));
        PrintDocument(out, group, [&] { PrintGroup(group, out); });
        return Status();
      });

  auto promote_flags = std::make_shared<GroupFlags>();
  CLI::App& promote = AddIdCommand(
      groups, "promote",
      "Forced promotion of a complete, SSD-only group into DRAM, as one unit",
      *promote_flags);
  promote.footer(
      "Prints the queued tasks (HTTP 202); a refusal (409) exits 1 with the "
      "server's reason. With -o json: {\"group\",\"tasks\"}.");
  OnAdminCommand(promote, context,
                 [promote_flags](AdminClient& client, Output& out,
                                 Failure* failure) -> Status {
                   return FinishPromote(client.PromoteGroup(promote_flags->id),
                                        Target(*promote_flags), out, failure);
                 });

  auto evict_flags = std::make_shared<GroupFlags>();
  CLI::App& evict = AddIdCommand(
      groups, "evict",
      "Forced eviction of a group from DRAM, as one unit (offloads first when "
      "offload is on)",
      *evict_flags);
  evict.footer(
      "Prints the bytes freed, or the offload tasks queued first (HTTP 202; "
      "the group leaves DRAM when every member is on SSD). A group still "
      "filling or in use is refused (409, exit 1, nothing changes). With "
      "-o json: {\"group\",\"bytes_freed\","
      "\"offloads\"}.");
  OnAdminCommand(evict, context,
                 [evict_flags](AdminClient& client, Output& out,
                               Failure* failure) -> Status {
                   return FinishEvict(client.EvictGroup(evict_flags->id),
                                      Target(*evict_flags), out, failure);
                 });

  auto rm_flags = std::make_shared<GroupFlags>();
  CLI::App& rm = AddIdCommand(groups, "rm", "Remove every member and the group",
                              *rm_flags);
  rm.add_flag("--force", rm_flags->force, "Remove leased members too");
  rm.footer(
      "Exit 3 when the group does not exist. With -o json: "
      "{\"group\",\"removed\"}.");
  OnAdminCommand(
      rm, context,
      [rm_flags](AdminClient& client, Output& out, Failure*) -> Status {
        return RunRemove(*rm_flags, client, out);
      });
}

}  // namespace mooncake_tier::cli
