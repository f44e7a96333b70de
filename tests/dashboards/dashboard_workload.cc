// dashboard_workload: a short, deterministic workload against a running
// mooncake-tier master, so that every family the dashboards and alert rules
// read moves: DRAM and SSD hits, a miss, evictions and offloads (it writes
// about twice the DRAM), promotions (SSD-only objects read more than the
// admission threshold), removes, complete, filling and broken groups and a
// group_incomplete read.
//
//   dashboard_workload --master HOST:PORT --dram-bytes N
//
// The daemon must run with --offload-mode on_evict (its default) and
// --group-remove-policy member (so removing one member breaks its group).
// Prints one key=value summary line; exits 0 when every call answered as
// expected, 1 (with the failing call on stderr) otherwise, 2 on bad usage.
// Used by tests/dashboards/dashboards_live_test.py.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mooncake_tier/client.h"
#include "mooncake_tier/remote_client.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {
namespace {

constexpr size_t kValueBytes = 1 << 20;
// Puts refused NO_SPACE wait for offloads to make room; give up after this.
constexpr auto kNoSpaceRetryFor = std::chrono::seconds(15);
constexpr auto kNoSpaceBackoff = std::chrono::milliseconds(20);

struct Args {
  std::string master;
  uint64_t dram_bytes = 0;
};

bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--master") {
      args->master = argv[i + 1];
    } else if (flag == "--dram-bytes") {
      args->dram_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && !args->master.empty() &&
         args->dram_bytes >= 8 * kValueBytes;
}

// A value derived from its key, so reads can be checked.
std::vector<std::byte> ValueOf(std::string_view key) {
  uint64_t h = 1469598103934665603ull;
  for (char c : key) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  std::vector<std::byte> value(kValueBytes);
  for (size_t i = 0; i < value.size(); ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    value[i] = static_cast<std::byte>(h >> 56);
  }
  return value;
}

class Workload {
 public:
  explicit Workload(std::unique_ptr<Client> client)
      : client_(std::move(client)) {}

  int failures() const { return failures_; }

  // Puts `key`, retrying NO_SPACE while offloads make room.
  void Put(const std::string& key, PutOptions options = {}) {
    const std::vector<std::byte> value = ValueOf(key);
    const auto deadline = std::chrono::steady_clock::now() + kNoSpaceRetryFor;
    while (true) {
      Status s = client_->Put(key, value, options);
      if (s.ok()) {
        ++puts_;
        return;
      }
      if (s.reason() == ErrorReason::kNoSpace &&
          std::chrono::steady_clock::now() < deadline) {
        ++no_space_retries_;
        std::this_thread::sleep_for(kNoSpaceBackoff);
        continue;
      }
      Fail("put " + key, s);
      return;
    }
  }

  // Reads `key` and checks its bytes.
  void Get(const std::string& key) {
    Result<std::vector<std::byte>> value = client_->Get(key);
    if (!value.ok()) {
      Fail("get " + key, value.status());
      return;
    }
    if (*value != ValueOf(key)) {
      std::fprintf(stderr, "get %s: wrong bytes\n", key.c_str());
      ++failures_;
      return;
    }
    ++gets_;
  }

  // A read that must fail with `expected`.
  void GetExpecting(const std::string& key, ErrorReason expected) {
    Result<std::vector<std::byte>> value = client_->Get(key);
    if (value.ok() || value.status().reason() != expected) {
      std::fprintf(stderr, "get %s: expected %s, got %s\n", key.c_str(),
                   std::string(ReasonName(expected)).c_str(),
                   value.status().ToString().c_str());
      ++failures_;
    }
  }

  void Remove(const std::string& key) {
    Status s = client_->Remove(key);
    if (!s.ok()) Fail("remove " + key, s);
  }

  void ExpectGroupState(const std::string& group_id, GroupState expected) {
    Result<GroupInfo> info = client_->GetGroup(group_id);
    if (!info.ok()) {
      Fail("get group " + group_id, info.status());
    } else if (info->status.state != expected) {
      std::fprintf(stderr, "group %s: state %s, expected %s\n",
                   group_id.c_str(),
                   std::string(GroupStateName(info->status.state)).c_str(),
                   std::string(GroupStateName(expected)).c_str());
      ++failures_;
    }
  }

  void PrintSummary() const {
    std::printf("puts=%d gets=%d no_space_retries=%d failures=%d\n", puts_,
                gets_, no_space_retries_, failures_);
  }

 private:
  void Fail(const std::string& what, const Status& s) {
    std::fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
    ++failures_;
  }

  std::unique_ptr<Client> client_;
  int puts_ = 0;
  int gets_ = 0;
  int no_space_retries_ = 0;
  int failures_ = 0;
};

std::string ObjectKey(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "dash/obj/%04d", i);
  return buf;
}

PutOptions Member(const std::string& group_id, uint32_t size, uint32_t index) {
  PutOptions options;
  options.group = GroupSpec{group_id, size, index};
  return options;
}

int Run(const Args& args) {
  RemoteClientOptions options;
  options.master = args.master;
  Result<std::unique_ptr<Client>> client = ConnectRemote(options);
  if (!client.ok()) {
    std::fprintf(stderr, "connect %s: %s\n", args.master.c_str(),
                 client.status().ToString().c_str());
    return 1;
  }
  Workload w(std::move(*client));

  // Complete groups of two first: they are the oldest, so DRAM eviction
  // takes them (as units) once the objects below overflow DRAM.
  constexpr int kGroups = 4;
  for (int g = 0; g < kGroups; ++g) {
    const std::string id = "dash/group/" + std::to_string(g);
    for (uint32_t m = 0; m < 2; ++m) {
      w.Put(id + "/" + std::to_string(m), Member(id, 2, m));
    }
  }
  // Twice the DRAM in single objects: eviction and offload (on_evict).
  const int objects = static_cast<int>(2 * args.dram_bytes / kValueBytes);
  for (int i = 0; i < objects; ++i) w.Put(ObjectKey(i));

  // DRAM hits: the newest objects.
  for (int i = objects - 4; i < objects; ++i) w.Get(ObjectKey(i));
  // Make room (removes), so promotion is not held back by the watermark.
  for (int i = objects - 40; i < objects - 4; ++i) w.Remove(ObjectKey(i));

  // SSD hits: the oldest objects left DRAM. Reading each past the admission
  // threshold queues its promotion; a node heartbeat later it is in DRAM.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 12; ++i) w.Get(ObjectKey(i));
  }
  // The oldest groups too (a group is promoted as one unit).
  for (int round = 0; round < 3; ++round) {
    for (uint32_t m = 0; m < 2; ++m) w.Get("dash/group/0/" + std::to_string(m));
  }

  // A group left filling, read before it completes: group_incomplete.
  w.Put("dash/group/filling/0", Member("dash/group/filling", 3, 0));
  w.ExpectGroupState("dash/group/filling", GroupState::kFilling);
  w.GetExpecting("dash/group/filling/0", ErrorReason::kGroupIncomplete);
  // A member removed under the member policy: a broken group (removed).
  w.Put("dash/group/broken/0", Member("dash/group/broken", 2, 0));
  w.Put("dash/group/broken/1", Member("dash/group/broken", 2, 1));
  w.ExpectGroupState("dash/group/broken", GroupState::kComplete);
  w.Remove("dash/group/broken/0");
  w.ExpectGroupState("dash/group/broken", GroupState::kBroken);
  // A miss.
  w.GetExpecting("dash/missing", ErrorReason::kObjectNotFound);

  // Read the promoted objects again a little later: by then most are DRAM
  // hits (promotion completes within a heartbeat or two).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int i = 0; i < 12; ++i) w.Get(ObjectKey(i));

  w.PrintSummary();
  return w.failures() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace mooncake_tier

int main(int argc, char** argv) {
  mooncake_tier::Args args;
  if (!mooncake_tier::ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: %s --master HOST:PORT --dram-bytes N (N >= 8 MiB)\n",
                 argv[0]);
    return 2;
  }
  return mooncake_tier::Run(args);
}
