#include "cli/cli_context.h"

#include <cctype>
#include <exception>
#include <map>
#include <ostream>
#include <utility>

#include "cli/admin_client.h"
#include "cli/option_checks.h"

namespace mooncake_tier::cli {
namespace {

std::string Lower(std::string text) {
  for (char& c : text) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

// "mooncake-tierctl kv put": the command path the parse got to.
std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  const CLI::App* current = &app;
  while (!current->get_subcommands().empty()) {
    current = current->get_subcommands().front();
    path += " " + current->get_name();
  }
  return path;
}

}  // namespace

ExitCode ExitCodeFor(const Status& status) {
  if (status.ok()) return kExitOk;
  if (status.code() == StatusCode::kNotFound) return kExitNotFound;
  return kExitError;
}

void CliContext::RegisterGlobalOptions(CLI::App& app) {
  // Subcommands created after this inherit it: `kv get K -o json` works.
  app.fallthrough();
  app.add_option("--endpoint", options_.endpoint,
                 "Admin HTTP API base URL, http[s]://HOST:PORT[/PREFIX] (admin "
                 "command groups; the kv commands use --master instead)")
      ->envname("MOONCAKE_TIER_ENDPOINT")
      ->type_name("URL")
      ->check(CLI::Validator(
          [](std::string& url) {
            Result<AdminEndpoint> endpoint = ParseEndpoint(url);
            return endpoint.ok() ? std::string() : endpoint.status().message();
          },
          ""))
      ->capture_default_str();
  app.add_option("--token", options_.token,
                 "Bearer token for mutating admin calls")
      ->envname("MOONCAKE_TIER_TOKEN");
  app.add_option("--tls-ca", options_.tls_ca,
                 "For an https --endpoint: PEM bundle of the CA certificates "
                 "its certificate must lead to (default: the system's)")
      ->type_name("PATH")
      ->envname("MOONCAKE_TIER_TLS_CA");
  app.add_option("--timeout", options_.timeout_ms,
                 "Deadline of each admin HTTP call; a number is milliseconds, "
                 "or give a unit: 500ms, 2s, 1min")
      ->type_name("DURATION")
      ->transform(CLI::AsNumberWithUnit(std::map<std::string, int64_t>{
          {"ms", 1}, {"s", 1000}, {"min", 60000}}))
      ->check(WholeNumber(1, std::numeric_limits<uint64_t>::max(), "ms"))
      ->capture_default_str();
  output_option_ =
      app.add_option("-o,--output", options_.output,
                     "Output format: table (for people) or json (one JSON "
                     "document per command, errors as {\"error\":{...}})")
          ->transform(CLI::IsMember({"table", "json"}, CLI::ignore_case))
          ->capture_default_str();
}

void CliContext::Select(Action action) { action_ = std::move(action); }

OutputFormat CliContext::Format() const {
  // After a failed parse the option's callback may not have run; its raw
  // results are there either way.
  if (output_option_ != nullptr && output_option_->count() > 0) {
    const std::string given = Lower(output_option_->results().back());
    return given == "json" ? OutputFormat::kJson : OutputFormat::kTable;
  }
  return Lower(options_.output) == "json" ? OutputFormat::kJson
                                          : OutputFormat::kTable;
}

int CliContext::Execute(std::ostream& out, std::ostream& err,
                        bool out_is_terminal) {
  Output output(out, err, Format(), out_is_terminal);
  if (!action_) {
    output.PrintUsageError("no command given",
                           "run 'mooncake-tierctl --help' for the commands");
    return kExitUsage;
  }
  Failure failure;
  Status status;
  try {
    status = action_(output, &failure);
  } catch (const std::exception& error) {
    // An answer of a shape no command expected (a JSON type error, ...):
    // an error, never a crash.
    status = Status(ErrorReason::kInternal,
                    std::string("unexpected answer: ") + error.what());
    failure.hint = "is --endpoint the admin API of a matching mooncake-tierd?";
  }
  if (!status.ok()) output.PrintError(status, failure);
  return ExitCodeFor(status);
}

int CliContext::HandleParseError(const CLI::App& app,
                                 const CLI::ParseError& error,
                                 std::ostream& out, std::ostream& err) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    return app.exit(error, out, err);  // --help, --help-all
  }
  Output output(out, err, Format(), /*out_is_terminal=*/false);
  output.PrintUsageError(
      error.what(), "run '" + CommandPath(app) + " --help' for the options");
  return kExitUsage;
}

}  // namespace mooncake_tier::cli
