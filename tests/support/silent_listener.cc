#include "tests/support/silent_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mooncake_tier::testing {

SilentListener::SilentListener() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd_ < 0) {
    ADD_FAILURE() << "socket() failed";
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  // The port is taken over by a real server once listening stops.
  const int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd_, 16) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "cannot listen on a loopback port";
    return;
  }
  port_ = ntohs(addr.sin_port);
}

SilentListener::~SilentListener() {
  if (fd_ >= 0) close(fd_);
  for (int fd : held_) close(fd);
}

bool SilentListener::WaitForConnection(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return false;
  pollfd waiting{fd_, POLLIN, 0};
  return poll(&waiting, 1, static_cast<int>(timeout.count())) == 1;
}

void SilentListener::HoldConnectionsAndStopListening() {
  if (fd_ < 0) return;
  while (true) {
    const int conn = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK);
    if (conn < 0) break;  // EAGAIN once the backlog is empty
    held_.push_back(conn);
  }
  close(fd_);
  fd_ = -1;
}

std::string SilentListener::address() const {
  return "127.0.0.1:" + std::to_string(port_);
}

}  // namespace mooncake_tier::testing
