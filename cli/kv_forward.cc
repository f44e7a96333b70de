#include "cli/kv_forward.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace mooncake_tier::cli {
namespace {

constexpr char kKvBinary[] = "mooncake-tierctl-kv";

// Why the attempt to run the kv binary failed; the kv stub reports it
// through the usual error path (stderr, -o json, exit code).
std::string& ForwardFailure() {
  static std::string failure;
  return failure;
}

// The command group the line names: the first argument after the global
// options (parsed by the same definitions as the real parse, so an
// option's value is never taken for a group).
std::string CommandGroup(int argc, char** argv) {
  CLI::App probe;
  CliContext scratch;
  scratch.RegisterGlobalOptions(probe);
  probe.prefix_command();
  probe.set_help_flag();
  try {
    probe.parse(argc, argv);
  } catch (const CLI::ParseError&) {
    return {};  // the full parse says what is wrong
  }
  const std::vector<std::string> rest = probe.remaining();
  return rest.empty() ? std::string() : rest.front();
}

void TryExec(const std::string& path, char** argv, std::string* tried) {
  if (path.empty()) return;
  *tried += (tried->empty() ? "" : ", ") + path;
  ::execv(path.c_str(), argv);  // returns only on failure
}

}  // namespace

const char kKvDescription[] =
    "Data-path checks through the client library: put, get, exists, rm "
    "(gRPC to the master at --master, UCX to the storage nodes)";

bool ForwardKv(int argc, char** argv) {
  if (argc < 2 || CommandGroup(argc, argv) != "kv") return false;
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  std::string tried;
  if (const char* explicit_path = std::getenv("MOONCAKE_TIERCTL_KV")) {
    TryExec(explicit_path, args.data(), &tried);
  } else {
    std::error_code ec;
    const std::filesystem::path self =
        std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec)
      TryExec((self.parent_path() / kKvBinary).string(), args.data(), &tried);
    tried += (tried.empty() ? "" : ", ") + std::string("PATH");
    ::execvp(kKvBinary, args.data());
  }
  ForwardFailure() = std::string("the kv commands are in ") + kKvBinary +
                     ", which could not be run (" + std::strerror(errno) +
                     "; tried " + tried +
                     "): build it beside mooncake-tierctl (cmake --build "
                     "BUILD --target " +
                     kKvBinary + ") or set MOONCAKE_TIERCTL_KV to its path";
  return true;
}

void RegisterKvForwarder(CLI::App& app, CliContext& context) {
  CLI::App& kv = *app.add_subcommand("kv", kKvDescription);
  // Everything after `kv` is the kv binary's.
  kv.prefix_command();
  kv.set_help_flag();
  kv.callback([&context]() {
    context.Select([](Output&, Failure*) {
      return Status(ErrorReason::kUnavailable,
                    ForwardFailure().empty()
                        ? std::string("the kv commands are in ") + kKvBinary +
                              ", which was not run"
                        : ForwardFailure());
    });
  });
}

}  // namespace mooncake_tier::cli
