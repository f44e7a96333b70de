#include "rpc/convert.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "core/validation.h"

namespace mooncake_tier::rpc {

namespace {

// A one-to-one table between a core enum and its proto mirror. The proto's
// zero (UNSPECIFIED) is never in a table, so it always fails to decode.
template <typename Core, typename Proto, size_t N>
struct EnumTable {
  const char* field;
  std::array<std::pair<Core, Proto>, N> pairs;

  Proto Encode(Core value) const {
    for (const auto& [core, wire] : pairs) {
      if (core == value) return wire;
    }
    return Proto{};
  }
  Result<Core> Decode(int value) const {
    for (const auto& [core, wire] : pairs) {
      if (static_cast<int>(wire) == value) return core;
    }
    return Status(ErrorReason::kInvalidArgument,
                  std::string(field) + ": " +
                      (value == 0 ? std::string("missing")
                                  : "unknown value " + std::to_string(value)));
  }
};

constexpr EnumTable<Tier, proto::Tier, 2> kTiers{
    "tier",
    {{{Tier::kMemory, proto::TIER_MEMORY},
      {Tier::kLocalDisk, proto::TIER_LOCAL_DISK}}}};
constexpr EnumTable<ReplicaState, proto::ReplicaState, 2> kReplicaStates{
    "replica state",
    {{{ReplicaState::kProcessing, proto::REPLICA_STATE_PROCESSING},
      {ReplicaState::kComplete, proto::REPLICA_STATE_COMPLETE}}}};
constexpr EnumTable<GroupState, proto::GroupState, 4> kGroupStates{
    "group state",
    {{{GroupState::kFilling, proto::GROUP_STATE_FILLING},
      {GroupState::kComplete, proto::GROUP_STATE_COMPLETE},
      {GroupState::kBroken, proto::GROUP_STATE_BROKEN},
      {GroupState::kExpired, proto::GROUP_STATE_EXPIRED}}}};
constexpr EnumTable<NodeState, proto::NodeState, 3> kNodeStates{
    "node state",
    {{{NodeState::kAlive, proto::NODE_STATE_ALIVE},
      {NodeState::kSuspect, proto::NODE_STATE_SUSPECT},
      {NodeState::kDead, proto::NODE_STATE_DEAD}}}};
constexpr EnumTable<TaskKind, proto::TaskKind, 2> kTaskKinds{
    "task kind",
    {{{TaskKind::kOffload, proto::TASK_KIND_OFFLOAD},
      {TaskKind::kPromotion, proto::TASK_KIND_PROMOTION}}}};
constexpr EnumTable<TaskState, proto::TaskState, 3> kTaskStates{
    "task state",
    {{{TaskState::kQueued, proto::TASK_STATE_QUEUED},
      {TaskState::kDispatched, proto::TASK_STATE_DISPATCHED},
      {TaskState::kStaged, proto::TASK_STATE_STAGED}}}};
constexpr EnumTable<BreakCause, proto::BreakCause, 3> kBreakCauses{
    "break cause",
    {{{BreakCause::kRemoved, proto::BREAK_CAUSE_REMOVED},
      {BreakCause::kNodeLost, proto::BREAK_CAUSE_NODE_LOST},
      {BreakCause::kCorrupt, proto::BREAK_CAUSE_CORRUPT}}}};

Status Missing(const char* field) {
  return Status(ErrorReason::kInvalidArgument,
                std::string(field) + ": missing");
}

// Points in time as signed offsets from `now`.
int64_t NsBefore(TimePoint now, TimePoint t) { return (now - t).count(); }
// Offsets from outside are clamped to +-100 years so that the arithmetic
// cannot overflow.
constexpr int64_t kOffsetLimitNs = 100ll * 365 * 24 * 3600 * 1'000'000'000ll;
TimePoint FromNsBefore(TimePoint now, int64_t ns) {
  return now - Duration(std::clamp(ns, -kOffsetLimitNs, kOffsetLimitNs));
}
// The same for a time ahead of `now` (never negates outside input: -INT64_MIN
// does not exist).
int64_t NsAfter(TimePoint now, TimePoint t) { return (t - now).count(); }
TimePoint FromNsAfter(TimePoint now, int64_t ns) {
  return now + Duration(std::clamp(ns, -kOffsetLimitNs, kOffsetLimitNs));
}

// An optional group sub-message.
Result<std::optional<GroupSpec>> OptionalGroup(bool present,
                                               const proto::GroupSpec& group) {
  if (!present) return std::optional<GroupSpec>();
  MT_ASSIGN_OR_RETURN(GroupSpec spec, FromProto(group));
  return std::optional<GroupSpec>(std::move(spec));
}

}  // namespace

proto::Tier ToProto(Tier tier) { return kTiers.Encode(tier); }
Result<Tier> TierFromProto(int value) { return kTiers.Decode(value); }
proto::ReplicaState ToProto(ReplicaState state) {
  return kReplicaStates.Encode(state);
}
Result<ReplicaState> ReplicaStateFromProto(int value) {
  return kReplicaStates.Decode(value);
}
proto::GroupState ToProto(GroupState state) {
  return kGroupStates.Encode(state);
}
Result<GroupState> GroupStateFromProto(int value) {
  return kGroupStates.Decode(value);
}
proto::NodeState ToProto(NodeState state) { return kNodeStates.Encode(state); }
Result<NodeState> NodeStateFromProto(int value) {
  return kNodeStates.Decode(value);
}
proto::TaskKind ToProto(TaskKind kind) { return kTaskKinds.Encode(kind); }
Result<TaskKind> TaskKindFromProto(int value) {
  return kTaskKinds.Decode(value);
}
proto::TaskState ToProto(TaskState state) { return kTaskStates.Encode(state); }
Result<TaskState> TaskStateFromProto(int value) {
  return kTaskStates.Decode(value);
}
proto::BreakCause ToProto(std::optional<BreakCause> cause) {
  return cause ? kBreakCauses.Encode(*cause) : proto::BREAK_CAUSE_UNSPECIFIED;
}
Result<std::optional<BreakCause>> BreakCauseFromProto(int value) {
  if (value == proto::BREAK_CAUSE_UNSPECIFIED) {
    return std::optional<BreakCause>();
  }
  MT_ASSIGN_OR_RETURN(BreakCause cause, kBreakCauses.Decode(value));
  return std::optional<BreakCause>(cause);
}

Status CheckNameLength(const std::string& value, const char* field) {
  if (value.size() > kMaxNameBytes) {
    return Status(ErrorReason::kInvalidArgument,
                  std::string(field) + " is " + std::to_string(value.size()) +
                      " bytes; the limit is " + std::to_string(kMaxNameBytes));
  }
  return Status::Ok();
}

Result<std::string> KeyFromProto(const std::string& key) {
  MT_RETURN_IF_ERROR(ValidateKey(key));
  return key;
}

Result<std::string> GroupIdFromProto(const std::string& group_id) {
  if (group_id.size() > kMaxGroupIdBytes) {
    return Status(ErrorReason::kInvalidGroup,
                  "group_id is " + std::to_string(group_id.size()) +
                      " bytes; the limit is " +
                      std::to_string(kMaxGroupIdBytes));
  }
  return group_id;
}

void ToProto(const GroupSpec& spec, proto::GroupSpec* out) {
  out->set_group_id(spec.group_id);
  out->set_group_size(spec.group_size);
  out->set_group_index(spec.group_index);
}

Result<GroupSpec> FromProto(const proto::GroupSpec& spec) {
  GroupSpec out{spec.group_id(), spec.group_size(), spec.group_index()};
  MT_RETURN_IF_ERROR(ValidateGroupSpec(out));
  return out;
}

void ToProto(const ReplicaDescriptor& replica, proto::Replica* out) {
  out->set_id(replica.id);
  out->set_tier(ToProto(replica.tier));
  out->set_state(ToProto(replica.state));
  out->set_node(replica.node);
  out->set_offset(replica.offset);
  out->set_write_within_ms(replica.write_within_ms);
  out->set_size(replica.size);
}

Result<ReplicaDescriptor> FromProto(const proto::Replica& replica) {
  ReplicaDescriptor out;
  out.id = replica.id();
  MT_ASSIGN_OR_RETURN(out.tier, TierFromProto(replica.tier()));
  MT_ASSIGN_OR_RETURN(out.state, ReplicaStateFromProto(replica.state()));
  out.node = replica.node();
  out.offset = replica.offset();
  out.write_within_ms = replica.write_within_ms();
  out.size = replica.size();
  return out;
}

void ToProto(const GroupStatus& status, proto::GroupStatus* out) {
  out->set_group_id(status.group_id);
  out->set_state(ToProto(status.state));
  out->set_expected(status.expected);
  out->set_present(status.present);
}

Result<GroupStatus> FromProto(const proto::GroupStatus& status) {
  GroupStatus out;
  MT_ASSIGN_OR_RETURN(out.group_id, GroupIdFromProto(status.group_id()));
  MT_ASSIGN_OR_RETURN(out.state, GroupStateFromProto(status.state()));
  out.expected = status.expected();
  out.present = status.present();
  return out;
}

void ToProto(const ObjectReplicas& object, TimePoint now,
             proto::ObjectReplicas* out) {
  out->set_size(object.size);
  for (const ReplicaDescriptor& r : object.replicas) {
    ToProto(r, out->add_replicas());
  }
  // Remaining lease: the negated age of the deadline.
  out->set_lease_expires_in_ns(NsAfter(now, object.lease_deadline));
  out->set_lease_id(object.lease_id);
  out->set_location_valid_ms(object.location_valid_ms);
  if (object.group) ToProto(*object.group, out->mutable_group());
}

Result<ObjectReplicas> FromProto(const proto::ObjectReplicas& object,
                                 TimePoint now) {
  ObjectReplicas out;
  out.size = object.size();
  out.replicas.reserve(object.replicas_size());
  for (const proto::Replica& r : object.replicas()) {
    MT_ASSIGN_OR_RETURN(ReplicaDescriptor replica, FromProto(r));
    out.replicas.push_back(replica);
  }
  out.lease_deadline = FromNsAfter(now, object.lease_expires_in_ns());
  out.lease_id = object.lease_id();
  // A grant without a DRAM copy to read names nothing: dropped.
  if (!out.replicas.empty() && out.replicas.front().tier == Tier::kMemory) {
    out.location_valid_ms = object.location_valid_ms();
  }
  MT_ASSIGN_OR_RETURN(out.group,
                      OptionalGroup(object.has_group(), object.group()));
  return out;
}

void ToProto(const ExistsInfo& info, proto::ExistsInfo* out) {
  out->set_exists(info.exists);
  out->set_size(info.size);
  if (info.group) ToProto(*info.group, out->mutable_group());
}

Result<ExistsInfo> FromProto(const proto::ExistsInfo& info) {
  ExistsInfo out;
  out.exists = info.exists();
  out.size = info.size();
  if (info.has_group()) {
    MT_ASSIGN_OR_RETURN(GroupStatus group, FromProto(info.group()));
    out.group = std::move(group);
  }
  return out;
}

void ToProto(const GroupDescription& group, proto::GroupDescription* out) {
  ToProto(group.status, out->mutable_status());
  out->set_break_cause(ToProto(group.break_cause));
  for (const GroupDescription::Member& m : group.members) {
    proto::GroupMember* member = out->add_members();
    member->set_index(m.index);
    member->set_key(m.key);
    member->set_present(m.present);
    for (Tier t : m.tiers) member->add_tiers(ToProto(t));
  }
}

Result<GroupDescription> FromProto(const proto::GroupDescription& group) {
  if (!group.has_status()) return Missing("group status");
  GroupDescription out;
  MT_ASSIGN_OR_RETURN(out.status, FromProto(group.status()));
  MT_ASSIGN_OR_RETURN(out.break_cause,
                      BreakCauseFromProto(group.break_cause()));
  out.members.reserve(group.members_size());
  for (const proto::GroupMember& m : group.members()) {
    GroupDescription::Member member;
    member.index = m.index();
    member.key = m.key();
    member.present = m.present();
    for (int t : m.tiers()) {
      MT_ASSIGN_OR_RETURN(Tier tier, TierFromProto(t));
      member.tiers.push_back(tier);
    }
    out.members.push_back(std::move(member));
  }
  return out;
}

void ToProto(const NodeSpec& spec, proto::NodeSpec* out) {
  out->set_name(spec.name);
  out->set_rpc_address(spec.rpc_address);
  out->set_transport_address(spec.transport_address);
  out->set_dram_base(spec.dram_base);
  out->set_dram_size(spec.dram_size);
  out->set_dram_remote_key(spec.dram_remote_key);
  out->set_ssd_capacity(spec.ssd_capacity);
  out->set_keeps_directory(spec.keeps_directory);
  out->set_resumed(spec.resumed);
}

Result<NodeSpec> FromProto(const proto::NodeSpec& spec) {
  MT_RETURN_IF_ERROR(CheckNameLength(spec.name(), "node name"));
  MT_RETURN_IF_ERROR(CheckNameLength(spec.rpc_address(), "node rpc_address"));
  NodeSpec out;
  out.name = spec.name();
  out.rpc_address = spec.rpc_address();
  out.transport_address = spec.transport_address();
  out.dram_base = spec.dram_base();
  out.dram_size = spec.dram_size();
  out.dram_remote_key = spec.dram_remote_key();
  out.ssd_capacity = spec.ssd_capacity();
  out.keeps_directory = spec.keeps_directory();
  out.resumed = spec.resumed();
  return out;
}

void ToProto(const NodeView& node, TimePoint now, proto::NodeView* out) {
  out->set_id(node.id);
  ToProto(node.spec, out->mutable_spec());
  out->set_state(ToProto(node.state));
  out->set_registered_ns_ago(NsBefore(now, node.registered_at));
  out->set_last_heartbeat_ns_ago(NsBefore(now, node.last_heartbeat));
  out->set_dram_used(node.dram_used);
  out->set_ssd_used(node.ssd_used);
}

Result<NodeView> FromProto(const proto::NodeView& node, TimePoint now) {
  if (!node.has_spec()) return Missing("node spec");
  NodeView out;
  out.id = node.id();
  MT_ASSIGN_OR_RETURN(out.spec, FromProto(node.spec()));
  MT_ASSIGN_OR_RETURN(out.state, NodeStateFromProto(node.state()));
  out.registered_at = FromNsBefore(now, node.registered_ns_ago());
  out.last_heartbeat = FromNsBefore(now, node.last_heartbeat_ns_ago());
  out.dram_used = node.dram_used();
  out.ssd_used = node.ssd_used();
  return out;
}

void ToProto(const SsdInventoryEntry& entry, proto::SsdInventoryEntry* out) {
  out->set_key(entry.key);
  out->set_size(entry.size);
  if (entry.group) ToProto(*entry.group, out->mutable_group());
}

Result<SsdInventoryEntry> FromProto(const proto::SsdInventoryEntry& entry) {
  SsdInventoryEntry out;
  MT_ASSIGN_OR_RETURN(out.key, KeyFromProto(entry.key()));
  out.size = entry.size();
  MT_ASSIGN_OR_RETURN(out.group,
                      OptionalGroup(entry.has_group(), entry.group()));
  return out;
}

void ToProto(const DramEntry& entry, proto::DramEntry* out) {
  out->set_key(entry.key);
  out->set_offset(entry.offset);
  out->set_size(entry.size);
  if (entry.group) ToProto(*entry.group, out->mutable_group());
}

Result<DramEntry> FromProto(const proto::DramEntry& entry) {
  DramEntry out;
  MT_ASSIGN_OR_RETURN(out.key, KeyFromProto(entry.key()));
  out.offset = entry.offset();
  out.size = entry.size();
  MT_ASSIGN_OR_RETURN(out.group,
                      OptionalGroup(entry.has_group(), entry.group()));
  return out;
}

void ToProto(const DirectoryOp& op, proto::DirectoryChange* out) {
  out->set_seq(op.seq);
  out->set_drop(op.kind == DirectoryOp::Kind::kDrop);
  ToProto(op.entry, out->mutable_entry());
}

Result<DirectoryOp> FromProto(const proto::DirectoryChange& change) {
  if (!change.has_entry()) return Missing("directory change entry");
  DirectoryOp out;
  out.seq = change.seq();
  out.kind = change.drop() ? DirectoryOp::Kind::kDrop : DirectoryOp::Kind::kAdd;
  if (out.kind == DirectoryOp::Kind::kDrop) {
    // A drop may leave the key out (the master freed a range it no longer
    // names); it is checked only when present.
    out.entry.offset = change.entry().offset();
    out.entry.size = change.entry().size();
    if (!change.entry().key().empty()) {
      MT_ASSIGN_OR_RETURN(out.entry.key, KeyFromProto(change.entry().key()));
    }
    return out;
  }
  MT_ASSIGN_OR_RETURN(out.entry, FromProto(change.entry()));
  return out;
}

void ToProto(const Task& task, TimePoint now, proto::Task* out) {
  out->set_id(task.id);
  out->set_kind(ToProto(task.kind));
  out->set_node(task.node);
  out->set_key(task.key);
  if (task.group) ToProto(*task.group, out->mutable_group());
  ToProto(task.source, out->mutable_source());
  out->set_drop_source_on_success(task.drop_source_on_success);
  out->set_state(ToProto(task.state));
  out->set_created_ns_ago(NsBefore(now, task.created));
  out->set_dispatched_ns_ago(NsBefore(now, task.dispatched));
  // Id 0 means nothing is staged yet: the field stays absent, and an absent
  // target decodes back to id 0.
  if (task.target.id != 0) ToProto(task.target, out->mutable_target());
  out->set_forced(task.forced);
}

Result<Task> FromProto(const proto::Task& task, TimePoint now) {
  if (!task.has_source()) return Missing("task source");
  Task out;
  out.id = task.id();
  MT_ASSIGN_OR_RETURN(out.kind, TaskKindFromProto(task.kind()));
  out.node = task.node();
  out.key = task.key();
  MT_ASSIGN_OR_RETURN(out.group, OptionalGroup(task.has_group(), task.group()));
  MT_ASSIGN_OR_RETURN(out.source, FromProto(task.source()));
  out.drop_source_on_success = task.drop_source_on_success();
  MT_ASSIGN_OR_RETURN(out.state, TaskStateFromProto(task.state()));
  out.created = FromNsBefore(now, task.created_ns_ago());
  out.dispatched = FromNsBefore(now, task.dispatched_ns_ago());
  if (task.has_target()) {
    MT_ASSIGN_OR_RETURN(out.target, FromProto(task.target()));
  }
  out.forced = task.forced();
  return out;
}

void ToProto(const PutStartRequest& request, proto::PutStartItem* out) {
  out->set_key(request.key);
  out->set_size(request.size);
  if (request.options.group) {
    ToProto(*request.options.group, out->mutable_group());
  }
  out->set_preferred_node(request.options.preferred_node);
  out->set_hard_pin(request.options.hard_pin);
  out->set_client_id(request.client);
}

Result<PutStartRequest> FromProto(const proto::PutStartItem& item) {
  PutStartRequest out;
  MT_ASSIGN_OR_RETURN(out.key, KeyFromProto(item.key()));
  out.size = item.size();
  MT_ASSIGN_OR_RETURN(out.options.group,
                      OptionalGroup(item.has_group(), item.group()));
  MT_RETURN_IF_ERROR(CheckNameLength(item.preferred_node(), "preferred_node"));
  out.options.preferred_node = item.preferred_node();
  out.options.hard_pin = item.hard_pin();
  MT_RETURN_IF_ERROR(CheckNameLength(item.client_id(), "client_id"));
  out.client = item.client_id();
  return out;
}

void ToProto(const SsdReport& r, proto::SsdReport* out) {
  out->set_capacity_bytes(r.capacity_bytes);
  out->set_put_limit_bytes(r.put_limit_bytes);
  out->set_file_bytes(r.file_bytes);
  out->set_live_value_bytes(r.live_value_bytes);
  out->set_live_record_bytes(r.live_record_bytes);
  out->set_no_space_refusals(r.no_space_refusals);
  out->set_device_bytes_written(r.device_bytes_written);
}

SsdReport FromProto(const proto::SsdReport& r) {
  SsdReport out;
  out.capacity_bytes = r.capacity_bytes();
  out.put_limit_bytes = r.put_limit_bytes();
  out.file_bytes = r.file_bytes();
  out.live_value_bytes = r.live_value_bytes();
  out.live_record_bytes = r.live_record_bytes();
  out.no_space_refusals = r.no_space_refusals();
  out.device_bytes_written = r.device_bytes_written();
  return out;
}

void ToProto(const NodeTasks& reply, TimePoint now,
             proto::PullTasksResponse* out) {
  for (const Task& task : reply.offloads) {
    ToProto(task, now, out->add_offloads());
  }
  for (const std::string& key : reply.ssd_deletes) out->add_ssd_deletes(key);
  for (const Task& task : reply.promotions) {
    ToProto(task, now, out->add_promotions());
  }
}

Result<NodeTasks> FromProto(const proto::PullTasksResponse& reply,
                            TimePoint now) {
  NodeTasks out;
  out.offloads.reserve(reply.offloads_size());
  for (const proto::Task& t : reply.offloads()) {
    MT_ASSIGN_OR_RETURN(Task task, FromProto(t, now));
    out.offloads.push_back(std::move(task));
  }
  out.ssd_deletes.assign(reply.ssd_deletes().begin(),
                         reply.ssd_deletes().end());
  out.promotions.reserve(reply.promotions_size());
  for (const proto::Task& t : reply.promotions()) {
    MT_ASSIGN_OR_RETURN(Task task, FromProto(t, now));
    out.promotions.push_back(std::move(task));
  }
  return out;
}

}  // namespace mooncake_tier::rpc
