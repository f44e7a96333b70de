// mooncake-tierctl: the operator CLI of mooncake-tier.
//
//   mooncake-tierctl [--endpoint URL] [--token T] [-o table|json] <group> ...
//
// main builds the app, parses the global options once, lets each command
// group register its subcommands, and runs the one the parse selected
// (cli/cli_context.h has the flow and the exit codes). A command group is
// one file with one Register...Commands function: the admin groups of the
// operator surface (status, nodes, objects, groups, promotions, offloads,
// config, metrics, top; over the admin HTTP API, cli/admin_commands.h).
// The kv group (data-path checks over gRPC and UCX) is a second binary,
// mooncake-tierctl-kv (kv_main.cc), which this one runs for `kv ...`
// (cli/kv_forward.h): this binary links no client library.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/admin_commands.h"
#include "cli/cli_context.h"
#include "cli/kv_forward.h"

namespace {

using mooncake_tier::cli::CliContext;

using RegisterCommandGroup = void (*)(CLI::App&, CliContext&);

// In the order `--help` lists them.
constexpr RegisterCommandGroup kCommandGroups[] = {
    &mooncake_tier::cli::RegisterStatusCommands,
    &mooncake_tier::cli::RegisterNodesCommands,
    &mooncake_tier::cli::RegisterObjectsCommands,
    &mooncake_tier::cli::RegisterGroupsCommands,
    &mooncake_tier::cli::RegisterTasksCommands,
    &mooncake_tier::cli::RegisterConfigCommands,
    &mooncake_tier::cli::RegisterMetricsCommands,
    &mooncake_tier::cli::RegisterTopCommand,
    &mooncake_tier::cli::RegisterKvForwarder,
};

constexpr char kFooter[] =
    "Exit codes: 0 ok, 1 error, 2 usage, 3 not found (the key, group, node "
    "or task does not exist).\n"
    "The admin commands talk to the admin HTTP API at --endpoint (default "
    "http://127.0.0.1:9003, the daemon's --admin-listen); mutating ones "
    "(rm, promote, evict, config set) need --token when the daemon has "
    "--admin-token.\n"
    "Errors go to stderr as one line: 'error: REASON: message (what to "
    "do)'; with -o json stdout also gets {\"error\":{\"reason\",\"code\","
    "\"message\",\"hint\"}}.\n"
    "Environment: MOONCAKE_TIER_ENDPOINT, MOONCAKE_TIER_TOKEN (for --endpoint "
    "and --token).";

}  // namespace

int main(int argc, char** argv) {
  // Runs mooncake-tierctl-kv for `kv ...`; returns if it is not `kv`, or
  // when that binary cannot be run (the kv stub then says why).
  const bool kv_unavailable = mooncake_tier::cli::ForwardKv(argc, argv);
  CLI::App app("mooncake-tierctl: operator CLI of the mooncake-tier store",
               "mooncake-tierctl");
  CliContext context;
  context.RegisterGlobalOptions(app);
  for (RegisterCommandGroup register_group : kCommandGroups) {
    register_group(app, context);
  }
  app.require_subcommand(1);
  app.footer(kFooter);
  if (kv_unavailable) app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return context.HandleParseError(app, error, std::cout, std::cerr);
  }
  return context.Execute(std::cout, std::cerr, isatty(STDOUT_FILENO) == 1);
}
