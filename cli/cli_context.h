#pragma once

// What every mooncake-tierctl command shares: the global options (parsed
// once, on the top-level app), the command the parse selected, the output
// format, and the exit code.
//
// A command group registers its subcommands on the app and, in each
// subcommand's parse callback, hands the context the Action to run
// (Select). Usage rules that CLI11 cannot express (exactly one of some
// flags, flags that go together) are checked in those callbacks and
// reported by throwing CLI::ValidationError, so every usage error leaves
// through CLI11's parse error path and exits 2. After a successful parse
// main calls Execute, which runs the action, renders its failure, and maps
// it to the exit code.
//
// Exit codes: 0 ok; 1 error (anything else the store or the system
// reports); 2 usage (the command line was wrong); 3 not found (the object,
// group, node or task asked for does not exist: a reason whose canonical
// code is NOT_FOUND).
//
// Thread safety: not thread-safe; used by main's thread only.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "cli/output.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,
  kExitUsage = 2,
  kExitNotFound = 3,
};

// The exit code for a command's final status.
ExitCode ExitCodeFor(const Status& status);

// Options given before (or, thanks to fallthrough, after) the command.
struct GlobalOptions {
  // Base URL of the admin HTTP API (every command group but kv). The kv
  // commands talk to the master over gRPC (--master) and ignore it.
  // Env: MOONCAKE_TIER_ENDPOINT. Default: "http://127.0.0.1:9003".
  std::string endpoint = "http://127.0.0.1:9003";
  // Bearer token for mutating admin calls. Env: MOONCAKE_TIER_TOKEN.
  // Default: empty (none).
  std::string token;
  // "table" or "json". Default: "table".
  std::string output = "table";
  // Deadline of each admin HTTP call (connect, send, receive), in
  // milliseconds; the command line also takes units ("2s", "500ms"). The kv
  // commands use it unless their own --timeout is given. Default: 5000.
  int64_t timeout_ms = 5000;
  // PEM bundle of the CA certificates an https --endpoint's certificate
  // must lead to. Env: MOONCAKE_TIER_TLS_CA (which the kv commands' own
  // --tls-ca reads too). Default: empty (the system's trusted CAs).
  std::string tls_ca;
};

// What a failed command reports beyond its Status. The admin API answers
// with its own wire names, some of which (TOKEN_REQUIRED, NOT_IMPLEMENTED,
// ROUTE_NOT_FOUND, ...) are edge reasons with no ErrorReason: those are
// printed as the server sent them, while the Status (mapped from the HTTP
// status) decides the exit code.
struct Failure {
  // What the user can do; may be empty.
  std::string hint;
  // The server's reason and code; empty means those of the Status.
  std::string reason;
  std::string code;
  // The HTTP status of the failed admin call; 0 when there was none.
  int http_status = 0;
};

class CliContext {
 public:
  // Runs the selected command, printing its results to `out`. OK, or the
  // failure; on failure it may fill `*failure` (a hint, the server's own
  // reason).
  using Action = std::function<Status(Output& out, Failure* failure)>;

  CliContext() = default;
  CliContext(const CliContext&) = delete;
  CliContext& operator=(const CliContext&) = delete;

  // Adds --endpoint, --token, --timeout and -o/--output to `app` (the
  // top-level app) and makes its subcommands accept them after the command
  // too.
  void RegisterGlobalOptions(CLI::App& app);

  // Valid after a successful parse.
  const GlobalOptions& options() const { return options_; }

  // Called by a subcommand's parse callback: the command to run.
  void Select(Action action);

  // Runs the selected action with output to `out` and `err`; returns the
  // exit code. A parse without a selected command is a usage error.
  int Execute(std::ostream& out, std::ostream& err, bool out_is_terminal);

  // Renders a CLI11 parse error of `app` (help and version requests are
  // printed, not errors) and returns the exit code: 0 for help, else 2.
  int HandleParseError(const CLI::App& app, const CLI::ParseError& error,
                       std::ostream& out, std::ostream& err);

 private:
  OutputFormat Format() const;

  GlobalOptions options_;
  CLI::Option* output_option_ = nullptr;
  Action action_;
};

}  // namespace mooncake_tier::cli
