#include "daemon/daemon_runner.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>

#include "daemon/daemon_admin.h"
#include "daemon/option_units.h"
#include "daemon/ready_file.h"
#include "daemon/shutdown_signal.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::daemon {
namespace {

constexpr std::chrono::milliseconds kPoll(50);

void ConfigureLogging(const std::string& level) {
  std::shared_ptr<spdlog::logger> logger = spdlog::get("mooncake-tierd");
  if (!logger) logger = spdlog::stderr_color_mt("mooncake-tierd");
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(spdlog::level::from_str(level));
}

// The address a node in this process dials to reach a master listening on
// `listen`: a wildcard host becomes loopback.
std::string DialAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const std::string host = listen.substr(0, colon);
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
    return "127.0.0.1" + listen.substr(colon);
  }
  return listen;
}

// The processes of one mode.
class Roles {
 public:
  explicit Roles(const DaemonOptions& options) : options_(options) {}

  // The admin server starts last (it reads both roles) and answers
  // /readyz 503 until SetReady.
  Status Start() {
    if (options_.mode != DaemonMode::kNode) {
      MT_ASSIGN_OR_RETURN(master_, MasterProcess::Start(options_.master));
    }
    if (options_.mode != DaemonMode::kMaster) {
      NodeProcessOptions node = options_.node;
      if (master_) node.master_address = DialAddress(master_->address());
      MT_ASSIGN_OR_RETURN(node_, NodeProcess::Start(std::move(node)));
    }
    if (!options_.admin().listen.empty()) {
      MT_ASSIGN_OR_RETURN(
          admin_,
          DaemonAdmin::Start(options_.admin(), master_.get(), node_.get()));
    }
    return Status::Ok();
  }

  bool Serving() const { return !node_ || node_->registered(); }

  // SIGHUP: the master's token files and every TLS file (gRPC, admin) are
  // read again;
  // whatever is bad keeps what is in use.
  void Reload() {
    auto report = [](std::string_view what, const Status& reloaded) {
      if (!reloaded.ok()) {
        spdlog::error("SIGHUP received: {} not reloaded, the old ones stay: {}",
                      what, reloaded.message());
      }
    };
    if (master_) {
      report("tokens", master_->ReloadTokens());
      report("the master's TLS files", master_->ReloadTls());
    }
    if (node_) report("the node's TLS files", node_->ReloadTls());
    if (admin_) report("the admin port's TLS files", admin_->ReloadTls());
  }

  // /readyz follows the ready file: 200 once serving, 503 from the start of
  // a shutdown.
  void SetReady(bool ready) {
    if (admin_) admin_->SetReady(ready);
  }

  std::vector<std::pair<std::string, std::string>> ReadyFields() const {
    std::vector<std::pair<std::string, std::string>> fields = {
        {"pid", std::to_string(::getpid())},
        {"mode", std::string(DaemonModeName(options_.mode))},
        {"master_address", MasterAddress()}};
    if (node_) {
      fields.emplace_back("node_name", node_->options().node.name);
      fields.emplace_back("node_id", std::to_string(node_->node().id()));
    }
    if (admin_) fields.emplace_back("admin_address", admin_->address());
    return fields;
  }

  std::string ReadyLine() const {
    const std::string admin = admin_ ? "; admin " + admin_->url() : "";
    return RolesLine() + admin;
  }

  // Node first (it still talks to the master while it stops), then master.
  // The admin server goes before both: its handlers and collectors read
  // them.
  void Shutdown() {
    if (admin_) {
      admin_->Shutdown();
      spdlog::info("admin: stopped");
    }
    admin_.reset();
    if (node_) node_->Shutdown();
    if (master_) master_->Shutdown();
    node_.reset();
    master_.reset();
  }

 private:
  std::string RolesLine() const {
    if (!node_) return "mooncake-tierd master: serving on " + MasterAddress();
    const NodeProcessOptions& n = node_->options();
    const std::string ssd =
        n.ssd_capacity == 0
            ? "no SSD tier"
            : "SSD " + FormatSizeHuman(n.ssd_capacity) + " at " + n.ssd_dir;
    const std::string node = "node \"" + n.node.name + "\" registered";
    const std::string tiers =
        " (DRAM " + FormatSizeHuman(n.node.dram_bytes) + ", " + ssd + ")";
    if (master_) {
      return "mooncake-tierd standalone: master on " + MasterAddress() + ", " +
             node + tiers;
    }
    return "mooncake-tierd node: " + node + " with master " + MasterAddress() +
           tiers;
  }

  std::string MasterAddress() const {
    return master_ ? master_->address() : options_.node.master_address;
  }

  const DaemonOptions& options_;
  std::unique_ptr<MasterProcess> master_;
  std::unique_ptr<NodeProcess> node_;
  std::unique_ptr<DaemonAdmin> admin_;
};

int StartFailed(const std::string& mode, const Status& why, Roles& roles) {
  spdlog::default_logger()->flush();
  std::fprintf(stderr, "mooncake-tierd %s: error: %s\n", mode.c_str(),
               why.message().c_str());
  roles.Shutdown();
  return 1;
}

// Shuts down on a thread of its own while this (the main) thread keeps
// collecting signals: a second one ends the process at once.
int ShutDown(Roles& roles) {
  std::atomic<bool> done{false};
  std::thread stopper([&roles, &done] {
    roles.Shutdown();
    done.store(true);
  });
  while (!done.load()) {
    if (std::optional<int> signal = ShutdownSignal::Wait(kPoll);
        signal && *signal != SIGHUP) {
      spdlog::error("{} during shutdown: exiting at once",
                    ShutdownSignal::Name(*signal));
      spdlog::default_logger()->flush();
      std::fflush(stdout);
      // Straight to the kernel: no destructors, no atexit handlers, and no
      // sanitizer end-of-process checks (the shutdown thread is still
      // running, on purpose).
      ::syscall(SYS_exit_group, 1);
    }
  }
  stopper.join();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace

int RunDaemon(const DaemonOptions& options) {
  ConfigureLogging(options.log_level);
  const std::string mode(DaemonModeName(options.mode));
  ReadyFile ready(options.ready_file);
  Roles roles(options);
  if (Status started = roles.Start(); !started.ok()) {
    return StartFailed(mode, started, roles);
  }
  bool published = false;
  while (true) {
    if (std::optional<int> signal = ShutdownSignal::Wait(kPoll)) {
      if (*signal == SIGHUP) {
        roles.Reload();
        continue;
      }
      spdlog::info("{} received: shutting down", ShutdownSignal::Name(*signal));
      break;
    }
    if (!published && roles.Serving()) {
      if (Status written = ready.Publish(roles.ReadyFields()); !written.ok()) {
        return StartFailed(mode, written, roles);
      }
      published = true;
      roles.SetReady(true);
      const std::string line = roles.ReadyLine();
      spdlog::info("ready: {}", line);
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  }
  roles.SetReady(false);
  ready.Withdraw();
  return ShutDown(roles);
}

}  // namespace mooncake_tier::daemon
