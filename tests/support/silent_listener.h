#pragma once

// A peer that accepts TCP connections on loopback (the kernel's backlog
// does) but never speaks: what a hung master looks like to a client whose
// calls must give up at their deadline.

#include <cstdint>
#include <string>

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

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace mooncake_tier::testing
