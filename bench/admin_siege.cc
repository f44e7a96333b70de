#include "bench/admin_siege.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/admin_stack.h"
#include "bench/bench_util.h"

namespace mooncake_tier::bench::admin_bench {
namespace {

// The header a slow connection sends, one byte a second; it never ends.
constexpr std::string_view kSlowHeader =
    "GET /api/v1/status HTTP/1.1\r\nHost: siege\r\nX-Slow: "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

int Connect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
          0 &&
      errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the server closed `fd` (or reset it); what it sent is dropped.
bool Closed(int fd) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

// Holds idle and slow connections open until stopped, reopening each one
// the server closes.
class Siege {
 public:
  Siege(uint16_t port, size_t idle, size_t slow) : port_(port) {
    conns_.resize(idle + slow);
    for (size_t i = 0; i < conns_.size(); ++i) conns_[i].slow = i >= idle;
  }
  ~Siege() {
    for (Conn& c : conns_) {
      if (c.fd >= 0) ::close(c.fd);
    }
  }

  // Opens every connection; false if one cannot be.
  bool Open() {
    for (Conn& c : conns_) {
      if (!Reopen(c)) return false;
    }
    return true;
  }
  void Run(const std::atomic<bool>& stop) {
    auto last_byte = SteadyClock::now();
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const bool dribble =
          SteadyClock::now() - last_byte >= std::chrono::seconds(1);
      if (dribble) last_byte = SteadyClock::now();
      for (Conn& c : conns_) {
        if (c.fd < 0 || Closed(c.fd)) {
          reopened_ += 1;
          Reopen(c);
          continue;
        }
        if (c.slow && dribble && c.sent < kSlowHeader.size()) {
          if (::send(c.fd, kSlowHeader.data() + c.sent, 1,
                     MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
            c.sent += 1;
          }
        }
      }
    }
  }
  uint64_t reopened() const { return reopened_; }

 private:
  struct Conn {
    int fd = -1;
    bool slow = false;
    size_t sent = 0;
  };
  bool Reopen(Conn& c) {
    if (c.fd >= 0) ::close(c.fd);
    c.fd = Connect(port_);
    c.sent = 0;
    if (c.fd < 0) return false;
    if (c.slow) {  // the first byte starts the request
      if (::send(c.fd, kSlowHeader.data(), 1, MSG_NOSIGNAL | MSG_DONTWAIT) ==
          1) {
        c.sent = 1;
      }
    }
    return true;
  }

  const uint16_t port_;
  std::vector<Conn> conns_;
  uint64_t reopened_ = 0;
};

struct SiegeFigures {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

Result<SiegeFigures> Time(uint16_t port, const std::string& path,
                          size_t requests) {
  HttpProbe http(port);
  std::vector<double> ms;
  std::string body;
  for (size_t i = 0; i < requests + 5; ++i) {
    MT_ASSIGN_OR_RETURN(const double t, http.Get(path, &body));
    if (i >= 5) ms.push_back(t);
  }
  return SiegeFigures{Percentile(ms, 0.5), Percentile(ms, 0.99),
                      Percentile(ms, 1.0)};
}

}  // namespace

Status MeasureSiege(uint16_t port, const SiegeOptions& options,
                    ResultSink& sink, double* worst_p99) {
  const char* kRoutes[] = {"/healthz", "/metrics"};
  SiegeFigures quiet[2];
  for (int r = 0; r < 2; ++r) {
    MT_ASSIGN_OR_RETURN(quiet[r], Time(port, kRoutes[r], options.requests));
  }
  sink.Progress("admin: siege of " + std::to_string(options.idle) +
                " idle and " + std::to_string(options.slow) +
                " slow connections");
  Siege siege(port, options.idle, options.slow);
  if (!siege.Open()) {
    return Status(ErrorReason::kUnavailable,
                  "siege: cannot open connections (descriptor limit?)");
  }
  std::atomic<bool> stop{false};
  std::thread holder([&] { siege.Run(stop); });
  // Let the slow connections start their headers and the port fill up.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  Status status = Status::Ok();
  SiegeFigures besieged[2];
  for (int r = 0; r < 2 && status.ok(); ++r) {
    Result<SiegeFigures> f = Time(port, kRoutes[r], options.requests);
    if (f.ok()) {
      besieged[r] = *f;
    } else {
      status = f.status();
    }
  }
  stop.store(true);
  holder.join();
  MT_RETURN_IF_ERROR(status);
  *worst_p99 = 0;
  for (int r = 0; r < 2; ++r) {
    *worst_p99 = std::max(*worst_p99, besieged[r].p99);
    sink.Emit({{"scenario", "admin_siege"},
               {"route", kRoutes[r]},
               {"idle", options.idle},
               {"slow", options.slow},
               {"quiet_p50_ms", quiet[r].p50},
               {"quiet_p99_ms", quiet[r].p99},
               {"p50_ms", besieged[r].p50},
               {"p99_ms", besieged[r].p99},
               {"max_ms", besieged[r].max},
               {"p99_over_quiet", Ratio(besieged[r].p99, quiet[r].p99)},
               {"reopened", siege.reopened()}});
  }
  return Status::Ok();
}

}  // namespace mooncake_tier::bench::admin_bench
