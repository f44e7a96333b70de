#include "cli/output.h"

#include <string>

#include "cli/cli_context.h"

namespace mooncake_tier::cli {

Output::Output(std::ostream& out, std::ostream& err, OutputFormat format,
               bool out_is_terminal)
    : out_(out),
      err_(err),
      format_(format),
      out_is_terminal_(out_is_terminal) {}

void Output::PrintJson(const nlohmann::json& document) {
  // Invalid UTF-8 in keys is replaced rather than thrown on.
  out_ << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
       << '\n';
  out_.flush();
}

void Output::PrintLine(std::string_view line) {
  out_ << line << '\n';
  out_.flush();
}

void Output::PrintTable(const Table& table) {
  table.Render(out_);
  out_.flush();
}

void Output::PrintList(const Table& table, std::string_view when_empty) {
  if (table.rows() == 0) {
    PrintLine(when_empty);
    return;
  }
  PrintTable(table);
}

void Output::PrintRaw(std::span<const std::byte> bytes) {
  out_.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  out_.flush();
}

void Output::PrintNote(std::string_view note) {
  err_ << note << '\n';
  err_.flush();
}

namespace {

nlohmann::json ErrorFields(std::string_view reason, std::string_view code,
                           std::string_view message, std::string_view hint,
                           int http_status) {
  nlohmann::json error = {{"reason", std::string(reason)},
                          {"code", std::string(code)},
                          {"message", std::string(message)}};
  if (!hint.empty()) error["hint"] = std::string(hint);
  if (http_status != 0) error["http_status"] = http_status;
  return error;
}

}  // namespace

nlohmann::json ErrorObject(const Status& status, const Failure& failure) {
  return ErrorFields(
      failure.reason.empty() ? ReasonName(status.reason()) : failure.reason,
      failure.code.empty() ? CodeName(status.code()) : failure.code,
      status.message(), failure.hint, failure.http_status);
}

void Output::PrintError(const Status& status, const Failure& failure) {
  PrintErrorDocument(
      failure.reason.empty() ? ReasonName(status.reason()) : failure.reason,
      failure.code.empty() ? CodeName(status.code()) : failure.code,
      status.message(), failure.hint, failure.http_status);
}

void Output::PrintUsageError(std::string_view message, std::string_view hint) {
  PrintErrorDocument("USAGE", CodeName(StatusCode::kInvalidArgument), message,
                     hint, /*http_status=*/0);
}

void Output::PrintErrorDocument(std::string_view reason, std::string_view code,
                                std::string_view message, std::string_view hint,
                                int http_status) {
  err_ << "error: " << reason << ": " << message;
  if (!hint.empty()) err_ << " (" << hint << ")";
  err_ << '\n';
  err_.flush();
  if (!json()) return;
  PrintJson({{"error", ErrorFields(reason, code, message, hint, http_status)}});
}

}  // namespace mooncake_tier::cli
