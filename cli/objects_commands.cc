// mooncake-tierctl objects get|rm|promote|evict KEY: /api/v1/objects/{key}.
// KEY is percent-encoded into one path segment by the admin client, so it
// may hold '/', spaces or any byte.

#include <memory>
#include <optional>
#include <string>

#include "cli/admin_commands.h"
#include "cli/format.h"
#include "cli/table.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

struct ObjectFlags {
  std::string key;
  bool force = false;  // rm
};

void PrintObject(const json& object, Output& out) {
  out.PrintLine("key:          " + Cell(object, "key"));
  out.PrintLine("size:         " +
                HumanBytes(static_cast<uint64_t>(Number(object, "size"))) +
                " (" + Cell(object, "size") + " bytes)");
  const json& group = Field(object, "group");
  out.PrintLine("group:        " +
                (group.is_object()
                     ? Cell(group, "id") + " (member " + Cell(group, "index") +
                           " of " + Cell(group, "size") + ")"
                     : std::string("-")));
  out.PrintLine("lease:        " +
                (Number(object, "lease_remaining_ms") > 0
                     ? HumanMillis(static_cast<int64_t>(
                           Number(object, "lease_remaining_ms"))) +
                           " left"
                     : std::string("none")));
  out.PrintLine(
      "last access:  " +
      HumanMillis(static_cast<int64_t>(Number(object, "last_access_age_ms"))) +
      " ago");
  out.PrintLine("pins:         " + Cell(object, "pins") +
                (Field(object, "hard_pin") == true ? " (hard pinned)" : ""));
  Table replicas({"REPLICA", "TIER", "STATE", "NODE", "SIZE", "REFCNT"});
  for (const json& replica : Field(object, "replicas")) {
    replicas.AddRow({Cell(replica, "id"), Cell(replica, "tier"),
                     Cell(replica, "state"), Cell(replica, "node"),
                     Cell(replica, "size"), Cell(replica, "refcnt")});
  }
  out.PrintLine("");
  out.PrintTable(replicas);
}

// The group `key` belongs to, if the server can tell; nullopt otherwise.
std::optional<std::string> GroupOf(AdminClient& client,
                                   const std::string& key) {
  Failure ignored;
  AdminClient probe_client(client.options(), &ignored);
  Result<json> object = probe_client.GetObject(key);
  if (!object.ok()) return std::nullopt;
  const json& group = Field(*object, "group");
  if (!group.is_object() || !Field(group, "id").is_string()) {
    return std::nullopt;
  }
  return Field(group, "id").get<std::string>();
}

// A group's state after one of its members went: its state, or "removed".
std::string GroupStateAfter(AdminClient& client, const std::string& group) {
  Failure ignored;
  AdminClient probe_client(client.options(), &ignored);
  Result<json> described = probe_client.GetGroup(group);
  if (described.ok()) return Cell(*described, "state");
  if (described.status().code() == StatusCode::kNotFound) return "removed";
  return "unknown (" + ignored.reason + ")";
}

Status RunRemove(const ObjectFlags& flags, AdminClient& client, Output& out) {
  const std::optional<std::string> group = GroupOf(client, flags.key);
  MT_ASSIGN_OR_RETURN(AdminReply reply,
                      client.RemoveObject(flags.key, flags.force));
  // Removing a member acts on its group (the group remove policy): say
  // what became of the group.
  std::optional<std::string> state;
  if (group) state = GroupStateAfter(client, *group);
  if (out.json()) {
    json document = reply.body;
    document["group"] =
        group ? json{{"id", *group}, {"state", *state}} : json(nullptr);
    out.PrintJson(document);
    return Status();
  }
  std::string line = "removed '" + flags.key + "'";
  if (group && *state == "removed") {
    line +=
        " and, by the group remove policy, its whole group '" + *group + "'";
  } else if (group) {
    line += "; its group '" + *group + "' is now " + *state;
  }
  out.PrintLine(line);
  return Status();
}

ActionTarget Target(const ObjectFlags& flags) {
  return {"'" + flags.key + "'", /*group=*/false,
          "only an object with a copy on SSD and none in DRAM can be "
          "promoted; 'mooncake-tierctl objects get " +
              flags.key + "' shows its replicas"};
}

CLI::App& AddKeyCommand(CLI::App& objects, const char* name,
                        const char* description, ObjectFlags& flags) {
  CLI::App& command = *objects.add_subcommand(name, description);
  command.add_option("KEY", flags.key, "The object's key")->required();
  return command;
}

}  // namespace

void RegisterObjectsCommands(CLI::App& app, CliContext& context) {
  CLI::App& objects = *app.add_subcommand(
      "objects", "One object by key: describe, remove, promote, evict");
  objects.require_subcommand(1);

  auto get_flags = std::make_shared<ObjectFlags>();
  CLI::App& get = AddKeyCommand(
      objects, "get",
      "Size, group, replicas (tier, state, node, refcnt), lease and pins "
      "(grants no lease, is not an access)",
      *get_flags);
  get.footer(
      "Exit 3 when KEY does not exist. With -o json: the server's "
      "object document.");
  OnAdminCommand(
      get, context,
      [get_flags](AdminClient& client, Output& out, Failure*) -> Status {
        MT_ASSIGN_OR_RETURN(json object, client.GetObject(get_flags->key));
        PrintDocument(out, object, [&] { PrintObject(object, out); });
        return Status();
      });

  auto rm_flags = std::make_shared<ObjectFlags>();
  CLI::App& rm = AddKeyCommand(
      objects, "rm", "Remove KEY (follows the group remove policy)", *rm_flags);
  rm.add_flag("--force", rm_flags->force,
              "Remove even while a reader holds a lease");
  rm.footer(
      "Needs the token when the server has one. Exit 3 when KEY does not "
      "exist. With -o json: {\"key\",\"removed\",\"group\"}, group "
      "{\"id\",\"state\"} or null.");
  OnAdminCommand(
      rm, context,
      [rm_flags](AdminClient& client, Output& out, Failure*) -> Status {
        return RunRemove(*rm_flags, client, out);
      });

  auto promote_flags = std::make_shared<ObjectFlags>();
  CLI::App& promote = AddKeyCommand(
      objects, "promote",
      "Forced promotion of an SSD-only object into DRAM (bypasses admission, "
      "not capacity)",
      *promote_flags);
  promote.footer(
      "Prints the queued task (HTTP 202); a refusal (409: NOT_APPLICABLE, "
      "OBJECT_BUSY) exits 1 with the server's reason. With -o json: "
      "{\"key\",\"tasks\"}.");
  OnAdminCommand(promote, context,
                 [promote_flags](AdminClient& client, Output& out,
                                 Failure* failure) -> Status {
                   return FinishPromote(
                       client.PromoteObject(promote_flags->key),
                       Target(*promote_flags), out, failure);
                 });

  auto evict_flags = std::make_shared<ObjectFlags>();
  CLI::App& evict = AddKeyCommand(
      objects, "evict",
      "Forced eviction of KEY from DRAM (offloads it first when offload is "
      "on)",
      *evict_flags);
  evict.footer(
      "Prints the bytes freed, or the offload tasks queued first (HTTP "
      "202). An object without a DRAM copy or in use is refused (409, "
      "exit 1, nothing changes). With -o json: "
      "{\"key\",\"bytes_freed\",\"offloads\"}.");
  OnAdminCommand(evict, context,
                 [evict_flags](AdminClient& client, Output& out,
                               Failure* failure) -> Status {
                   ActionTarget target = Target(*evict_flags);
                   target.not_applicable_hint.clear();  // a promote's hint
                   return FinishEvict(client.EvictObject(evict_flags->key),
                                      target, out, failure);
                 });
}

}  // namespace mooncake_tier::cli
