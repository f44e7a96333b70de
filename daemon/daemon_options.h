#pragma once

// The command line of mooncake-tierd: the subcommands `master`, `node` and
// `standalone`, every flag bound to the option structs the processes take
// (MasterProcessOptions, NodeProcessOptions), and `--config FILE`. This is
// the one place where flags map to MasterConfig, PromotionOptions and the
// node's options; `--help` shows each flag with its default.
//
// Thread safety: not thread-safe; used once at start-up.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "daemon/daemon_admin.h"
#include "daemon/master_process.h"
#include "daemon/node_process.h"

namespace mooncake_tier::daemon {

enum class DaemonMode { kMaster, kNode, kStandalone };
// "master", "node", "standalone".
std::string_view DaemonModeName(DaemonMode mode);

struct DaemonOptions {
  // The daemon's defaults: the engine's (core/master_config.h) except
  // offload mode on_evict (every node brings an SSD directory by default),
  // and a node named after the host with 1 GiB of DRAM and 8 GiB of SSD in
  // /var/tmp/mooncake-tier.
  DaemonOptions();

  DaemonMode mode = DaemonMode::kStandalone;
  // spdlog level: trace, debug, info, warn, error, critical, off.
  // Default: "info".
  std::string log_level = "info";
  // Written once serving (daemon/ready_file.h). Default: empty (none).
  std::string ready_file;
  // The master role (master, standalone).
  MasterProcessOptions master;
  // The node role (node, standalone; in standalone the node dials the
  // master it runs beside, so master_address is not a flag there).
  NodeProcessOptions node;
  // The admin HTTP server of the master role (master, standalone: one
  // server whose /metrics holds master and node metrics). Default listen:
  // 127.0.0.1:9003.
  AdminOptions master_admin;
  // The admin HTTP server of a `node` process (health and metrics).
  // Default listen: 127.0.0.1:9300.
  AdminOptions node_admin;

  // The high-availability flags of `master` (--etcd, --cluster,
  // --advertise, --etcd-lease-ttl, --recovery-timeout), as given; with
  // --etcd, ParseCommandLine turns them into master.ha.
  std::string etcd;
  MasterHaOptions ha_flags;
  // `node`'s --node-token-file; ParseCommandLine reads its first token into
  // node.token (in standalone the master's node token file serves).
  std::string node_token_file;
  Duration etcd_lease_ttl = std::chrono::seconds(2);

  // The admin options of `mode`.
  const AdminOptions& admin() const {
    return mode == DaemonMode::kNode ? node_admin : master_admin;
  }
};

// Adds the three subcommands (one of them required) and all their flags to
// `app`, bound to `*options`, plus `--config FILE` on the app and on each
// subcommand. Parsing `app` fills *options, including options->mode.
// REQUIRES: `options` outlives every parse with `app`.
void RegisterDaemonOptions(CLI::App* app, DaemonOptions* options);

// What flags alone cannot check: the master configuration, through
// MasterConfig::Validate, and an admin address that is not loopback with
// no admin token. Empty when valid, otherwise one line naming the flags
// involved.
std::string ValidateDaemonOptions(const DaemonOptions& options);

// The outcome of a command line.
struct CommandLine {
  // Set when the daemon should run.
  std::optional<DaemonOptions> options;
  // Otherwise: 0 after --help, 2 for a usage error.
  int exit_code = 0;
  // Otherwise: the help text (for stdout) or a one-line error (for stderr).
  std::string output;
};

// Parses `argv` (argv[0] is the program name), reads --admin-token-file
// into the admin token, and validates (ValidateDaemonOptions).
CommandLine ParseCommandLine(const std::vector<std::string>& argv);

}  // namespace mooncake_tier::daemon
