#pragma once

// EtcdServer: a real single-member etcd (Debian's /usr/bin/etcd) for tests,
// on free loopback ports and a fresh temporary data directory, tuned to
// start and elect itself fast (--unsafe-no-fsync, 10 ms heartbeats, 100 ms
// election timeout). Its output goes to etcd.log in that directory; start
// failures quote the log's tail.
//
// Start() again after Kill() or Stop() restarts it on the same data and
// ports, as an operator restarting a member would. The destructor kills it
// and removes the directory. The child is also SIGKILLed if the thread that
// started it exits (a crashed or timed-out test), so start it from the
// test's main thread.
//
// Thread safety: one thread at a time per object.

#include <sys/types.h>

#include <chrono>
#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier::testing {

class EtcdServer {
 public:
  static constexpr const char* kBinary = "/usr/bin/etcd";
  // Whether kBinary exists. Tests skip without it:
  //   if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::kMissing;
  static bool Available();
  static constexpr const char* kMissing =
      "/usr/bin/etcd not found; install etcd-server (apt-get install "
      "etcd-server) to run the etcd tests";

  // Picks the ports and makes the directory; does not start etcd (a
  // failure here is reported by Start()).
  EtcdServer();
  ~EtcdServer();
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // Starts etcd and waits until GET /health reports healthy. INTERNAL
  // (with the log's tail) when it exits or is not healthy by `deadline`;
  // IO_ERROR when the directory or ports could not be had. A first start
  // that loses its ports to another process retries on new ones.
  // REQUIRES: not running.
  Status Start(std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // SIGKILL, then waits for the process: no chance to shut down cleanly.
  void Kill();
  // SIGTERM, then waits (SIGKILL after 5 s).
  void Stop();
  // SIGSTOP / SIGCONT: etcd keeps its sockets (connections are accepted
  // by the kernel) but answers nothing, as a hung or partitioned member.
  // Pause returns once every thread of etcd has stopped.
  void Pause();
  void Resume();
  bool running() const { return pid_ > 0; }

  // "127.0.0.1:<client port>", for EtcdClientOptions::endpoints.
  std::string endpoint() const;
  int client_port() const { return client_port_; }
  const std::string& dir() const { return dir_; }
  // The last `max_bytes` of etcd's log.
  std::string LogTail(size_t max_bytes = 3000) const;

 private:
  // Sends `signal` and reaps the child within `timeout`; true when it
  // ended.
  bool SignalAndWait(int signal, std::chrono::milliseconds timeout);
  bool Healthy() const;
  // Starts the process once; INTERNAL when it is not healthy in time.
  Status Launch(std::chrono::milliseconds deadline);
  Status PickPorts();

  Status setup_;  // why the constructor failed, if it did
  bool started_once_ = false;
  std::string dir_;
  std::string log_path_;
  int client_port_ = 0;
  int peer_port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
};

}  // namespace mooncake_tier::testing
