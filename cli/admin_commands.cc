#include "cli/admin_commands.h"

#include <memory>
#include <utility>

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
      ->check(CLI::Range(size_t{1}, size_t{1000}))
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

}  // namespace mooncake_tier::cli
