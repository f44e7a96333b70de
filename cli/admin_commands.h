#pragma once

// The admin command groups of mooncake-tierctl (over the admin HTTP API,
// through AdminClient), one .cc file each, and the few helpers they share.
//
//   status                         status_commands.cc
//   nodes list                     nodes_commands.cc
//   objects get|rm|promote|evict   objects_commands.cc
//   groups list|get|promote|evict|rm   groups_commands.cc
//   promotions list, offloads list tasks_commands.cc
//   config get|set                 config_commands.cc
//   metrics                        metrics_commands.cc
//   top                            top_command.cc
//
// Thread safety: registration and actions run on main's thread only.

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/admin_client.h"
#include "cli/cli_context.h"
#include "cli/output.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::cli {

void RegisterStatusCommands(CLI::App& app, CliContext& context);
void RegisterNodesCommands(CLI::App& app, CliContext& context);
void RegisterObjectsCommands(CLI::App& app, CliContext& context);
void RegisterGroupsCommands(CLI::App& app, CliContext& context);
void RegisterTasksCommands(CLI::App& app, CliContext& context);
void RegisterConfigCommands(CLI::App& app, CliContext& context);
void RegisterMetricsCommands(CLI::App& app, CliContext& context);
void RegisterTopCommand(CLI::App& app, CliContext& context);

// ---- Shared by the groups above ----

// An admin command's work: talks through `client`, prints to `out`, may
// refine `failure` (its hint) when it fails.
using AdminAction =
    std::function<Status(AdminClient& client, Output& out, Failure* failure)>;

// Makes `command`'s parse callback select `action`, run with an
// AdminClient over the global options (endpoint, token, timeout).
void OnAdminCommand(CLI::App& command, CliContext& context, AdminAction action);

// --limit N, --cursor C, --all on a list command. `query` must outlive the
// app.
void AddListFlags(CLI::App& command, ListQuery& query);

// After a list in table format: when the server has more, a note (stderr)
// with the cursor and how to see the rest.
void NoteMorePages(const nlohmann::json& list, const std::string& command,
                   Output& out);

// Prints `document` as is in json format; otherwise calls `print_table`.
void PrintDocument(Output& out, const nlohmann::json& document,
                   const std::function<void()>& print_table);

// The TIER/USED/CAPACITY/USE table of a status document's "tiers" object
// (status and top).
void PrintTierTable(const nlohmann::json& tiers, Output& out);

// The cells of a JSON list joined with ", "; `empty` for an empty list.
std::string JoinCells(const nlohmann::json& values, const std::string& empty);

// What a forced promotion or eviction acts on (objects and groups).
struct ActionTarget {
  // "'KEY'" or "group 'ID'", for the messages.
  std::string label;
  // A group: its tasks and DRAM copies are plural.
  bool group = false;
  // The hint for a refusal with reason NOT_APPLICABLE; empty: the server's.
  std::string not_applicable_hint;
};
// Finishes a promote call: the queued tasks (json: the server's document),
// or the failure with the target's hint.
Status FinishPromote(Result<AdminReply> reply, const ActionTarget& target,
                     Output& out, Failure* failure);
// Finishes an evict call: the bytes freed and any offloads queued first.
Status FinishEvict(Result<AdminReply> reply, const ActionTarget& target,
                   Output& out, Failure* failure);

}  // namespace mooncake_tier::cli
