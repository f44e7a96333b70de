#include "transport/ucx_peer_cache.h"

#include "transport/ucx_status.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier {

UcxPeerCache::UcxPeerCache(ucp_worker_h worker,
                           std::chrono::milliseconds failed_retry,
                           FailureHook on_failure)
    : worker_(worker),
      failed_retry_(failed_retry),
      on_failure_(std::move(on_failure)) {}

UcxPeerCache::~UcxPeerCache() { CloseAll(); }

void UcxPeerCache::OnError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  Peer* peer = static_cast<Peer*>(arg);
  if (peer->ep != ep || peer->failed) return;
  peer->failed = true;
  peer->error = status;
  peer->failed_at = Clock::now();
  if (peer->cache->on_failure_) peer->cache->on_failure_(peer->address, status);
}

void UcxPeerCache::Close(Peer& peer) {
  if (peer.ep != nullptr) {
    // Cancels what is in flight first, so no operation outlives its key.
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucp_ep_close_nbx(peer.ep, &param);
    // The close finishes inside UCX; nothing waits for it.
    if (UCS_PTR_IS_PTR(request)) ucp_request_free(request);
    peer.ep = nullptr;
  }
  for (auto& [packed, rkey] : peer.keys) ucp_rkey_destroy(rkey);
  peer.keys.clear();
}

Result<UcxPeerCache::Peer*> UcxPeerCache::Connect(const std::string& address) {
  if (peers_.size() >= kMaxPeers && !peers_.contains(address)) {
    // Forget failed peers (their endpoints are already closed) first.
    absl::erase_if(peers_, [](const auto& entry) {
      return entry.second->failed && entry.second->ep == nullptr;
    });
  }
  auto [it, inserted] = peers_.try_emplace(address, nullptr);
  if (inserted) {
    it->second = std::make_unique<Peer>();
    it->second->cache = this;
    it->second->address = address;
  }
  Peer& peer = *it->second;
  if (peer.failed) {
    if (Clock::now() - peer.failed_at < failed_retry_) {
      Close(peer);
      return UcxError(peer.error, "node endpoint failed");
    }
    Close(peer);
    peer.failed = false;
  }
  if (peer.ep != nullptr) return &peer;
  Result<ucp_ep_h> ep =
      ConnectPeer(worker_, address, &UcxPeerCache::OnError, &peer, "node");
  if (!ep.ok()) {
    peers_.erase(it);
    return ep.status();
  }
  peer.ep = *ep;
  return &peer;
}

Result<ucp_ep_h> UcxPeerCache::Endpoint(const std::string& address) {
  if (address.empty()) {
    return Status(ErrorReason::kInvalidArgument, "empty transport address");
  }
  MT_ASSIGN_OR_RETURN(Peer * peer, Connect(address));
  return peer->ep;
}

Result<ucp_rkey_h> UcxPeerCache::RemoteKey(const std::string& address,
                                           const std::string& packed_key) {
  if (packed_key.empty()) {
    return Status(ErrorReason::kInvalidArgument, "empty remote key");
  }
  MT_ASSIGN_OR_RETURN(Peer * peer, Connect(address));
  auto it = peer->keys.find(packed_key);
  if (it != peer->keys.end()) return it->second;
  if (peer->keys.size() >= kMaxKeysPerPeer) {
    return Status(ErrorReason::kInvalidArgument,
                  "too many distinct remote keys for one node");
  }
  ucp_rkey_h rkey = nullptr;
  const ucs_status_t status =
      ucp_ep_rkey_unpack(peer->ep, packed_key.data(), &rkey);
  if (status != UCS_OK) return UcxError(status, "unpacking the remote key");
  peer->keys.emplace(packed_key, rkey);
  return rkey;
}

void UcxPeerCache::Drop(const std::string& address) {
  auto it = peers_.find(address);
  if (it == peers_.end()) return;
  Close(*it->second);
  peers_.erase(it);
}

void UcxPeerCache::CloseAll() {
  for (auto& [address, peer] : peers_) Close(*peer);
  peers_.clear();
}

}  // namespace mooncake_tier
