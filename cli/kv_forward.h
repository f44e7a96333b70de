#pragma once

// mooncake-tierctl's `kv` commands live in a second binary,
// mooncake-tierctl-kv, so that mooncake-tierctl itself (the admin command
// groups) links no client library: no gRPC, no UCX, no SSD code. The first
// binary lists `kv` in its help and, when the command line names it, runs
// the second with the same arguments (exec: its output and exit code are
// the command's).
//
// Where mooncake-tierctl-kv is looked for, in order: $MOONCAKE_TIERCTL_KV
// (a path), the directory of the running mooncake-tierctl, then PATH.

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace mooncake_tier::cli {

// The description `kv` has in both binaries' help.
extern const char kKvDescription[];

// Adds a `kv` entry to the admin binary's app, for its help; selecting it
// (which happens only when ForwardKv could not run the kv binary) fails
// with UNAVAILABLE and why.
void RegisterKvForwarder(CLI::App& app, CliContext& context);

// When the command group on this command line (after the global options)
// is `kv`, replaces this process with mooncake-tierctl-kv given the same
// arguments and does not return. Returns false when the group is another
// one (or the line does not parse: the full parse reports it), true when
// it is `kv` and mooncake-tierctl-kv cannot be run: the caller then lets
// the parse accept the kv arguments (CLI::App::allow_extras) so that the
// kv stub reports why.
bool ForwardKv(int argc, char** argv);

}  // namespace mooncake_tier::cli
