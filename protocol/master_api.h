#pragma once

// MasterApi: the calls a client makes to the master, as an interface with
// one implementation per way of reaching it. LocalMasterApi
// (core/local_master.h) calls a Master in the same process;
// rpc/grpc_master_api.h reaches a remote one. It lives in protocol/, so
// that client/ (which calls it) and rpc/ (which implements it) need
// neither the engine nor each other. It names no transport. The gRPC
// service (rpc/master_service.h) serves the wire through it too.
//
// Thread safety: implementations are safe to call from many threads.

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "mooncake_tier/status.h"
#include "protocol/messages.h"
#include "protocol/node.h"

namespace mooncake_tier {

// A reader's lookup in one call (MasterApi::LookupForRead).
struct ReadLookup {
  // With a probe: what it found; `objects` then covers the first
  // prefix.length keys.
  PrefixInfo prefix;
  // GetReplicaList's results, one per key looked up, in order.
  std::vector<Result<ObjectReplicas>> objects;
  // The nodes the results name that the caller did not know.
  std::vector<NodeView> nodes;
};

class MasterApi {
 public:
  virtual ~MasterApi() = default;
  // Room for each object; a full tier may wait for writeback, as long as
  // the master's put_wait_timeout.
  virtual std::vector<Result<ReplicaDescriptor>> PutStart(
      std::span<const PutStartRequest> requests) = 0;
  // The same, waiting at most `max_wait` (and never past the master's own
  // limit): what a server passes when its caller's deadline is nearer.
  // Default: PutStart (the implementation bounds the wait itself).
  virtual std::vector<Result<ReplicaDescriptor>> PutStartWithin(
      std::span<const PutStartRequest> requests, Duration max_wait) {
    return PutStart(requests);
  }
  virtual std::vector<Status> PutEnd(const ClientId& client,
                                     std::span<const std::string> keys) = 0;
  virtual std::vector<Status> PutRevoke(const ClientId& client,
                                        std::span<const std::string> keys) = 0;
  virtual std::vector<Result<ObjectReplicas>> GetReplicaList(
      std::span<const std::string> keys) = 0;
  // Readers done copying (Master::ReleaseLeases): how many releases ended
  // a reader's share. A failed call only means the leases end at their
  // expiry instead.
  virtual Result<size_t> ReleaseLeases(
      std::span<const LeaseRelease> releases) = 0;
  virtual std::vector<Result<ExistsInfo>> Exists(
      std::span<const std::string> keys) = 0;
  // Master::ProbePrefix.
  virtual Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) = 0;
  virtual std::vector<Status> Remove(std::span<const std::string> keys,
                                     RemoveOptions options) = 0;
  virtual std::vector<Result<GroupDescription>> GetGroup(
      std::span<const std::string> group_ids) = 0;
  virtual std::vector<Status> RemoveGroup(
      std::span<const std::string> group_ids, RemoveOptions options) = 0;
  // How to reach a node's segment and SSD reads. NODE_NOT_FOUND when gone.
  virtual Result<NodeView> GetNode(NodeId node) = 0;

  // A reader's lookup in one round trip: GetReplicaList of `keys` or, with
  // `probe`, ProbePrefix of `keys` and then GetReplicaList of the prefix it
  // found; and, with `known_nodes` set, the views of the nodes the results
  // name that are not in it, so that a reader's first contact with a node
  // costs no GetNode. A failed probe fails the call; each lookup fails
  // alone, and a node that cannot be looked up is left out (the reader
  // asks GetNode). Default: those calls one after another (what an
  // in-process master does at no cost).
  virtual Result<ReadLookup> LookupForRead(
      std::span<const std::string> keys, bool probe,
      const std::vector<NodeId>* known_nodes) {
    ReadLookup out;
    std::span<const std::string> asked = keys;
    if (probe) {
      Result<PrefixInfo> prefix = ProbePrefix(keys);
      if (!prefix.ok()) return prefix.status();
      out.prefix = *prefix;
      asked = keys.first(std::min<size_t>(prefix->length, keys.size()));
    }
    if (!asked.empty()) out.objects = GetReplicaList(asked);
    if (known_nodes == nullptr) return out;
    std::vector<NodeId> known(known_nodes->begin(), known_nodes->end());
    std::sort(known.begin(), known.end());
    std::vector<NodeId> added;  // the few nodes of one answer
    for (const Result<ObjectReplicas>& object : out.objects) {
      if (!object.ok()) continue;
      for (const ReplicaDescriptor& replica : object->replicas) {
        if (replica.node == kNoNode ||
            std::binary_search(known.begin(), known.end(), replica.node) ||
            std::find(added.begin(), added.end(), replica.node) !=
                added.end()) {
          continue;
        }
        added.push_back(replica.node);
        Result<NodeView> view = GetNode(replica.node);
        if (view.ok()) out.nodes.push_back(std::move(*view));
      }
    }
    return out;
  }
};

}  // namespace mooncake_tier
