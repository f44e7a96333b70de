#pragma once

// Conversions between the engine's values (core/) and their protos
// (rpc/proto/master.proto).
//
// ToProto never fails. FromProto validates what it reads (enums in range,
// required sub-messages present, keys and ids within their limits) and
// returns INVALID_ARGUMENT-family errors naming the field; it never
// asserts. The server uses it on requests; the stubs use it on replies and
// report a failure there as a malformed reply (INTERNAL).
//
// Points in time travel as offsets from the sender's `now` (master and
// callers share no clock): the encoder takes the master's now, the decoder
// the receiver's.
//
// rpc-internal: includes generated headers; never include it from a header
// outside rpc/.
//
// Thread safety: pure functions.

#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "protocol/messages.h"
#include "protocol/node.h"
#include "protocol/types.h"
#include "rpc/proto/master.pb.h"

namespace mooncake_tier::rpc {

// Largest number of items one batch call may carry; a bigger request is
// refused as a whole with INVALID_ARGUMENT.
inline constexpr size_t kMaxBatchItems = 1 << 16;
// Longest node name, client id and node address accepted.
inline constexpr size_t kMaxNameBytes = 1024;

// ---- Enums. FromProto rejects UNSPECIFIED and unknown values. ----
proto::Tier ToProto(Tier tier);
Result<Tier> TierFromProto(int value);
proto::ReplicaState ToProto(ReplicaState state);
Result<ReplicaState> ReplicaStateFromProto(int value);
proto::GroupState ToProto(GroupState state);
Result<GroupState> GroupStateFromProto(int value);
proto::NodeState ToProto(NodeState state);
Result<NodeState> NodeStateFromProto(int value);
proto::TaskKind ToProto(TaskKind kind);
Result<TaskKind> TaskKindFromProto(int value);
proto::TaskState ToProto(TaskState state);
Result<TaskState> TaskStateFromProto(int value);
// BREAK_CAUSE_UNSPECIFIED is "not broken" (nullopt).
proto::BreakCause ToProto(std::optional<BreakCause> cause);
Result<std::optional<BreakCause>> BreakCauseFromProto(int value);

// ---- Identifiers ----
// INVALID_ARGUMENT when `value` (a node name, client id, address) is longer
// than kMaxNameBytes.
Status CheckNameLength(const std::string& value, const char* field);
// INVALID_KEY unless a valid key (core/validation.h).
Result<std::string> KeyFromProto(const std::string& key);
// INVALID_GROUP when longer than kMaxGroupIdBytes; an unknown id is for the
// master to report.
Result<std::string> GroupIdFromProto(const std::string& group_id);

// ---- Values ----
void ToProto(const GroupSpec& spec, proto::GroupSpec* out);
Result<GroupSpec> FromProto(const proto::GroupSpec& spec);

void ToProto(const ReplicaDescriptor& replica, proto::Replica* out);
Result<ReplicaDescriptor> FromProto(const proto::Replica& replica);

void ToProto(const GroupStatus& status, proto::GroupStatus* out);
Result<GroupStatus> FromProto(const proto::GroupStatus& status);

void ToProto(const ObjectReplicas& object, TimePoint now,
             proto::ObjectReplicas* out);
Result<ObjectReplicas> FromProto(const proto::ObjectReplicas& object,
                                 TimePoint now);

void ToProto(const ExistsInfo& info, proto::ExistsInfo* out);
Result<ExistsInfo> FromProto(const proto::ExistsInfo& info);

void ToProto(const GroupDescription& group, proto::GroupDescription* out);
Result<GroupDescription> FromProto(const proto::GroupDescription& group);

void ToProto(const NodeSpec& spec, proto::NodeSpec* out);
Result<NodeSpec> FromProto(const proto::NodeSpec& spec);

void ToProto(const NodeView& node, TimePoint now, proto::NodeView* out);
Result<NodeView> FromProto(const proto::NodeView& node, TimePoint now);

void ToProto(const SsdInventoryEntry& entry, proto::SsdInventoryEntry* out);
Result<SsdInventoryEntry> FromProto(const proto::SsdInventoryEntry& entry);
void ToProto(const DramEntry& entry, proto::DramEntry* out);
Result<DramEntry> FromProto(const proto::DramEntry& entry);
void ToProto(const DirectoryOp& op, proto::DirectoryChange* out);
Result<DirectoryOp> FromProto(const proto::DirectoryChange& change);

void ToProto(const Task& task, TimePoint now, proto::Task* out);
Result<Task> FromProto(const proto::Task& task, TimePoint now);

// A put of one object; the key and group are validated.
void ToProto(const PutStartRequest& request, proto::PutStartItem* out);
Result<PutStartRequest> FromProto(const proto::PutStartItem& item);

void ToProto(const SsdReport& report, proto::SsdReport* out);
SsdReport FromProto(const proto::SsdReport& report);

// The reply's payload (its status field is left alone).
void ToProto(const NodeTasks& reply, TimePoint now,
             proto::PullTasksResponse* out);
Result<NodeTasks> FromProto(const proto::PullTasksResponse& reply,
                            TimePoint now);

}  // namespace mooncake_tier::rpc
