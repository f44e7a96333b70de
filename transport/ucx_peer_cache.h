#pragma once

// Endpoints of one worker to its peers, keyed by the peer's worker address,
// and the remote keys unpacked on them, keyed by their packed bytes.
//
// Endpoints are created with peer error handling: when UCX reports a peer
// failure the entry is marked failed, its endpoint closed at the next
// lookup, and lookups answer UNAVAILABLE at once for `failed_retry`; after
// that a fresh connection is tried (a worker address is unique per worker,
// so a restarted node comes back under a new address anyway).
//
// Remote keys are never evicted while their endpoint lives: an operation of
// another caller may still be using one. A node publishes one key per
// segment, so the set per peer stays tiny; more than kMaxKeysPerPeer
// distinct keys for one peer is refused as a client error.
//
// Thread safety: not thread-safe. The owner guards the cache with the
// worker's mutex, which the UCX error callback also runs under.

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier {

class UcxPeerCache {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxKeysPerPeer = 64;
  // Past this many entries, failed peers are forgotten.
  static constexpr size_t kMaxPeers = 4096;

  // Called, from the UCX error callback, when the endpoint to `address`
  // fails, so that the owner can fail what waits on that peer.
  using FailureHook =
      std::function<void(const std::string& address, ucs_status_t status)>;

  UcxPeerCache(ucp_worker_h worker, std::chrono::milliseconds failed_retry,
               FailureHook on_failure = {});
  ~UcxPeerCache();

  UcxPeerCache(const UcxPeerCache&) = delete;
  UcxPeerCache& operator=(const UcxPeerCache&) = delete;

  // The endpoint to the worker at `address`, connecting on first use.
  Result<ucp_ep_h> Endpoint(const std::string& address);
  // The key `packed_key` unpacked on the endpoint to `address`; cached.
  Result<ucp_rkey_h> RemoteKey(const std::string& address,
                               const std::string& packed_key);
  // Force-closes the endpoint to `address` (its pending operations complete
  // with UCS_ERR_CANCELED) and forgets it. Keys from it become invalid.
  void Drop(const std::string& address);
  // Drop for every peer.
  void CloseAll();

 private:
  struct Peer {
    UcxPeerCache* cache = nullptr;
    std::string address;
    ucp_ep_h ep = nullptr;
    bool failed = false;
    ucs_status_t error = UCS_OK;
    Clock::time_point failed_at;
    absl::flat_hash_map<std::string, ucp_rkey_h> keys;
  };

  static void OnError(void* arg, ucp_ep_h ep, ucs_status_t status);
  // Releases the keys and endpoint of `peer`; it stays in the map.
  static void Close(Peer& peer);
  Result<Peer*> Connect(const std::string& address);

  ucp_worker_h const worker_;
  const std::chrono::milliseconds failed_retry_;
  const FailureHook on_failure_;
  absl::flat_hash_map<std::string, std::unique_ptr<Peer>> peers_;
};

}  // namespace mooncake_tier
