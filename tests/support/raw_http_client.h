#pragma once

// A raw HTTP/1.1 client for tests of the admin ports' edge: it writes
// exactly the bytes a test gives it (partial headers, pipelined requests,
// chunked bodies, garbage) and reads what comes back, so a test can check
// what the server did with a connection, not only what it answered.
// Test-only.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake_tier::testing {

class RawHttpClient {
 public:
  // Connects to 127.0.0.1:port (check connected()).
  explicit RawHttpClient(uint16_t port);
  ~RawHttpClient();
  RawHttpClient(const RawHttpClient&) = delete;
  RawHttpClient& operator=(const RawHttpClient&) = delete;

  bool connected() const { return connected_; }
  // False once the server closed or reset the connection.
  bool Send(std::string_view data);
  // Reads until `count` complete responses arrived (interim 100 answers
  // not counted), the server closes, or `timeout` passes; returns all the
  // bytes read so far.
  std::string ReadResponses(size_t count, std::chrono::milliseconds timeout);
  // Reads until the bytes read so far contain `marker`.
  std::string ReadUntilText(std::string_view marker,
                            std::chrono::milliseconds timeout);
  // True when the server closes the connection within `timeout` (what it
  // sends meanwhile is kept).
  bool ClosedWithin(std::chrono::milliseconds timeout);

 private:
  // Reads what is there within `timeout`; false on close or timeout.
  bool ReadSome(std::chrono::steady_clock::time_point deadline);

  const int fd_;
  bool connected_ = false;
  bool closed_ = false;
  std::string text_;
};

struct RawHttpResponse {
  int status = 0;
  std::string head;  // status line and header fields
  std::string body;
};

// The complete final responses at the start of `text` (bodies by
// Content-Length; interim 1xx answers skipped).
std::vector<RawHttpResponse> ParseHttpResponses(const std::string& text);

// "GET <target> HTTP/1.1" with a Host field and nothing else.
std::string HttpGet(const std::string& target);

}  // namespace mooncake_tier::testing
