#pragma once

// A peer that accepts TCP connections on loopback (the kernel's backlog
// does) but never speaks: what a hung master looks like to a client whose
// calls must give up at their deadline.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace mooncake_tier::testing {

class SilentListener {
 public:
  // Listens on 127.0.0.1 on a free port. Fails the current test (gtest
  // ADD_FAILURE) if the socket cannot be set up; port() is then 0.
  SilentListener();
  ~SilentListener();
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  uint16_t port() const { return port_; }
  // "127.0.0.1:<port>".
  std::string address() const;

  // Waits up to `timeout` for a connection to arrive; whether one did.
  bool WaitForConnection(std::chrono::milliseconds timeout);
  // Takes every connection waiting in the backlog and stops listening: the
  // port is free for another server, and the taken connections stay open
  // and silent (a client's handshake on them never ends) until destruction.
  void HoldConnectionsAndStopListening();

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::vector<int> held_;
};

}  // namespace mooncake_tier::testing
