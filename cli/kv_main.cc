// mooncake-tierctl-kv: the `kv` command group of mooncake-tierctl
// (cli/kv_commands.h), as its own binary. mooncake-tierctl runs it for
// `mooncake-tierctl [global options] kv ...` with the same arguments
// (cli/kv_forward.h), so the command line, help and exit codes are those of
// mooncake-tierctl; only this binary links the client library (gRPC, UCX).

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_context.h"
#include "cli/kv_commands.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // A command's standard output is its result (`kv get KEY > FILE`): the
  // client library's log lines go to standard error (UCX's are routed
  // there by the transport).
  spdlog::set_default_logger(spdlog::stderr_color_mt("mooncake-tierctl"));
  CLI::App app("mooncake-tierctl: operator CLI of the mooncake-tier store",
               "mooncake-tierctl");
  mooncake_tier::cli::CliContext context;
  context.RegisterGlobalOptions(app);
  mooncake_tier::cli::RegisterKvCommands(app, context);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 error, 2 usage, 3 not found (the key does not "
      "exist).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return context.HandleParseError(app, error, std::cout, std::cerr);
  }
  return context.Execute(std::cout, std::cerr, isatty(STDOUT_FILENO) == 1);
}
