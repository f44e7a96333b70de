// Fuzzes mooncake-tierd's config file (--config FILE, TOML or INI): the
// reader (daemon/daemon_options.cc, ModeConfig over CLI11's ConfigTOML),
// every option it binds, the units of sizes and durations
// (daemon/option_units.h) and the validation that follows
// (ValidateDaemonOptions). The entry point is the daemon's own,
// ParseCommandLine({"mooncake-tierd", MODE, "--config", FILE}); the input is
// written to one temp file (created once per process, rewritten per run).
// MODE is the subcommand of the input's first [master], [node] or
// [standalone] section, or, with none, the one numbered by the input's size
// modulo 3: one parse per run (building the command line's ~200 options
// dominates a run; three parses would cost three times as much).
//
// Inputs that name a token file (admin-token-file, node-token-file,
// client-token-file) are skipped: ParseCommandLine reads those files, and
// a fuzzer must not read whatever path it makes up (/dev/zero never ends).
//
// Properties checked:
//   - no exception leaves ParseCommandLine (a config file is operator
//     input: a bad one is a usage error, exit code 2, with a message);
//   - an accepted config validates and runs the subcommand asked for;
//   - every duration it sets is positive, as the flags promise.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/daemon_options.h"
#include "fuzz/fuzz_support.h"

namespace mooncake_tier::daemon {
namespace {

constexpr size_t kMaxInputBytes = 64 << 10;

[[maybe_unused]] const bool kSilenced = fuzz::SilenceLogs();

// The temp file the config is written to: made at first use, removed at
// a normal exit (scripts/fuzz.sh runs harnesses with TMPDIR in a directory
// of its own, which it removes).
class ConfigFile {
 public:
  ConfigFile() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
            "/mt-config-fuzz-XXXXXX";
    fd_ = mkstemp(path_.data());
    FUZZ_CHECK(fd_ >= 0, "a temp file for the config can be made");
  }
  ~ConfigFile() {
    close(fd_);
    unlink(path_.c_str());
  }

  const std::string& Write(std::string_view text) {
    FUZZ_CHECK(ftruncate(fd_, 0) == 0, "the temp config file truncates");
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = pwrite(fd_, text.data() + done, text.size() - done,
                               static_cast<off_t>(done));
      FUZZ_CHECK(n > 0, "the temp config file takes the input");
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

bool NamesTokenFile(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  std::replace(lower.begin(), lower.end(), '_', '-');
  return lower.find("token-file") != std::string::npos ||
         lower.find("tokenfile") != std::string::npos;
}

void CheckDurations(const DaemonOptions& o) {
  const MasterConfig& c = o.master.config;
  for (Duration d :
       {c.lease_ttl, c.put_timeout, c.grant_window, c.late_write_margin,
        c.directory_record_timeout, c.offload_task_timeout, c.node_ttl,
        c.group_fill_timeout, c.group_broken_ttl, c.promotion.task_timeout,
        o.master.tick_interval, o.master.shutdown_grace,
        o.node.node.heartbeat_interval, o.node.rpc_deadline, o.etcd_lease_ttl,
        o.ha_flags.recovery_timeout}) {
    FUZZ_CHECK(d > Duration::zero(), "an accepted duration is positive");
  }
  FUZZ_CHECK(o.node.ucx_timeout > std::chrono::milliseconds::zero(),
             "an accepted duration is positive");
}

struct Mode {
  std::string_view name;
  DaemonMode mode;
};
constexpr Mode kModes[] = {{"master", DaemonMode::kMaster},
                           {"node", DaemonMode::kNode},
                           {"standalone", DaemonMode::kStandalone}};

// The subcommand whose section comes first in `input`, else one by size.
const Mode& ModeOf(std::string_view input) {
  const Mode* first = nullptr;
  size_t first_at = std::string_view::npos;
  for (const Mode& m : kModes) {
    const size_t at = input.find("[" + std::string(m.name) + "]");
    if (at < first_at) {
      first = &m;
      first_at = at;
    }
  }
  return first != nullptr ? *first : kModes[input.size() % 3];
}

void RunOne(std::string_view input) {
  if (input.size() > kMaxInputBytes || NamesTokenFile(input)) return;
  static ConfigFile file;
  const std::string& path = file.Write(input);
  const Mode& mode = ModeOf(input);
  const CommandLine result = ParseCommandLine(
      {"mooncake-tierd", std::string(mode.name), "--config", path});
  if (!result.options) {
    FUZZ_CHECK(result.exit_code == 2 && !result.output.empty(),
               "a refused config is a usage error with a message");
    return;
  }
  FUZZ_CHECK(result.exit_code == 0, "an accepted config runs");
  FUZZ_CHECK(result.options->mode == mode.mode,
             "an accepted config runs the subcommand asked for");
  FUZZ_CHECK(ValidateDaemonOptions(*result.options).empty(),
             "an accepted config validates");
  CheckDurations(*result.options);
}

}  // namespace
}  // namespace mooncake_tier::daemon

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mooncake_tier::daemon::RunOne(mooncake_tier::fuzz::AsText(data, size));
  return 0;
}
