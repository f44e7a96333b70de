#pragma once

// Included by tests that talk to etcd through ha::EtcdClient. Its HTTP
// library writes to sockets etcd may close at any moment; the daemon
// ignores SIGPIPE (daemon/shutdown_signal.cc) so that such a write fails a
// call instead of ending the process, and so does every test program that
// includes this (ha/etcd_client.h states the requirement).

#include <csignal>

namespace mooncake_tier::testing_support {

[[maybe_unused]] inline const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

}  // namespace mooncake_tier::testing_support
