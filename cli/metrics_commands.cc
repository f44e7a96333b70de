// mooncake-tierctl metrics [--match RE]: GET /metrics, optionally only the
// sample lines RE finds, with the # HELP / # TYPE lines of their families.

#include <memory>
#include <regex>
#include <string>

#include "cli/admin_commands.h"
#include "cli/metrics_filter.h"

namespace mooncake_tier::cli {
namespace {

struct MetricsFlags {
  std::string match;
  bool raw = false;
  std::regex pattern;  // compiled by the parse callback
};

Status RunMetrics(const MetricsFlags& flags, AdminClient& client, Output& out,
                  Failure* failure) {
  MT_ASSIGN_OR_RETURN(const std::string text, client.Metrics());
  std::vector<MetricFamily> families = ParseExposition(text);
  // People read p50 and p99, not dozens of bucket lines; scripts (json)
  // and --raw get the exposition as served.
  if (!flags.raw && !out.json()) {
    families = CollapseHistograms(std::move(families));
  }
  if (!flags.match.empty()) {
    families = FilterFamilies(std::move(families), flags.pattern);
  }
  if (out.json()) {
    out.PrintJson(FamiliesJson(families));
    return Status();
  }
  const std::string rendered = RenderExposition(families);
  if (!rendered.empty()) {
    out.PrintRaw(std::as_bytes(std::span(rendered.data(), rendered.size())));
  } else if (!flags.match.empty()) {
    out.PrintNote("no sample matches '" + flags.match + "'");
  }
  return Status();
}

}  // namespace

void RegisterMetricsCommands(CLI::App& app, CliContext& context) {
  auto flags = std::make_shared<MetricsFlags>();
  CLI::App& metrics = *app.add_subcommand(
      "metrics", "The Prometheus metrics of the daemon (GET /metrics)");
  metrics
      .add_option("--match", flags->match,
                  "Only sample lines this regular expression finds (ECMAScript "
                  "syntax, searched anywhere in the line: name, labels, "
                  "value), with the HELP and TYPE lines of their families")
      ->type_name("RE");
  metrics.add_flag("--raw", flags->raw,
                   "Histograms as served (every _bucket line), not collapsed "
                   "to count, sum, p50 and p99");
  metrics.footer(
      "Prints the text exposition, each histogram collapsed to a summary "
      "(quantile=\"0.5\" and \"0.99\" estimated from its buckets, _sum, "
      "_count) unless --raw; --match applies after that. No match is not an "
      "error (exit 0). With -o json (as served, never collapsed): "
      "{\"families\":[{\"name\",\"type\",\"help\",\"samples\":"
      "[{\"name\",\"labels\",\"value\"}]}]}.");
  metrics.callback([&context, flags] {
    if (!flags->match.empty()) {
      try {
        flags->pattern = std::regex(flags->match, std::regex::ECMAScript);
      } catch (const std::regex_error& error) {
        throw CLI::ValidationError(
            "--match", "'" + flags->match +
                           "' is not a regular expression: " + error.what());
      }
    }
    context.Select([&context, flags](Output& out, Failure* failure) {
      AdminClient client(context.options(), failure);
      return RunMetrics(*flags, client, out, failure);
    });
  });
}

}  // namespace mooncake_tier::cli
