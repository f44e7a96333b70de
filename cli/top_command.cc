// mooncake-tierctl top: a live view of the store, refreshed every
// --interval (1 s) from GET /api/v1/status: tier use, get hit ratios, get,
// promotion and offload rates (the change of the status counters between
// two successive reads over the time between them), queues, how DRAM is
// held and the writeback pipeline (writeback rate, puts waiting for room
// and their mean wait, puts refused), groups by state, nodes. No curses: on a
// terminal each frame starts by clearing the screen with ANSI codes; otherwise
// frames follow one another. With -o json each frame is one JSON line (JSON
// Lines). --iterations N stops after N frames (0: until interrupted).
//
// Frames keep to the --interval schedule; a read slower than the interval
// delays the next frame, never makes a burst of them. A failed first read
// ends top (the endpoint or token is wrong); after that, a failed read is
// a frame showing the error ({"error": {...}} in json), top keeps going
// and rates restart from the next good read.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "cli/admin_commands.h"
#include "cli/format.h"
#include "cli/option_checks.h"
#include "cli/output.h"
#include "cli/table.h"

namespace mooncake_tier::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kClearScreen[] = "\x1b[H\x1b[2J";

struct TopFlags {
  int64_t iterations = 0;
  int64_t interval_ms = 1000;
};

struct Snapshot {
  json status;
  Clock::time_point at;
};

double Counter(const json& status, const char* section, const char* field) {
  return Number(Field(status, section), field);
}

// (now - before) / seconds of a counter, or null when there is no earlier
// read or the counter went back (the daemon restarted).
json PerSecond(const std::optional<Snapshot>& before, const Snapshot& now,
               const char* section, const char* field) {
  if (!before) return nullptr;
  const double seconds =
      std::chrono::duration<double>(now.at - before->at).count();
  const double delta = Counter(now.status, section, field) -
                       Counter(before->status, section, field);
  if (seconds <= 0 || delta < 0) return nullptr;
  return delta / seconds;
}

// {"memory_hit","local_disk_hit","miss"} shares of gets; null with none.
json HitRatios(double memory, double disk, double miss) {
  const double total = memory + disk + miss;
  if (total <= 0) return nullptr;
  return {{"memory_hit", memory / total},
          {"local_disk_hit", disk / total},
          {"miss", miss / total},
          {"hit", (memory + disk) / total}};
}

// One frame: the levels of `now` and the rates since `before`.
json Frame(const std::optional<Snapshot>& before, const Snapshot& now) {
  const json& s = now.status;
  auto gets = [&](const json& status, const char* field) {
    return Counter(status, "gets", field);
  };
  json interval_ratios = nullptr;
  double interval_gets = 0;
  if (before) {
    const double memory =
        gets(s, "memory_hit") - gets(before->status, "memory_hit");
    const double disk =
        gets(s, "local_disk_hit") - gets(before->status, "local_disk_hit");
    const double miss = gets(s, "miss") - gets(before->status, "miss");
    if (memory >= 0 && disk >= 0 && miss >= 0) {
      interval_ratios = HitRatios(memory, disk, miss);
      interval_gets = memory + disk + miss;
    }
  }
  json gets_per_second = nullptr;
  if (before) {
    const double seconds =
        std::chrono::duration<double>(now.at - before->at).count();
    if (seconds > 0) gets_per_second = interval_gets / seconds;
  }
  const json& promotions = Field(s, "promotions");
  const json& offloads = Field(s, "offloads");
  const json& memory = Field(s, "memory");
  // The mean wait of the puts that waited in the interval.
  json wait_ms = nullptr;
  if (before) {
    const double waits = Counter(s, "memory", "put_waits_total") -
                         Counter(before->status, "memory", "put_waits_total");
    const double seconds =
        Counter(s, "memory", "put_wait_seconds_total") -
        Counter(before->status, "memory", "put_wait_seconds_total");
    if (waits > 0 && seconds >= 0) wait_ms = seconds * 1000 / waits;
  }
  return {
      {"interval_seconds",
       before ? json(std::chrono::duration<double>(now.at - before->at).count())
              : json(nullptr)},
      {"tiers", Field(s, "tiers")},
      {"objects", Field(s, "objects")},
      {"pending_puts", Field(s, "pending_puts")},
      {"gets",
       {{"per_second", gets_per_second},
        {"interval", interval_ratios},
        {"since_start",
         HitRatios(gets(s, "memory_hit"), gets(s, "local_disk_hit"),
                   gets(s, "miss"))}}},
      {"promotions",
       {{"completed_per_second",
         PerSecond(before, now, "promotions", "completed_total")},
        {"in_flight", Field(promotions, "in_flight")},
        {"queued", Field(promotions, "queued")}}},
      {"offloads",
       {{"completed_per_second",
         PerSecond(before, now, "offloads", "completed_total")},
        {"queued", Field(offloads, "queued")},
        {"dispatched", Field(offloads, "dispatched")}}},
      {"memory",
       {{"held", Field(memory, "held")},
        {"reserve_bytes", Field(memory, "reserve_bytes")},
        {"writeback_bytes_per_second",
         PerSecond(before, now, "memory", "writeback_bytes_total")},
        {"put_waits_per_second",
         PerSecond(before, now, "memory", "put_waits_total")},
        {"put_wait_mean_ms", wait_ms},
        {"put_evictions_per_second",
         PerSecond(before, now, "memory", "put_evictions_total")},
        {"put_no_space_per_second",
         PerSecond(before, now, "memory", "put_no_space_total")}}},
      {"groups", Field(s, "groups")},
      {"nodes", Field(s, "nodes")}};
}

std::string RateCell(const json& value) {
  return value.is_number() ? Rate(value.get<double>()) : "-";
}

std::string BytesCell(const json& object, const char* field) {
  const json& value = Field(object, field);
  return value.is_number_unsigned() ? HumanBytes(value.get<uint64_t>()) : "-";
}

// How DRAM is held, and the pipeline's rates: writeback, puts waiting for
// room (and how long), puts dropping clean units, puts refused.
void PrintMemory(const json& memory, Output& out) {
  const json& held = Field(memory, "held");
  out.PrintLine(
      "dram:     free " + BytesCell(held, "free") + "  clean " +
      BytesCell(held, "clean") + " (reserve " +
      BytesCell(memory, "reserve_bytes") + ")  dirty " +
      BytesCell(held, "dirty") + "  writeback " + BytesCell(held, "writeback") +
      "  leased " + BytesCell(held, "leased") + "  in flight " +
      BytesCell(held, "in_flight") + "  filling " + BytesCell(held, "filling"));
  const json& bytes_rate = Field(memory, "writeback_bytes_per_second");
  const json& wait = Field(memory, "put_wait_mean_ms");
  out.PrintLine(
      "pipeline: writeback " +
      (bytes_rate.is_number()
           ? HumanBytes(static_cast<uint64_t>(bytes_rate.get<double>())) + "/s"
           : std::string("-")) +
      "  put waits " + RateCell(Field(memory, "put_waits_per_second")) +
      (wait.is_number()
           ? " (mean " + HumanMillis(static_cast<int64_t>(wait.get<double>())) +
                 ")"
           : std::string()) +
      "  put evictions " + RateCell(Field(memory, "put_evictions_per_second")) +
      "  no space " + RateCell(Field(memory, "put_no_space_per_second")));
}

std::string RatioCell(const json& ratios, const char* field) {
  const json& value = Field(ratios, field);
  return value.is_number() ? Percent(value.get<double>()) : "-";
}

std::string Title(const std::string& endpoint, int64_t number,
                  const TopFlags& flags) {
  std::string title = "mooncake-tier top  " + endpoint + "  every " +
                      HumanMillis(flags.interval_ms) + "  frame " +
                      std::to_string(number);
  if (flags.iterations > 0) title += "/" + std::to_string(flags.iterations);
  return title;
}

void PrintFrame(const json& frame, const std::string& endpoint, int64_t number,
                const TopFlags& flags, Output& out) {
  out.PrintLine(Title(endpoint, number, flags));
  out.PrintLine("");

  PrintTierTable(Field(frame, "tiers"), out);
  out.PrintLine("");

  const json& gets = Field(frame, "gets");
  Table hits({"GETS", "RATE", "HIT", "MEMORY_HIT", "LOCAL_DISK_HIT", "MISS"});
  const json& interval = Field(gets, "interval");
  hits.AddRow({"last interval", RateCell(Field(gets, "per_second")),
               RatioCell(interval, "hit"), RatioCell(interval, "memory_hit"),
               RatioCell(interval, "local_disk_hit"),
               RatioCell(interval, "miss")});
  const json& total = Field(gets, "since_start");
  hits.AddRow({"since start", "", RatioCell(total, "hit"),
               RatioCell(total, "memory_hit"),
               RatioCell(total, "local_disk_hit"), RatioCell(total, "miss")});
  out.PrintTable(hits);
  out.PrintLine("");

  Table tasks({"TASKS", "COMPLETED", "IN_FLIGHT", "QUEUED"});
  const json& promotions = Field(frame, "promotions");
  const json& offloads = Field(frame, "offloads");
  tasks.AddRow({"promotions",
                RateCell(Field(promotions, "completed_per_second")),
                Cell(promotions, "in_flight"), Cell(promotions, "queued")});
  tasks.AddRow({"offloads", RateCell(Field(offloads, "completed_per_second")),
                Cell(offloads, "dispatched"), Cell(offloads, "queued")});
  out.PrintTable(tasks);
  out.PrintLine("");

  PrintMemory(Field(frame, "memory"), out);
  const json& groups = Field(frame, "groups");
  out.PrintLine("groups:   filling " + Cell(groups, "filling") + "  complete " +
                Cell(groups, "complete") + "  broken " +
                Cell(groups, "broken") + "  expired " +
                Cell(groups, "expired"));
  const json& nodes = Field(frame, "nodes");
  out.PrintLine("nodes:    alive " + Cell(nodes, "alive") + "  suspect " +
                Cell(nodes, "suspect"));
  out.PrintLine("objects:  " + Cell(frame, "objects") + " (" +
                Cell(frame, "pending_puts") + " puts in progress)");
  if (!Field(frame, "interval_seconds").is_number()) {
    out.PrintLine("(rates from the next frame on)");
  }
}

// Starts a frame: clears the screen on a terminal, else separates it from
// the one before.
void StartFrame(int64_t number, Output& out) {
  if (out.out_is_terminal()) {
    out.PrintRaw(
        std::as_bytes(std::span(kClearScreen)).first(sizeof(kClearScreen) - 1));
  } else if (number > 1) {
    out.PrintLine("");
  }
}

void PrintJsonLine(const json& document, Output& out) {
  // One compact document per line (JSON Lines).
  const std::string line =
      document.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  out.PrintRaw(std::as_bytes(std::span(line.data(), line.size())));
}

// A frame for a read that failed: the error as the command would report
// it, and that top goes on.
void PrintErrorFrame(const Status& status, const Failure& failure,
                     const std::string& endpoint, int64_t number,
                     const TopFlags& flags, Output& out) {
  const json error = ErrorObject(status, failure);
  if (out.json()) return PrintJsonLine({{"error", error}}, out);
  StartFrame(number, out);
  out.PrintLine(Title(endpoint, number, flags));
  out.PrintLine("");
  std::string line =
      "error: " + error.value("reason", "") + ": " + error.value("message", "");
  if (!failure.hint.empty()) line += " (" + failure.hint + ")";
  out.PrintLine(line);
  out.PrintLine("(retrying; rates restart from the next good read)");
}

Status RunTop(const TopFlags& flags, AdminClient& client, Output& out,
              Failure* failure) {
  const auto interval = std::chrono::milliseconds(flags.interval_ms);
  const std::string& endpoint = client.options().endpoint;
  std::optional<Snapshot> before;
  bool shown = false;  // a good frame was shown
  Clock::time_point next = Clock::now();
  for (int64_t frame = 1; flags.iterations == 0 || frame <= flags.iterations;
       ++frame) {
    if (frame > 1) {
      // The next tick of the schedule, or now when a slow read overran it:
      // a late frame comes at once, and the schedule restarts from it
      // rather than catching up with a burst.
      next = std::max(next + interval, Clock::now());
      std::this_thread::sleep_until(next);
    }
    Result<json> status = client.GetStatus();
    if (!status.ok()) {
      if (!shown) return status.status();
      PrintErrorFrame(status.status(), *failure, endpoint, frame, flags, out);
      *failure = Failure();  // shown; not the command's failure
      before.reset();
      continue;
    }
    Snapshot now{std::move(status).value(), Clock::now()};
    const json document = Frame(before, now);
    if (out.json()) {
      PrintJsonLine(document, out);
    } else {
      StartFrame(frame, out);
      PrintFrame(document, endpoint, frame, flags, out);
    }
    shown = true;
    before = std::move(now);
  }
  return Status();
}

}  // namespace

void RegisterTopCommand(CLI::App& app, CliContext& context) {
  auto flags = std::make_shared<TopFlags>();
  CLI::App& top = *app.add_subcommand(
      "top",
      "Live view: tier use, hit ratios, get/promotion/offload rates, queues, "
      "groups by state, nodes (refreshes until Ctrl-C)");
  top.add_option("--iterations", flags->iterations,
                 "Stop after N frames (0: until interrupted)")
      ->type_name("N")
      ->check(WholeNumber(0))
      ->capture_default_str();
  top.add_option("--interval", flags->interval_ms,
                 "Time between frames; a number is milliseconds, or give a "
                 "unit: 500ms, 2s")
      ->type_name("DURATION")
      ->transform(CLI::AsNumberWithUnit(std::map<std::string, int64_t>{
          {"ms", 1}, {"s", 1000}, {"min", 60000}}))
      ->check(WholeNumber(10, 3'600'000, "ms"))
      ->capture_default_str();
  top.footer(
      "Rates are the change of the status counters between two successive "
      "reads over the time between them, so the first frame has none. On a "
      "terminal each frame clears the screen (ANSI codes); otherwise frames "
      "follow one another, separated by a blank line. With -o json: one "
      "JSON document per frame and line (JSON Lines). A failed first read "
      "ends top (exit 1); a later one is shown as a frame ({\"error\":...} "
      "in json) and top keeps going, its rates restarting from the next "
      "good read.");
  OnAdminCommand(
      top, context,
      [flags](AdminClient& client, Output& out, Failure* failure) -> Status {
        return RunTop(*flags, client, out, failure);
      });
}

}  // namespace mooncake_tier::cli
