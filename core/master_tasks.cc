// Master: the task reports of every kind, batches handed to the task
// lifecycle (core/task_lifecycle.h), and the task listing.

#include "core/master.h"

namespace mooncake_tier {

// ---- Reports (the lifecycle finds each task once and settles it under its
// object's stripe) ----

namespace {

std::vector<TaskLifecycle::Outcome> Successes(std::span<const TaskId> tasks) {
  std::vector<TaskLifecycle::Outcome> out;
  out.reserve(tasks.size());
  for (TaskId id : tasks) out.push_back({id, Status::Ok()});
  return out;
}

std::vector<TaskLifecycle::Outcome> Failures(
    std::span<const TaskFailure> failures) {
  std::vector<TaskLifecycle::Outcome> out;
  out.reserve(failures.size());
  for (const TaskFailure& f : failures) {
    // A failure without a cause is still a failure.
    out.push_back({f.task, f.cause.ok() ? Status(ErrorReason::kInternal,
                                                 "failure reported without "
                                                 "a cause")
                                        : f.cause});
  }
  return out;
}

// One task's report: a batch of one. A null `cause` reports success.
Status ReportOne(TaskLifecycle& lifecycle, NodeId node, TaskKind kind,
                 TaskId task, const Status* cause) {
  if (cause == nullptr) {
    return lifecycle.Report(node, kind, Successes({&task, 1})).front();
  }
  const TaskFailure failure{task, *cause};
  return lifecycle.Report(node, kind, Failures({&failure, 1})).front();
}

}  // namespace

std::vector<Status> Master::NotifyOffloadSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  return s_.lifecycle.Report(node, TaskKind::kOffload, Successes(tasks));
}

std::vector<Status> Master::NotifyOffloadFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  return s_.lifecycle.Report(node, TaskKind::kOffload, Failures(failures));
}

std::vector<Status> Master::NotifyPromotionSuccess(
    NodeId node, std::span<const TaskId> tasks) {
  return s_.lifecycle.Report(node, TaskKind::kPromotion, Successes(tasks));
}

std::vector<Status> Master::NotifyPromotionFailure(
    NodeId node, std::span<const TaskFailure> failures) {
  return s_.lifecycle.Report(node, TaskKind::kPromotion, Failures(failures));
}

Status Master::NotifyOffloadSuccess(NodeId node, TaskId task) {
  return ReportOne(s_.lifecycle, node, TaskKind::kOffload, task, nullptr);
}

Status Master::NotifyOffloadFailure(NodeId node, TaskId task,
                                    const Status& cause) {
  return ReportOne(s_.lifecycle, node, TaskKind::kOffload, task, &cause);
}

Status Master::NotifyPromotionSuccess(NodeId node, TaskId task) {
  return ReportOne(s_.lifecycle, node, TaskKind::kPromotion, task, nullptr);
}

Status Master::NotifyPromotionFailure(NodeId node, TaskId task,
                                      const Status& cause) {
  return ReportOne(s_.lifecycle, node, TaskKind::kPromotion, task, &cause);
}

std::vector<Result<ReplicaDescriptor>> Master::PromotionAllocStart(
    NodeId node, std::span<const TaskId> tasks) {
  std::vector<Result<ReplicaDescriptor>> out;
  out.reserve(tasks.size());
  for (TaskId id : tasks) out.push_back(s_.lifecycle.Stage(node, id));
  return out;
}

Result<ReplicaDescriptor> Master::PromotionAllocStart(NodeId node,
                                                      TaskId task) {
  return s_.lifecycle.Stage(node, task);
}

std::vector<Task> Master::ListTasks(TaskKind kind) const {
  return s_.lifecycle.List(kind);
}

}  // namespace mooncake_tier
