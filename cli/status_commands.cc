// mooncake-tierctl status: GET /api/v1/status at a glance.

#include <string>

#include "cli/admin_commands.h"
#include "cli/format.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

std::string Count(const json& object, const char* field) {
  return Cell(object, field);
}

void PrintStatus(const json& s, Output& out) {
  PrintTierTable(Field(s, "tiers"), out);
  out.PrintLine("");
  const json& groups = Field(s, "groups");
  const json& promotions = Field(s, "promotions");
  const json& offloads = Field(s, "offloads");
  const json& nodes = Field(s, "nodes");
  const json& gets = Field(s, "gets");
  const double hits =
      Number(gets, "memory_hit") + Number(gets, "local_disk_hit");
  const double total = hits + Number(gets, "miss");
  out.PrintLine("objects:     " + Count(s, "objects") + " (" +
                Count(s, "pending_puts") + " puts in progress)");
  out.PrintLine(
      "groups:      filling " + Count(groups, "filling") + ", complete " +
      Count(groups, "complete") + ", broken " + Count(groups, "broken") +
      ", expired " + Count(groups, "expired") + " (filling groups hold " +
      HumanBytes(static_cast<uint64_t>(Number(groups, "filling_bytes"))) + ")");
  out.PrintLine("promotions:  " + Count(promotions, "in_flight") +
                " in flight, " + Count(promotions, "queued") + " queued, " +
                Count(promotions, "completed_total") + " completed");
  out.PrintLine("offloads:    " + Count(offloads, "queued") + " queued, " +
                Count(offloads, "dispatched") + " dispatched, " +
                Count(offloads, "completed_total") + " completed");
  out.PrintLine("nodes:       " + Count(nodes, "alive") + " alive, " +
                Count(nodes, "suspect") + " suspect");
  out.PrintLine("gets:        " + Count(gets, "memory_hit") + " memory hits, " +
                Count(gets, "local_disk_hit") + " local_disk hits, " +
                Count(gets, "miss") + " misses (hit ratio " +
                (total > 0 ? Percent(hits / total) : std::string("-")) +
                ", from DRAM " +
                (total > 0 ? Percent(Number(gets, "memory_hit") / total)
                           : std::string("-")) +
                ")");
}

}  // namespace

void RegisterStatusCommands(CLI::App& app, CliContext& context) {
  CLI::App& status = *app.add_subcommand(
      "status",
      "The store at a glance: tier use, objects, groups by state, promotion "
      "and offload queues, nodes, get hit counts");
  status.footer("With -o json: the server's GET /api/v1/status document.");
  OnAdminCommand(status, context,
                 [](AdminClient& client, Output& out, Failure*) -> Status {
                   MT_ASSIGN_OR_RETURN(json s, client.GetStatus());
                   PrintDocument(out, s, [&] { PrintStatus(s, out); });
                   return Status();
                 });
}

}  // namespace mooncake_tier::cli
