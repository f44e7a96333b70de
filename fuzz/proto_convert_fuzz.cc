// Fuzzes the conversions from the control plane's protos to the engine's
// values (rpc/convert.h, rpc/status_convert.h): what the master's service
// runs on every request before it reaches the engine, and what the stubs
// run on every reply.
//
// Input: [message type: 1 byte][serialized message]. The type byte picks a
// ProtoFuzzMessage (fuzz/proto_convert_messages.h, modulo its count); bytes
// that do not parse as that message are skipped, as gRPC would refuse them.
//
// Properties checked on every value a conversion accepts:
//   - a refusal is an INVALID_ARGUMENT-family status (never INTERNAL);
//   - what was accepted, encoded again, is accepted again, and encodes to
//     the same bytes the second time (a value that crossed the wire once
//     crosses it again unchanged);
//   - decoded keys, group ids and names respect their limits.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/validation.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_convert_messages.h"
#include "grpcpp/support/status.h"
#include "rpc/convert.h"
#include "rpc/proto/master.pb.h"
#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {
namespace {

constexpr size_t kMaxInputBytes = 64 << 10;

[[maybe_unused]] const bool kSilenced = fuzz::SilenceLogs();

// The receiver's clock: fixed, so that runs are deterministic.
const TimePoint kNow = TimePoint(std::chrono::hours(1000));

using Strings = google::protobuf::RepeatedPtrField<std::string>;

bool IsRefusal(const Status& status) {
  switch (status.reason()) {
    case ErrorReason::kInvalidArgument:
    case ErrorReason::kInvalidKey:
    case ErrorReason::kInvalidGroup:
    case ErrorReason::kInvalidSize:
      return true;
    default:
      return false;
  }
}

// Runs `decode` (proto -> Result<T>) on `wire`; when it accepts, checks
// that encode(decode(encode(v))) is encode(v). `check` sees each accepted
// value.
template <typename Proto, typename Decode, typename Encode, typename Check>
void Stable(const Proto& wire, Decode&& decode, Encode&& encode,
            Check&& check) {
  auto first = decode(wire);
  if (!first.ok()) {
    FUZZ_CHECK(IsRefusal(first.status()),
               "a conversion refuses with an invalid-argument reason");
    return;
  }
  check(*first);
  Proto once;
  encode(*first, &once);
  auto second = decode(once);
  FUZZ_CHECK(second.ok(), "an accepted value encoded again is accepted");
  check(*second);
  Proto twice;
  encode(*second, &twice);
  FUZZ_CHECK(once.SerializeAsString() == twice.SerializeAsString(),
             "a value that crossed the wire crosses it again unchanged");
}

template <typename Proto, typename Decode, typename Encode>
void Stable(const Proto& wire, Decode&& decode, Encode&& encode) {
  Stable(wire, decode, encode, [](const auto&) {});
}

void CheckKey(const std::string& key) {
  FUZZ_CHECK(ValidateKey(key).ok(), "an accepted key is valid");
}

void CheckGroup(const std::optional<GroupSpec>& group) {
  if (group) {
    FUZZ_CHECK(ValidateGroupSpec(*group).ok(), "an accepted group is valid");
  }
}

// ---- Pieces ----

void Key(const std::string& key) {
  Result<std::string> decoded = KeyFromProto(key);
  if (!decoded.ok()) {
    FUZZ_CHECK(IsRefusal(decoded.status()), "a bad key is refused");
    return;
  }
  CheckKey(*decoded);
  FUZZ_CHECK(*decoded == key, "a key is taken as sent");
}

void Keys(const Strings& keys) {
  for (const std::string& key : keys) Key(key);
}

void GroupIds(const Strings& ids) {
  for (const std::string& id : ids) {
    Result<std::string> decoded = GroupIdFromProto(id);
    if (decoded.ok()) {
      FUZZ_CHECK(decoded->size() <= kMaxGroupIdBytes,
                 "an accepted group id is within its limit");
    } else {
      FUZZ_CHECK(IsRefusal(decoded.status()), "a bad group id is refused");
    }
  }
}

void Name(const std::string& name) {
  const Status status = CheckNameLength(name, "name");
  FUZZ_CHECK(status.ok() == (name.size() <= kMaxNameBytes),
             "names are refused by length only");
}

void Item(const proto::ItemStatus& wire) {
  const Status first = FromProto(wire);
  proto::ItemStatus once;
  ToProto(first, &once);
  const Status second = FromProto(once);
  FUZZ_CHECK(
      second.reason() == first.reason() && second.message() == first.message(),
      "a status crosses the wire unchanged");
}

void Replica(const proto::Replica& wire) {
  Stable(
      wire, [](const proto::Replica& r) { return FromProto(r); },
      [](const ReplicaDescriptor& r, proto::Replica* out) { ToProto(r, out); });
}

void Node(const proto::NodeView& wire) {
  Stable(
      wire, [](const proto::NodeView& n) { return FromProto(n, kNow); },
      [](const NodeView& n, proto::NodeView* out) { ToProto(n, kNow, out); },
      [](const NodeView& n) {
        FUZZ_CHECK(n.spec.name.size() <= kMaxNameBytes &&
                       n.spec.rpc_address.size() <= kMaxNameBytes,
                   "an accepted node's names are within their limit");
      });
}

void Nodes(const google::protobuf::RepeatedPtrField<proto::NodeView>& nodes) {
  for (const proto::NodeView& n : nodes) Node(n);
}

void Objects(
    const google::protobuf::RepeatedPtrField<proto::GetReplicaListResult>&
        results) {
  for (const proto::GetReplicaListResult& r : results) {
    Item(r.status());
    Stable(
        r.object(),
        [](const proto::ObjectReplicas& o) { return FromProto(o, kNow); },
        [](const ObjectReplicas& o, proto::ObjectReplicas* out) {
          ToProto(o, kNow, out);
        },
        [](const ObjectReplicas& o) { CheckGroup(o.group); });
  }
}

// ---- Requests (the master's service) ----

void PutStart(const proto::PutStartRequest& req) {
  for (const proto::PutStartItem& item : req.items()) {
    Stable(
        item, [](const proto::PutStartItem& i) { return FromProto(i); },
        [](const PutStartRequest& r, proto::PutStartItem* out) {
          ToProto(r, out);
        },
        [](const PutStartRequest& r) {
          CheckKey(r.key);
          CheckGroup(r.options.group);
          FUZZ_CHECK(r.client.size() <= kMaxNameBytes &&
                         r.options.preferred_node.size() <= kMaxNameBytes,
                     "an accepted put's names are within their limit");
        });
  }
}

template <typename Request>
void ClientKeys(const Request& req) {
  Name(req.client_id());
  Keys(req.keys());
}

template <typename Request>
void KeysOf(const Request& req) {
  Keys(req.keys());
}

template <typename Request>
void GroupIdsOf(const Request& req) {
  GroupIds(req.group_ids());
}

void ReleaseLeases(const proto::ReleaseLeasesRequest& req) {
  for (const proto::LeaseRelease& r : req.releases()) Key(r.key());
}

void RegisterNode(const proto::RegisterNodeRequest& req) {
  Stable(
      req.spec(), [](const proto::NodeSpec& s) { return FromProto(s); },
      [](const NodeSpec& s, proto::NodeSpec* out) { ToProto(s, out); });
  for (const proto::SsdInventoryEntry& e : req.inventory()) {
    Stable(
        e, [](const proto::SsdInventoryEntry& x) { return FromProto(x); },
        [](const SsdInventoryEntry& x, proto::SsdInventoryEntry* out) {
          ToProto(x, out);
        },
        [](const SsdInventoryEntry& x) {
          CheckKey(x.key);
          CheckGroup(x.group);
        });
  }
  for (const proto::DramEntry& e : req.dram()) {
    Stable(
        e, [](const proto::DramEntry& x) { return FromProto(x); },
        [](const DramEntry& x, proto::DramEntry* out) { ToProto(x, out); },
        [](const DramEntry& x) {
          CheckKey(x.key);
          CheckGroup(x.group);
        });
  }
}

void Heartbeat(const proto::HeartbeatRequest& req) {
  if (!req.has_ssd()) return;
  Stable(
      req.ssd(),
      [](const proto::SsdReport& r) { return Result<SsdReport>(FromProto(r)); },
      [](const SsdReport& r, proto::SsdReport* out) { ToProto(r, out); });
}

template <typename Request>
void Failures(const Request& req) {
  for (const auto& f : req.failures()) Item(f.cause());
}

// ---- Replies (the stubs) ----

template <typename Response>
void ReplicaResults(const Response& resp) {
  for (const auto& r : resp.results()) {
    Item(r.status());
    Replica(r.replica());
  }
}

void ReplicaLists(const proto::GetReplicaListResponse& resp) {
  Objects(resp.results());
  Nodes(resp.nodes());
}

void ProbePrefix(const proto::ProbePrefixResponse& resp) {
  Objects(resp.objects());
  Nodes(resp.nodes());
}

void Exists(const proto::ExistsResponse& resp) {
  for (const proto::ExistsResult& r : resp.results()) {
    Item(r.status());
    Stable(
        r.info(), [](const proto::ExistsInfo& i) { return FromProto(i); },
        [](const ExistsInfo& i, proto::ExistsInfo* out) { ToProto(i, out); });
  }
}

void Groups(const proto::GetGroupResponse& resp) {
  for (const proto::GetGroupResult& r : resp.results()) {
    Item(r.status());
    Stable(
        r.group(),
        [](const proto::GroupDescription& g) { return FromProto(g); },
        [](const GroupDescription& g, proto::GroupDescription* out) {
          ToProto(g, out);
        },
        [](const GroupDescription& g) {
          FUZZ_CHECK(g.status.group_id.size() <= kMaxGroupIdBytes,
                     "an accepted group id is within its limit");
        });
  }
}

void GetNode(const proto::GetNodeResponse& resp) {
  for (const proto::GetNodeResult& r : resp.results()) {
    Item(r.status());
    Node(r.node());
  }
}

void PullTasks(const proto::PullTasksResponse& resp) {
  Item(resp.status());
  // The stub decodes the payload at once; status and term are not part of
  // it, so the comparison leaves them out.
  proto::PullTasksResponse payload = resp;
  payload.clear_status();
  payload.clear_term();
  Stable(
      payload,
      [](const proto::PullTasksResponse& r) { return FromProto(r, kNow); },
      [](const NodeTasks& t, proto::PullTasksResponse* out) {
        ToProto(t, kNow, out);
      },
      [](const NodeTasks& t) {
        for (const Task& task : t.offloads) CheckGroup(task.group);
        for (const Task& task : t.promotions) CheckGroup(task.group);
      });
}

void SyncDirectory(const proto::SyncDirectoryResponse& resp) {
  Item(resp.status());
  for (const proto::DirectoryChange& change : resp.changes()) {
    Stable(
        change, [](const proto::DirectoryChange& c) { return FromProto(c); },
        [](const DirectoryOp& op, proto::DirectoryChange* out) {
          ToProto(op, out);
        },
        [](const DirectoryOp& op) {
          if (!op.entry.key.empty()) CheckKey(op.entry.key);
          CheckGroup(op.entry.group);
        });
  }
}

void Statuses(const proto::RemoveResponse& resp) {
  for (const proto::ItemStatus& s : resp.results()) Item(s);
}

// A call-level failure with a serialized ItemStatus as its details, as the
// stubs read every failed call.
void CallFailure(std::string_view bytes) {
  if (bytes.empty()) return;
  const auto code = static_cast<grpc::StatusCode>(
      1 + static_cast<uint8_t>(bytes[0]) % 16);  // never OK
  const grpc::Status status(code, "fuzz", std::string(bytes.substr(1)));
  const Status decoded = FromGrpcStatus(status, "Method", "target");
  FUZZ_CHECK(!decoded.ok(), "a failed call never decodes as OK");
}

// Parses `bytes` as a Proto and hands it to `fn`; skips what does not
// parse.
template <typename Proto, void (*fn)(const Proto&)>
void Parsed(std::string_view bytes) {
  Proto message;
  if (message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    fn(message);
  }
}

void RunOne(const uint8_t* data, size_t size) {
  using M = fuzz::ProtoFuzzMessage;
  if (size == 0 || size > kMaxInputBytes) return;
  const auto type = static_cast<M>(data[0] % static_cast<uint8_t>(M::kCount));
  const std::string_view bytes = fuzz::AsText(data + 1, size - 1);
  switch (type) {
    case M::kPutStartRequest:
      return Parsed<proto::PutStartRequest, PutStart>(bytes);
    case M::kPutEndRequest:
      return Parsed<proto::PutEndRequest, ClientKeys>(bytes);
    case M::kPutRevokeRequest:
      return Parsed<proto::PutRevokeRequest, ClientKeys>(bytes);
    case M::kGetReplicaListRequest:
      return Parsed<proto::GetReplicaListRequest, KeysOf>(bytes);
    case M::kExistsRequest:
      return Parsed<proto::ExistsRequest, KeysOf>(bytes);
    case M::kProbePrefixRequest:
      return Parsed<proto::ProbePrefixRequest, KeysOf>(bytes);
    case M::kReleaseLeasesRequest:
      return Parsed<proto::ReleaseLeasesRequest, ReleaseLeases>(bytes);
    case M::kRemoveRequest:
      return Parsed<proto::RemoveRequest, KeysOf>(bytes);
    case M::kGetGroupRequest:
      return Parsed<proto::GetGroupRequest, GroupIdsOf>(bytes);
    case M::kRemoveGroupRequest:
      return Parsed<proto::RemoveGroupRequest, GroupIdsOf>(bytes);
    case M::kRegisterNodeRequest:
      return Parsed<proto::RegisterNodeRequest, RegisterNode>(bytes);
    case M::kHeartbeatRequest:
      return Parsed<proto::HeartbeatRequest, Heartbeat>(bytes);
    case M::kNotifyOffloadFailureRequest:
      return Parsed<proto::NotifyOffloadFailureRequest, Failures>(bytes);
    case M::kNotifyPromotionFailureRequest:
      return Parsed<proto::NotifyPromotionFailureRequest, Failures>(bytes);
    case M::kReportSsdCorruptionRequest:
      return Parsed<proto::ReportSsdCorruptionRequest, KeysOf>(bytes);
    case M::kPutStartResponse:
      return Parsed<proto::PutStartResponse, ReplicaResults>(bytes);
    case M::kGetReplicaListResponse:
      return Parsed<proto::GetReplicaListResponse, ReplicaLists>(bytes);
    case M::kProbePrefixResponse:
      return Parsed<proto::ProbePrefixResponse, ProbePrefix>(bytes);
    case M::kExistsResponse:
      return Parsed<proto::ExistsResponse, Exists>(bytes);
    case M::kGetGroupResponse:
      return Parsed<proto::GetGroupResponse, Groups>(bytes);
    case M::kGetNodeResponse:
      return Parsed<proto::GetNodeResponse, GetNode>(bytes);
    case M::kPullTasksResponse:
      return Parsed<proto::PullTasksResponse, PullTasks>(bytes);
    case M::kSyncDirectoryResponse:
      return Parsed<proto::SyncDirectoryResponse, SyncDirectory>(bytes);
    case M::kPromotionAllocStartResponse:
      return Parsed<proto::PromotionAllocStartResponse, ReplicaResults>(bytes);
    case M::kRemoveResponse:
      return Parsed<proto::RemoveResponse, Statuses>(bytes);
    case M::kCallFailure:
      return CallFailure(bytes);
    case M::kCount:
      return;
  }
}

}  // namespace
}  // namespace mooncake_tier::rpc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mooncake_tier::rpc::RunOne(data, size);
  return 0;
}
