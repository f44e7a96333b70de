#pragma once

// The `kv` command group of mooncake-tierctl: data-path checks through the
// public client library (ConnectRemote: gRPC to the master, UCX to the
// storage nodes), like etcdctl put/get.
//
//   kv put KEY (--file F | --value V | --size N)
//          [--group ID --group-size N --group-index I]
//   kv get KEY [--out F]
//   kv exists KEY
//   kv rm KEY [--force]
//
// each with --master HOST:PORT (default 127.0.0.1:50051) and --timeout MS
// (default 5000, the deadline of every call to the master and every
// transfer with a node). The admin endpoint and token are not used.

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace mooncake_tier::cli {

// Adds the `kv` subcommand and its subcommands to `app`; the parse of one
// of them selects its action in `context`. `context` must outlive `app`'s
// parse and the Execute that follows.
void RegisterKvCommands(CLI::App& app, CliContext& context);

}  // namespace mooncake_tier::cli
