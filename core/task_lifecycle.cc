#include "core/task_lifecycle.h"

#include <algorithm>
#include <utility>

namespace mooncake_tier {
namespace {

Status NotBooked(TaskId id) {
  return Status(ErrorReason::kTaskNotFound,
                "task " + std::to_string(id) +
                    " is unknown to this master (reaped or never issued)");
}

}  // namespace

Result<ReplicaDescriptor> TaskPolicy::Stage(ObjectSlot&, const Task& task) {
  return Status(ErrorReason::kNotApplicable,
                std::string(TaskKindName(task.kind)) + " tasks do not stage");
}

TaskLifecycle::TaskLifecycle(const Clock* clock, ObjectIndex* index,
                             NodeRegistry* nodes,
                             const PromotionOptions& promotion,
                             DramDirectoryLog* directory)
    : index_(index),
      nodes_(nodes),
      tasks_(clock),
      gate_(promotion),
      directory_(directory) {}

void TaskLifecycle::SetPolicy(TaskKind kind, TaskPolicy* policy) {
  policies_[static_cast<size_t>(kind)] = policy;
}

// ---- queue ----

Result<TaskId> TaskLifecycle::Queue(Replica& source, Task task,
                                    uint32_t per_node_limit) {
  task.source = source.desc;
  MT_ASSIGN_OR_RETURN(const TaskId id,
                      tasks_.Enqueue(std::move(task), per_node_limit));
  ++source.refcnt;
  return id;
}

bool TaskLifecycle::Cancel(ObjectSlot& object, TaskId id) {
  Result<Task> taken = tasks_.Take(id);
  if (!taken.ok()) return false;
  Left(*taken);
  policy(taken->kind)
      .Abandon(object, *taken, TaskEnd::kCancelled, Status::Ok());
  return true;
}

void TaskLifecycle::Left(const Task& task) {
  if (task.kind == TaskKind::kPromotion) gate_.Release(1);
}

// ---- dispatch ----

NodeTasks TaskLifecycle::Dispatch(NodeId node, uint32_t max_offloads,
                                  uint32_t max_deletes,
                                  uint32_t max_promotions) {
  TaskTable::NodeWork work =
      tasks_.DispatchNodeWork(node, max_offloads, max_deletes);
  NodeTasks out;
  out.ssd_deletes = std::move(work.ssd_deletes);
  out.offloads = std::move(work.offloads);
  out.promotions = tasks_.Dispatch(node, TaskKind::kPromotion, max_promotions);
  return out;
}

// ---- stage ----

Result<ReplicaDescriptor> TaskLifecycle::Stage(NodeId node, TaskId id) {
  const std::optional<Task> found = tasks_.Find(node, id);
  if (!found || !policy(found->kind).stages()) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(id) +
                      " is not booked for this node as a task that stages");
  }
  TaskPolicy& kind = policy(found->kind);
  Status failure;
  std::optional<Result<ReplicaDescriptor>> answer = index_->Update(
      found->key,
      [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          object_stripe_role) -> std::optional<Result<ReplicaDescriptor>> {
        // Read again under the stripe: every exit of the task, and
        // every staging of it, happens under it.
        const std::optional<Task> task = tasks_.Find(node, id);
        if (!task) return NotBooked(id);
        if (task->target.id != 0) return task->target;  // a retried call
        Result<ReplicaDescriptor> placed = kind.Stage(object, *task);
        if (placed.ok()) {
          tasks_.SetTarget(id, *placed);
          return placed;
        }
        failure = placed.status();
        return std::nullopt;
      });
  if (answer) return std::move(*answer);
  Fail(*found,
       failure.reason() == ErrorReason::kNoSpace ? TaskEnd::kNoRoom
                                                 : TaskEnd::kSourceLost,
       failure);
  return failure;
}

// ---- commit or abandon ----

std::vector<Status> TaskLifecycle::Report(NodeId node, TaskKind kind,
                                          std::span<const Outcome> outcomes) {
  std::vector<TaskId> ids;
  ids.reserve(outcomes.size());
  for (const Outcome& o : outcomes) ids.push_back(o.task);
  // Located under one table lock for the whole batch.
  const std::vector<std::optional<Task>> found = tasks_.FindAll(node, ids);
  std::vector<Status> out;
  out.reserve(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    out.push_back(found[i]
                      ? ReportOne(node, kind, *found[i], outcomes[i].status)
                      : NotBooked(outcomes[i].task));
  }
  return out;
}

Status TaskLifecycle::ReportOne(NodeId node, TaskKind kind, const Task& found,
                                const Status& outcome) {
  // A task reported as another kind (a confused or hostile node) must not
  // be settled by that kind's rules: refused, changing nothing. Ids are
  // never reused and a task keeps its kind.
  if (found.kind != kind) {
    return Status(ErrorReason::kTaskNotFound,
                  "task " + std::to_string(found.id) + " is a " +
                      std::string(TaskKindName(found.kind)) + " task, not a " +
                      std::string(TaskKindName(kind)) + " task");
  }
  TaskPolicy& p = policy(kind);
  if (found.doomed) {  // its group failed meanwhile: it only ends
    EndDoomed(found);
    return Status::Ok();
  }
  if (!outcome.ok()) {
    return Fail(found, TaskEnd::kFailed, outcome).self ? Status::Ok()
                                                       : NotBooked(found.id);
  }
  if (p.stages() && found.target.id == 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "task " + std::to_string(found.id) +
                      " has no staged replica (call PromotionAllocStart)");
  }
  if (Grouped(found)) return StageMember(node, found);
  std::optional<Task> committed;
  Status done = index_->Update(
      found.key,
      [&](ObjectSlot& object)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) -> Status {
            // Reaped between the lookup and the lock: its reaper settled it.
            MT_ASSIGN_OR_RETURN(Task task, tasks_.Complete(node, found.id));
            Left(task);
            p.Commit(object, task);
            committed = std::move(task);
            return Status::Ok();
          });
  if (committed) p.Committed(*committed);
  return done;
}

Status TaskLifecycle::StageMember(NodeId node, const Task& found) {
  TaskPolicy& p = policy(found.kind);
  const std::string& group_id = found.group->group_id;
  std::vector<Task> committed;
  Status done = index_->UpdateGroup(
      group_id,
      [&](GroupSlot& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          group_stripe_role) -> Status {
        MT_ASSIGN_OR_RETURN(const Task task, tasks_.MarkStaged(node, found.id));
        if (task.doomed) {  // its group failed while it was written
          TakeAndAbandon(task.id, task.key, TaskEnd::kDoomedEnd, Status::Ok());
          return Status::Ok();
        }
        if (!entry) return Status::Ok();  // the reaper settles it
        const GroupMeta& group = *entry;
        std::vector<Task> staged;
        const bool unstaged =
            group.AnyMember([&](uint32_t, const GroupMember& member) {
              std::optional<Task> t =
                  tasks_.FindByKey(task.kind, group.KeyOf(member));
              if (!t || t->state != TaskState::kStaged) return true;
              staged.push_back(std::move(*t));
              return false;
            });
        if (unstaged) return Status::Ok();  // not yet
        std::vector<bool> visited(staged.size(), false);
        entry.ForEachMember(
            [&](ObjectSlot& member)
                ABSL_EXCLUSIVE_LOCKS_REQUIRED(object_stripe_role) {
                  for (size_t i = 0; i < staged.size(); ++i) {
                    if (staged[i].key != member.key()) continue;
                    visited[i] = true;
                    Result<Task> taken = tasks_.Take(staged[i].id);
                    if (!taken.ok()) continue;
                    Left(*taken);
                    p.Commit(member, *taken);
                    committed.push_back(std::move(*taken));
                  }
                });
        // A member whose object left the group meanwhile has nothing
        // to commit into.
        for (size_t i = 0; i < staged.size(); ++i) {
          if (!visited[i]) {
            TakeAndAbandon(staged[i].id, staged[i].key, TaskEnd::kSourceLost,
                           Status::Ok());
          }
        }
        return Status::Ok();
      });
  for (const Task& task : committed) p.Committed(task);
  return done;
}

TaskLifecycle::Ended TaskLifecycle::Fail(const Task& task, TaskEnd end,
                                         const Status& cause) {
  Ended ended;
  if (Grouped(task)) {
    TaskPolicy& p = policy(task.kind);
    const std::string& group_id = task.group->group_id;
    const bool group_found = index_->UpdateGroup(
        group_id,
        [&](GroupSlot& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(group_stripe_role) {
          if (!entry) return false;
          // Every task of the group goes, staged or not, except one whose
          // bytes the node may still be writing (dispatched with space
          // staged): doomed and counted now, it ends when its node
          // reports or it times out.
          entry.ForEachMemberKey(
              task.key, [&](ObjectSlot& member) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                            object_stripe_role) {
                std::optional<Task> t =
                    tasks_.FindByKey(task.kind, member.key());
                if (!t || !t->group || t->group->group_id != group_id) return;
                const bool self = t->id == task.id;
                if (!self && t->doomed) return;  // ends when its node reports
                if (!self && t->state == TaskState::kDispatched &&
                    t->target.id != 0) {
                  if (tasks_.MarkDoomed(t->id)) {
                    p.Doomed(*t, end, cause);
                    ++ended.counted;
                  }
                  return;
                }
                Result<Task> taken = tasks_.Take(t->id);
                if (!taken.ok()) return;
                Left(*taken);
                const bool was_doomed = taken->doomed;
                p.Abandon(member, *taken,
                          was_doomed ? TaskEnd::kDoomedEnd : end, cause);
                if (!was_doomed) ++ended.counted;
                if (self) ended.self = true;
              });
          return true;
        });
    if (group_found) return ended;
  }
  const Abandoned abandoned = TakeAndAbandon(task.id, task.key, end, cause);
  ended.self = abandoned != Abandoned::kNone;
  if (abandoned == Abandoned::kEnded) ++ended.counted;
  return ended;
}

void TaskLifecycle::EndDoomed(const Task& task) {
  if (task.group) {  // a member leaves under its group's stripe too
    index_->UpdateGroup(task.group->group_id, [&](GroupSlot&) {
      TakeAndAbandon(task.id, task.key, TaskEnd::kDoomedEnd, Status::Ok());
    });
    return;
  }
  TakeAndAbandon(task.id, task.key, TaskEnd::kDoomedEnd, Status::Ok());
}

TaskLifecycle::Abandoned TaskLifecycle::TakeAndAbandon(TaskId id,
                                                       const std::string& key,
                                                       TaskEnd end,
                                                       const Status& cause) {
  return index_->Update(
      key, [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
               object_stripe_role) {
        Result<Task> taken = tasks_.Take(id);
        if (!taken.ok()) return Abandoned::kNone;  // settled
        Left(*taken);
        const bool was_doomed = taken->doomed;
        policy(taken->kind)
            .Abandon(object, *taken, was_doomed ? TaskEnd::kDoomedEnd : end,
                     cause);
        return was_doomed ? Abandoned::kDoomedEnded : Abandoned::kEnded;
      });
}

// ---- reap ----

size_t TaskLifecycle::Reap(TaskKind kind, Duration timeout) {
  const Status cause(ErrorReason::kTimeout,
                     std::string(TaskKindName(kind)) +
                         " task not reported within its timeout");
  size_t ended = 0;
  for (const Task& expired : tasks_.ListExpired(kind, timeout)) {
    if (expired.doomed) {  // counted when its group failed
      EndDoomed(expired);
      continue;
    }
    ended += Fail(expired, TaskEnd::kTimedOut, cause).counted;
  }
  return ended;
}

void TaskLifecycle::DropNode(NodeId node) {
  const Status cause(ErrorReason::kNodeNotFound,
                     "node " + std::to_string(node) + " left");
  // Out of the table first, so no report can act on what follows. The node
  // is gone: no report of its can race with these exits, and its copies
  // need no deletion.
  std::vector<Task> grouped;
  for (const Task& task : tasks_.ReapNode(node)) {
    index_->Update(
        task.key, [&](ObjectSlot& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                      object_stripe_role) {
          Left(task);
          policy(task.kind).Abandon(
              object, task,
              task.doomed ? TaskEnd::kDoomedEnd : TaskEnd::kNodeLost, cause);
        });
    if (Grouped(task)) grouped.push_back(task);
  }
  // Their groups' tasks on other nodes end too (no stripe is held here).
  for (const Task& task : grouped) Fail(task, TaskEnd::kNodeLost, cause);
  detached_.DropNode(node);
}

// ---- pins ----

void TaskLifecycle::Unpin(ObjectSlot& object, const Task& task) {
  if (object) {
    if (Replica* r = object->Find(task.source.id)) {
      if (r->refcnt > 0) --r->refcnt;
      return;
    }
  }
  // The object (or this replica) was removed while pinned.
  UnpinDetached(task.source.id);
}

void TaskLifecycle::UnpinDetached(ReplicaId id) {
  if (std::optional<DetachedReplicas::Freed> freed = detached_.Unpin(id)) {
    const ReplicaDescriptor& d = freed->desc;
    if (d.tier != Tier::kMemory) return;
    // A complete replica's node lists it (ha.md): its range is freed once
    // the node dropped the entry. The key is not kept here; the drop names
    // the range alone.
    if (d.state == ReplicaState::kComplete && directory_ != nullptr &&
        directory_->DropThenFree(d.node, {}, d.offset, d.size,
                                 freed->reuse_after)) {
      return;
    }
    nodes_->FreeMemory(d.node, d.offset, d.size, freed->reuse_after);
  }
}

}  // namespace mooncake_tier
