#pragma once

// Where a command's results and errors go. Every command prints through
// one Output, so that the format rules hold everywhere:
// - table (default): human lines and tables on stdout;
// - json (-o json): exactly one JSON document on stdout per command, the
//   result or {"error": {...}}.
// Errors always also go to stderr as one line naming the reason and what to
// do, so a person running `-o json` still sees them.
//
// Thread safety: not thread-safe; one command uses it from one thread.

#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string_view>

#include "cli/table.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::cli {

enum class OutputFormat { kTable, kJson };

struct Failure;  // cli/cli_context.h

// {"reason","code","message"[,"hint"][,"http_status"]} of a failed
// command, as PrintError reports it: the failure's (the server's) reason
// and code when it has them, else the status's.
nlohmann::json ErrorObject(const Status& status, const Failure& failure);

class Output {
 public:
  // `out` and `err` must outlive the Output. `out_is_terminal` says whether
  // `out` is a terminal (commands that print raw bytes check it).
  Output(std::ostream& out, std::ostream& err, OutputFormat format,
         bool out_is_terminal);

  OutputFormat format() const { return format_; }
  bool json() const { return format_ == OutputFormat::kJson; }
  bool out_is_terminal() const { return out_is_terminal_; }

  // The result document of a command (json format).
  void PrintJson(const nlohmann::json& document);
  // One human line (table format).
  void PrintLine(std::string_view line);
  void PrintTable(const Table& table);
  // A list: the table, or `when_empty` ("no groups") alone when it has no
  // rows, rather than a bare header.
  void PrintList(const Table& table, std::string_view when_empty);
  // Bytes exactly as given (a value written to a pipe).
  void PrintRaw(std::span<const std::byte> bytes);
  // A note for people that must not mix with the data on stdout.
  void PrintNote(std::string_view note);

  // A failed command: stderr gets "error: REASON: message" plus the hint
  // when there is one; in json format stdout also gets
  // {"error": {"reason", "code", "message", "hint", "http_status"}}. The
  // reason and code are the failure's (the server's) when it has them, else
  // the status's; http_status only when an admin call failed.
  void PrintError(const Status& status, const Failure& failure);
  // A command line that could not be parsed or broke a rule; reason
  // "USAGE", code "INVALID_ARGUMENT".
  void PrintUsageError(std::string_view message, std::string_view hint);

 private:
  void PrintErrorDocument(std::string_view reason, std::string_view code,
                          std::string_view message, std::string_view hint,
                          int http_status);

  std::ostream& out_;
  std::ostream& err_;
  const OutputFormat format_;
  const bool out_is_terminal_;
};

}  // namespace mooncake_tier::cli
