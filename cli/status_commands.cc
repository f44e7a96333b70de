// mooncake-tierctl status: GET /api/v1/status at a glance.

#include <cstdio>
#include <string>

#include "cli/admin_commands.h"
#include "cli/format.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;

std::string Count(const json& object, const char* field) {
  return Cell(object, field);
}

// "master:      leader of cluster 'c', term 12 (2 failovers seen)", or a
// standby's role and its leader; nothing for a lone master.
bool PrintRole(const json& s, Output& out) {
  if (!s.is_object() || !s.contains("ha")) return false;
  const json& ha = s["ha"];
  const std::string cluster = "cluster '" + Cell(ha, "cluster") + "'";
  const std::string failovers =
      " (" + Count(ha, "failovers") + " failovers seen)";
  if (Cell(ha, "role") == "leader") {
    out.PrintLine("master:      leader of " + cluster + ", term " +
                  Count(ha, "term") + failovers);
    if (ha.value("recovering", false)) {
      out.PrintLine(
          "             recovering: " + Count(ha, "nodes_registered") + " of " +
          Count(ha, "nodes_expected") + " nodes back; clients wait");
    }
    out.PrintLine("");
    return false;
  }
  const std::string leader = Cell(ha, "leader");
  out.PrintLine("master:      standby of " + cluster + failovers +
                (ha.value("in_sync", false) ? "" : ", NOT in sync"));
  out.PrintLine("leader:      " +
                (leader == "-"
                     ? std::string("none known")
                     : leader + " (term " + Count(ha, "term") + ", admin " +
                           Cell(ha, "leader_admin") + ")"));
  return true;  // a standby has nothing else to show
}

// "if sized: 0.5x (640 MiB) 31.2%, 1x (1.3 GiB) 40.5%, ..." from the
// store's online estimate; nothing until it has sampled a reference.
void PrintForecast(const json& forecast, Output& out) {
  if (!forecast.is_object() || !forecast.contains("points")) return;
  std::string line;
  for (const json& p : forecast["points"]) {
    if (p.value("sampled_references", uint64_t{0}) == 0) return;
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%gx", p.value("scale", 0.0));
    line += std::string(line.empty() ? "" : ", ") + scale + " (" +
            HumanBytes(p.value("capacity_bytes", uint64_t{0})) + ") " +
            Percent(p.value("hit_ratio", 0.0));
  }
  if (line.empty()) return;
  out.PrintLine("if sized:    " + line + " (hit ratio estimated from " +
                Percent(forecast.value("sampling_rate", 0.0)) + " of objects)");
}

void PrintStatus(const json& s, Output& out) {
  if (PrintRole(s, out)) return;
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
  PrintForecast(Field(s, "hit_ratio_forecast"), out);
}

}  // namespace

void RegisterStatusCommands(CLI::App& app, CliContext& context) {
  CLI::App& status = *app.add_subcommand(
      "status",
      "The store at a glance: the master's role in its cluster, tier use, "
      "objects, groups by state, promotion and offload queues, nodes, get "
      "hit counts");
  status.footer("With -o json: the server's GET /api/v1/status document.");
  OnAdminCommand(status, context,
                 [](AdminClient& client, Output& out, Failure*) -> Status {
                   MT_ASSIGN_OR_RETURN(json s, client.GetStatus());
                   PrintDocument(out, s, [&] { PrintStatus(s, out); });
                   return Status();
                 });
}

}  // namespace mooncake_tier::cli
