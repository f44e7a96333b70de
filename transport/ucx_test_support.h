#pragma once

// Test support for the UCX data plane tests (ucx_transport_test.cc,
// ucx_staged_read_test.cc): an in-memory SsdReadHandler and a bare UCX peer
// that speaks the SSD read wire format by hand. Test-only; links gtest.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "transport/transport.h"
#include "transport/ucx_context.h"
#include "transport/ucx_peer_cache.h"
#include "transport/ucx_request_batch.h"
#include "transport/ucx_ssd_read_messages.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier::ucx_test {

// Pinned to TCP: on loopback it behaves like two hosts, and how fast a
// vanished node is noticed does not depend on which shared-memory transport
// UCX would pick between two workers of one process (their liveness checks
// look at the pid, which lives on). The suites also pass with UCX's
// default transports here.
inline constexpr char kTransports[] = "tcp";

inline std::vector<std::byte> Pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> out(size);
  std::mt19937 rng(seed);
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Values by key; a buffer smaller than the value is BUFFER_TOO_SMALL.
class FakeSsd : public SsdReadHandler {
 public:
  void Put(std::string key, std::vector<std::byte> value) {
    std::lock_guard<std::mutex> lock(mu_);
    values_[std::move(key)] = std::move(value);
  }
  // Makes ServeSsdReads wait until Release().
  void Block() {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = false;
    cv_.notify_all();
  }
  int entered() {
    std::lock_guard<std::mutex> lock(mu_);
    return entered_;
  }

  std::vector<Result<uint64_t>> ServeSsdReads(
      std::span<const SsdReadTransfer> ops) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++entered_;
    cv_.wait(lock, [&] { return !blocked_; });
    std::vector<Result<uint64_t>> out;
    for (const SsdReadTransfer& op : ops) {
      auto it = values_.find(std::string(op.key));
      if (it == values_.end()) {
        out.emplace_back(Status(ErrorReason::kObjectNotFound, "no such key"));
      } else if (it->second.size() > op.buffer.size()) {
        out.emplace_back(Status(ErrorReason::kBufferTooSmall, "too small"));
      } else {
        std::memcpy(op.buffer.data(), it->second.data(), it->second.size());
        out.emplace_back(uint64_t{it->second.size()});
      }
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<std::byte>> values_;
  bool blocked_ = false;
  int entered_ = 0;
};

// A UCX peer without the transport's framing: sends raw active messages to
// a node and keeps the SSD read replies it gets back.
class BarePeer {
 public:
  BarePeer() {
    Result<std::unique_ptr<UcxContext>> context =
        UcxContext::Create(kTransports);
    EXPECT_TRUE(context.ok());
    context_ = std::move(*context);
    Result<std::unique_ptr<UcxWorker>> worker =
        UcxWorker::Create(context_->handle(), &mu_);
    EXPECT_TRUE(worker.ok());
    worker_ = std::move(*worker);
    MutexLock lock(&mu_);
    peers_ = std::make_unique<UcxPeerCache>(worker_->handle(),
                                            std::chrono::milliseconds(1000));
    ucp_am_recv_callback_t on_reply =
        [](void* arg, const void*, size_t, void* data, size_t length,
           const ucp_am_recv_param_t*) -> ucs_status_t {
      BarePeer* self = static_cast<BarePeer*>(arg);
      std::lock_guard<std::mutex> guard(self->replies_mu_);
      self->replies_.push_back(DecodeSsdReadReply(
          std::string_view(static_cast<const char*>(data), length)));
      return UCS_OK;
    };
    EXPECT_TRUE(SetAmHandler(worker_->handle(), kSsdReadReplyAmId, on_reply,
                             this, "reply handler")
                    .ok());
  }

  ~BarePeer() {
    worker_->Stop();
    MutexLock lock(&mu_);
    peers_->CloseAll();
    worker_->ProgressOnce();
    peers_.reset();
  }

  const std::string& address() const { return worker_->address(); }

  // Sends each message as active message `am_id` (an SSD read request by
  // default); true when all went out.
  bool Send(const std::string& node, const std::vector<std::string>& messages,
            unsigned am_id = kSsdReadRequestAmId) {
    UcxRequestBatch batch(messages.size());
    {
      MutexLock lock(&mu_);
      Result<ucp_ep_h> ep = peers_->Endpoint(node);
      if (!ep.ok()) return false;
      for (const std::string& message : messages) {
        const size_t slot = batch.AddSlot();
        const ucp_request_param_t param = batch.Param(slot);
        batch.Track(slot,
                    ucp_am_send_nbx(*ep, am_id, nullptr, 0, message.data(),
                                    message.size(), &param));
      }
      worker_->Signal();
    }
    const bool sent = batch.WaitUntil(UcxRequestBatch::Clock::now() +
                                      std::chrono::milliseconds(2000));
    MutexLock lock(&mu_);
    batch.Finish();
    return sent;
  }

  std::vector<Result<SsdReadReply>> WaitForReplies(size_t count) {
    for (int i = 0; i < 200; ++i) {
      {
        std::lock_guard<std::mutex> guard(replies_mu_);
        if (replies_.size() >= count) return replies_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard<std::mutex> guard(replies_mu_);
    return replies_;
  }

 private:
  std::unique_ptr<UcxContext> context_;
  Mutex mu_;
  std::unique_ptr<UcxPeerCache> peers_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<UcxWorker> worker_;
  std::mutex replies_mu_;
  std::vector<Result<SsdReadReply>> replies_;
};

}  // namespace mooncake_tier::ucx_test
