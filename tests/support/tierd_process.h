#pragma once

// A `mooncake-tierd` child process for multi-process tests: the daemon
// binary started with a role and its flags, its output captured next to the
// test's other files.
//
// Thread safety: a free function; call it from the thread that outlives the
// child (see Subprocess: it is killed when the starting thread exits).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace mooncake_tier::testing {

// Starts `binary` (the mooncake-tierd under test, a path the test target
// gets from its build) with `args` (role first: {"master", "--listen", ...}),
// writing "<name>.stdout" and "<name>.stderr" into `output_dir`. On failure
// adds a gtest failure with the reason and returns nullptr. A `name` used
// before in `output_dir` truncates that child's output files: give restarts
// names of their own to keep it.
std::unique_ptr<Subprocess> StartTierd(const std::string& binary,
                                       const std::string& output_dir,
                                       const std::string& name,
                                       std::vector<std::string> args);

// The name=value lines of the ready file at `path` (daemon/ready_file.h),
// e.g. "master_address" and "admin_address"; empty while it is absent.
std::map<std::string, std::string> ReadyFields(const std::string& path);

}  // namespace mooncake_tier::testing
