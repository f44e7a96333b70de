#include "tests/support/raw_http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mooncake_tier::testing {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

RawHttpClient::RawHttpClient(uint16_t port)
    : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
}

RawHttpClient::~RawHttpClient() { ::close(fd_); }

bool RawHttpClient::Send(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawHttpClient::ReadSome(SteadyClock::time_point deadline) {
  if (closed_) return false;
  const auto left =
      std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buffer[65536];
  const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
  if (n <= 0) {
    closed_ = true;
    return false;
  }
  text_.append(buffer, static_cast<size_t>(n));
  return true;
}

std::string RawHttpClient::ReadResponses(size_t count, milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (ParseHttpResponses(text_).size() < count && ReadSome(deadline)) {
  }
  return text_;
}

std::string RawHttpClient::ReadUntilText(std::string_view marker,
                                         milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (text_.find(marker) == std::string::npos && ReadSome(deadline)) {
  }
  return text_;
}

bool RawHttpClient::ClosedWithin(milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (ReadSome(deadline)) {
  }
  return closed_;
}

std::vector<RawHttpResponse> ParseHttpResponses(const std::string& text) {
  std::vector<RawHttpResponse> responses;
  size_t at = 0;
  while (true) {
    const size_t end = text.find("\r\n\r\n", at);
    if (end == std::string::npos) break;
    RawHttpResponse r;
    r.head = text.substr(at, end - at);
    if (r.head.rfind("HTTP/1.", 0) != 0 || r.head.size() < 12) break;
    r.status = std::stoi(r.head.substr(9, 3));
    size_t length = 0;
    const size_t field = r.head.find("Content-Length: ");
    if (field != std::string::npos)
      length = std::stoul(r.head.substr(field + 16));
    if (text.size() < end + 4 + length) break;
    r.body = text.substr(end + 4, length);
    if (r.status >= 200) responses.push_back(std::move(r));
    at = end + 4 + length;
  }
  return responses;
}

std::string HttpGet(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n";
}

}  // namespace mooncake_tier::testing
