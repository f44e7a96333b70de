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

#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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

}  // namespace mooncake_tier::cli
