#include "daemon/redialing_master_link.h"

#include <utility>

#include "rpc/grpc_master_link.h"
#include "spdlog/spdlog.h"

namespace mooncake_tier::daemon {

Result<std::unique_ptr<RedialingMasterLink>> RedialingMasterLink::Create(
    rpc::GrpcChannelOptions options, Duration redial_interval) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<rpc::GrpcMasterLink> link,
                      rpc::GrpcMasterLink::Create(options));
  return std::unique_ptr<RedialingMasterLink>(new RedialingMasterLink(
      std::move(options), redial_interval, std::move(link)));
}

RedialingMasterLink::RedialingMasterLink(rpc::GrpcChannelOptions options,
                                         Duration interval,
                                         std::shared_ptr<MasterLink> link)
    : options_(std::move(options)),
      interval_(interval),
      link_(std::move(link)),
      dialed_at_(std::chrono::steady_clock::now()) {}

RedialingMasterLink::~RedialingMasterLink() = default;

std::shared_ptr<MasterLink> RedialingMasterLink::Current() const {
  MutexLock lock(&mu_);
  return link_;
}

void RedialingMasterLink::AfterCall(const Status& status) {
  if (status.reason() != ErrorReason::kUnavailable) return;
  const TimePoint now = std::chrono::steady_clock::now();
  {
    MutexLock lock(&mu_);
    if (now - dialed_at_ < interval_) return;
    dialed_at_ = now;  // at most one redial per interval, even on failure
  }
  Result<std::unique_ptr<rpc::GrpcMasterLink>> fresh =
      rpc::GrpcMasterLink::Create(options_);
  if (!fresh.ok()) return;  // options were valid once; keep the old channel
  std::shared_ptr<MasterLink> old;  // released after the lock
  {
    MutexLock lock(&mu_);
    old = std::exchange(link_, std::move(*fresh));
    ++redials_;
  }
  spdlog::debug("master link: dialing {} afresh", options_.target);
}

uint64_t RedialingMasterLink::redials() const {
  MutexLock lock(&mu_);
  return redials_;
}

Result<NodeId> RedialingMasterLink::RegisterNode(
    const NodeSpec& spec, std::span<const SsdInventoryEntry> inventory) {
  return Forward<Result<NodeId>>(
      [&](MasterLink& l) { return l.RegisterNode(spec, inventory); });
}

Result<HeartbeatReply> RedialingMasterLink::Heartbeat(NodeId node,
                                                      uint32_t max_tasks) {
  return Forward<Result<HeartbeatReply>>(
      [&](MasterLink& l) { return l.Heartbeat(node, max_tasks); });
}

Status RedialingMasterLink::NotifyOffloadSuccess(NodeId node, TaskId task) {
  return Forward<Status>(
      [&](MasterLink& l) { return l.NotifyOffloadSuccess(node, task); });
}

Status RedialingMasterLink::NotifyOffloadFailure(NodeId node, TaskId task,
                                                 const Status& cause) {
  return Forward<Status>([&](MasterLink& l) {
    return l.NotifyOffloadFailure(node, task, cause);
  });
}

Status RedialingMasterLink::ReportSsdCorruption(
    NodeId node, std::span<const std::string> keys) {
  return Forward<Status>(
      [&](MasterLink& l) { return l.ReportSsdCorruption(node, keys); });
}

Result<ReplicaDescriptor> RedialingMasterLink::PromotionAllocStart(
    NodeId node, TaskId task) {
  return Forward<Result<ReplicaDescriptor>>(
      [&](MasterLink& l) { return l.PromotionAllocStart(node, task); });
}

Status RedialingMasterLink::NotifyPromotionSuccess(NodeId node, TaskId task) {
  return Forward<Status>(
      [&](MasterLink& l) { return l.NotifyPromotionSuccess(node, task); });
}

Status RedialingMasterLink::NotifyPromotionFailure(NodeId node, TaskId task,
                                                   const Status& cause) {
  return Forward<Status>([&](MasterLink& l) {
    return l.NotifyPromotionFailure(node, task, cause);
  });
}

Result<NodeView> RedialingMasterLink::GetNode(NodeId node) {
  return Forward<Result<NodeView>>(
      [&](MasterLink& l) { return l.GetNode(node); });
}

}  // namespace mooncake_tier::daemon
