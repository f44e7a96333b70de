#include "cli/admin_commands.h"

#include <memory>
#include <utility>

#include "cli/format.h"
#include "cli/option_checks.h"
#include "cli/table.h"

namespace mooncake_tier::cli {

void OnAdminCommand(CLI::App& command, CliContext& context,
                    AdminAction action) {
  command.callback([&context, action = std::move(action)] {
    context.Select([&context, action](Output& out, Failure* failure) {
      AdminClient client(context.options(), failure);
      return action(client, out, failure);
    });
  });
}

void AddListFlags(CLI::App& command, ListQuery& query) {
  command.add_option("--limit", query.limit, "Items per page (1..1000)")
      ->type_name("N")
      ->check(WholeNumber(1, 1000))
      ->capture_default_str();
  command
      .add_option("--cursor", query.cursor,
                  "Start after this cursor (the next_cursor of a previous "
                  "page)")
      ->type_name("C");
  command.add_flag("--all", query.all,
                   "Follow the pages to the end (--limit is the page size)");
}

void NoteMorePages(const nlohmann::json& list, const std::string& command,
                   Output& out) {
  const std::string next = list.value("next_cursor", "");
  if (next.empty()) return;
  out.PrintNote("more: 'mooncake-tierctl " + command + " --cursor \"" + next +
                "\"' for the next page, or --all for every page");
}

void PrintDocument(Output& out, const nlohmann::json& document,
                   const std::function<void()>& print_table) {
  if (out.json()) {
    out.PrintJson(document);
  } else {
    print_table();
  }
}

void PrintTierTable(const nlohmann::json& tiers, Output& out) {
  Table table({"TIER", "USED", "CAPACITY", "USE"});
  for (const char* tier : {"memory", "local_disk"}) {
    const nlohmann::json& t = Field(tiers, tier);
    table.AddRow(
        {tier, HumanBytes(static_cast<uint64_t>(Number(t, "used_bytes"))),
         HumanBytes(static_cast<uint64_t>(Number(t, "capacity_bytes"))),
         Percent(Number(t, "used_ratio"))});
  }
  out.PrintTable(table);
}

std::string JoinCells(const nlohmann::json& values, const std::string& empty) {
  std::string out;
  if (values.is_array()) {
    for (const nlohmann::json& value : values) {
      out += (out.empty() ? "" : ", ") + Cell(value);
    }
  }
  return out.empty() ? empty : out;
}

namespace {

Status Refused(const Result<AdminReply>& reply, const ActionTarget& target,
               Failure* failure) {
  if (failure->reason == "NOT_APPLICABLE" &&
      !target.not_applicable_hint.empty()) {
    failure->hint = target.not_applicable_hint;
  }
  return reply.status();
}

}  // namespace

Status FinishPromote(Result<AdminReply> reply, const ActionTarget& target,
                     Output& out, Failure* failure) {
  if (!reply.ok()) return Refused(reply, target, failure);
  PrintDocument(out, reply->body, [&] {
    out.PrintLine("promotion of " + target.label + " queued (HTTP " +
                  std::to_string(reply->http_status) +
                  "): " + (target.group ? "tasks " : "task ") +
                  JoinCells(Field(reply->body, "tasks"), "none") + "; follow " +
                  (target.group ? "them" : "it") +
                  " with 'mooncake-tierctl promotions list'");
  });
  return Status();
}

Status FinishEvict(Result<AdminReply> reply, const ActionTarget& target,
                   Output& out, Failure* failure) {
  // A refusal (409: no DRAM copy, filling group, in use) arrives as an
  // error saying nothing changed.
  if (!reply.ok()) return Refused(reply, target, failure);
  PrintDocument(out, reply->body, [&] {
    const uint64_t freed =
        static_cast<uint64_t>(Number(reply->body, "bytes_freed"));
    const nlohmann::json& offloads = Field(reply->body, "offloads");
    const size_t queued = offloads.is_array() ? offloads.size() : 0;
    if (queued == 0) {
      out.PrintLine("evicted " + target.label + " from DRAM: freed " +
                    HumanBytes(freed));
      return;
    }
    // Without an SSD copy the DRAM copy cannot go yet: the master queued
    // the offloads and drops the DRAM copies as each lands. Say so, not
    // "evicted".
    const bool many = queued > 1;
    std::string line =
        std::string(freed > 0 ? "freed " + HumanBytes(freed) + " of DRAM; "
                              : "") +
        "queued " + std::to_string(queued) + (many ? " offloads" : " offload") +
        " of " + target.label + " (" + (many ? "tasks " : "task ") +
        JoinCells(offloads, "none") + "); " +
        (many ? "the DRAM copies go when they land"
              : "the DRAM copy goes when it lands") +
        " ('mooncake-tierctl offloads list')";
    out.PrintLine(line);
  });
  return Status();
}

}  // namespace mooncake_tier::cli
