// mooncake-tierctl config get|set: GET and PATCH /api/v1/config.

#include <memory>
#include <string>
#include <vector>

#include "cli/admin_commands.h"
#include "cli/config_patch.h"
#include "cli/format.h"
#include "cli/table.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

void PrintConfig(const json& config, Output& out) {
  Table table({"KNOB", "VALUE"});
  for (const auto& [key, value] : FlattenConfig(config)) {
    table.AddRow({key, Cell(value)});
  }
  out.PrintTable(table);
}

struct SetFlags {
  std::vector<std::string> assignments;  // as typed
  std::vector<ConfigAssignment> parsed;  // filled by the parse callback
};

Status RunSet(const SetFlags& flags, AdminClient& client, Output& out,
              Failure* failure) {
  MT_ASSIGN_OR_RETURN(const json before, client.GetConfig());
  Result<json> patch = BuildConfigPatch(before, flags.parsed);
  if (!patch.ok()) {
    failure->hint =
        "'mooncake-tierctl config get' lists the knobs and their current "
        "values; nothing was changed";
    return patch.status();
  }
  Result<AdminReply> reply = client.PatchConfig(*patch);
  if (!reply.ok()) {
    if (failure->http_status == 501) {
      failure->hint =
          "this mooncake-tierd can change only the promotion.* knobs at run "
          "time; nothing was changed";
    } else if (failure->http_status == 400 && failure->hint.empty()) {
      failure->hint = "nothing was changed";
    }
    return reply.status();
  }
  const json changes = ConfigChanges(before, reply->body);
  if (out.json()) {
    out.PrintJson({{"changed", changes}, {"config", reply->body}});
    return Status();
  }
  if (changes.empty()) {
    out.PrintLine("no change (the knobs already had these values)");
  }
  for (const auto& [key, values] : changes.items()) {
    out.PrintLine("changed " + key + ": " + Cell(values[0]) + " -> " +
                  Cell(values[1]));
  }
  return Status();
}

}  // namespace

void RegisterConfigCommands(CLI::App& app, CliContext& context) {
  CLI::App& config = *app.add_subcommand(
      "config", "The effective configuration; change run-time knobs");
  config.require_subcommand(1);

  CLI::App& get = *config.add_subcommand(
      "get", "Every knob and its value (promotion knobs as they are now)");
  get.footer(
      "Durations are milliseconds (fields named *_ms). With -o json: "
      "the server's GET /api/v1/config document.");
  OnAdminCommand(
      get, context, [](AdminClient& client, Output& out, Failure*) -> Status {
        MT_ASSIGN_OR_RETURN(json config, client.GetConfig());
        PrintDocument(out, config, [&] { PrintConfig(config, out); });
        return Status();
      });

  auto flags = std::make_shared<SetFlags>();
  CLI::App& set = *config.add_subcommand(
      "set", "Change run-time knobs: KEY=VALUE [KEY=VALUE...], all or none");
  set.add_option("KEY=VALUE", flags->assignments,
                 "A knob as 'config get' names it (promotion.admission_"
                 "threshold=3, eviction_high_watermark=0.85, "
                 "promotion.task_timeout=30s)")
      ->required();
  set.footer(
      "Values are typed like the knob's current value: true/false, whole "
      "numbers, numbers, strings; durations take a unit (250ms, 30s, 2min, "
      "1h; a bare number is milliseconds) and the _ms of the name may be "
      "left off. The whole change is one PATCH: the server checks it all "
      "before changing anything. Knobs fixed at start are refused "
      "(NOT_RUNTIME_TUNABLE: restart with the new value); a server that "
      "cannot change a knob at run time answers 501. Needs the token when "
      "the server has one. Prints each change 'old -> new'; with -o json "
      "{\"changed\":{\"KEY\":[old,new]},\"config\":{...}}.");
  set.callback([&context, flags] {
    flags->parsed.clear();
    for (const std::string& text : flags->assignments) {
      Result<ConfigAssignment> assignment = ParseAssignment(text);
      if (!assignment.ok()) {
        throw CLI::ValidationError("KEY=VALUE", assignment.status().message());
      }
      flags->parsed.push_back(*assignment);
    }
    context.Select([&context, flags](Output& out, Failure* failure) {
      AdminClient client(context.options(), failure);
      return RunSet(*flags, client, out, failure);
    });
  });
}

}  // namespace mooncake_tier::cli
