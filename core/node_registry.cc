#include "core/node_registry.h"

#include <algorithm>

namespace mooncake_tier {
namespace {

Status NodeGone(NodeId id) {
  return Status(ErrorReason::kNodeNotFound,
                "node " + std::to_string(id) +
                    " is not registered (expired or replaced); register "
                    "again");
}

// `file_bytes` of a node's SSD store as object bytes, at the overhead its
// live records measure (1:1 until it holds something to measure).
uint64_t ToObjectBytes(const SsdReport& report, uint64_t file_bytes) {
  if (report.live_record_bytes == 0 || report.live_value_bytes == 0) {
    return file_bytes;
  }
  return static_cast<uint64_t>(static_cast<double>(file_bytes) *
                               static_cast<double>(report.live_value_bytes) /
                               static_cast<double>(report.live_record_bytes));
}

}  // namespace

NodeRegistry::NodeRegistry(const Clock* clock, uint64_t dram_alignment,
                           std::unique_ptr<AllocationStrategy> strategy,
                           NodeId first_id)
    : clock_(clock),
      dram_alignment_(dram_alignment),
      strategy_(std::move(strategy)),
      next_id_(first_id) {}

NodeRegistry::Node* NodeRegistry::Find(NodeId id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second.get();
}

void NodeRegistry::PublishSpace(Node& node) {
  const SpaceAllocator* a = node.allocator.get();
  node.view.dram_used = a ? a->allocated_bytes() : 0;
  node.view.dram_held = node.held_bytes.load(std::memory_order_relaxed);
  node.free_bytes.store(a ? a->free_bytes() : 0, std::memory_order_relaxed);
  node.largest_free.store(a ? a->largest_free_extent() : 0,
                          std::memory_order_relaxed);
}

namespace {

bool HeldLater(const auto& a, const auto& b) { return a.until > b.until; }

}  // namespace

uint64_t NodeRegistry::ReleaseDueLocked(Node& node, TimePoint now) {
  uint64_t bytes = 0;
  while (!node.held.empty() && node.held.front().until <= now) {
    std::pop_heap(node.held.begin(), node.held.end(),
                  HeldLater<Node::Held, Node::Held>);
    const Node::Held range = node.held.back();
    node.held.pop_back();
    if (node.allocator) node.allocator->Free(range.offset, range.size);
    bytes += range.bytes;
  }
  node.held_due_ns.store(
      node.held.empty() ? std::numeric_limits<int64_t>::max()
                        : node.held.front().until.time_since_epoch().count(),
      std::memory_order_relaxed);
  if (bytes > 0) {
    node.held_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    PublishSpace(node);
  }
  return bytes;
}

void NodeRegistry::ReleaseDue(Node& node, TimePoint now) {
  if (node.held_due_ns.load(std::memory_order_relaxed) >
      now.time_since_epoch().count()) {
    return;
  }
  MutexLock lock(&node.mu);
  ReleaseDueLocked(node, now);
}

uint64_t NodeRegistry::ReleaseHeldMemory() {
  ReaderMutexLock lock(&map_mu_);
  const TimePoint now = clock_->Now();
  uint64_t bytes = 0;
  for (const auto& [id, node] : nodes_) {
    if (node->held_due_ns.load(std::memory_order_relaxed) >
        now.time_since_epoch().count()) {
      continue;
    }
    MutexLock node_lock(&node->mu);
    bytes += ReleaseDueLocked(*node, now);
  }
  return bytes;
}

uint64_t NodeRegistry::HeldMemoryBytes() const {
  ReaderMutexLock lock(&map_mu_);
  uint64_t bytes = 0;
  for (const auto& [id, node] : nodes_) {
    bytes += node->held_bytes.load(std::memory_order_relaxed);
  }
  return bytes;
}

std::pair<uint64_t, uint64_t> NodeRegistry::UsedAndHeldMemory() const {
  ReaderMutexLock lock(&map_mu_);
  uint64_t used = 0, held = 0;
  for (const auto& [id, node] : nodes_) {
    MutexLock node_lock(&node->mu);
    // As MemoryUsage counts it.
    used += node->segment_bytes.load(std::memory_order_relaxed) -
            node->free_bytes.load(std::memory_order_relaxed);
    held += node->held_bytes.load(std::memory_order_relaxed);
  }
  return {used, held};
}

NodeView NodeRegistry::ViewOf(const Node& node) {
  MutexLock lock(&node.mu);
  NodeView view = node.view;
  view.ssd_used = node.ssd_used.load(std::memory_order_relaxed);
  view.ssd_capacity = node.ssd_capacity.load(std::memory_order_relaxed);
  view.ssd_report = node.ssd_report;
  view.offloads_paused_until = TimePoint(
      Duration(node.offloads_paused_until_ns.load(std::memory_order_relaxed)));
  return view;
}

Result<NodeId> NodeRegistry::Register(const NodeSpec& spec, NodeId* replaced,
                                      const Registration& how) {
  const std::span<const HeldRange> held = how.held;
  std::vector<bool>* const held_taken = how.held_taken;
  if (spec.name.empty() || spec.name.size() > kMaxKeyBytes) {
    return Status(
        ErrorReason::kInvalidArgument,
        "node name must be 1.." + std::to_string(kMaxKeyBytes) + " bytes");
  }
  if (spec.dram_size > 0 && spec.dram_size < dram_alignment_) {
    return Status(ErrorReason::kInvalidSize,
                  "DRAM segment smaller than one allocation unit");
  }
  auto node = std::make_unique<Node>();
  node->name = spec.name;
  WriterMutexLock lock(&map_mu_);
  *replaced = kNoNode;
  TimePoint fenced_until = how.fenced_until;
  if (by_name_.contains(spec.name) || dead_names_.contains(spec.name)) {
    fenced_until = std::max(fenced_until, how.fenced_until_if_known);
  }
  if (auto it = by_name_.find(spec.name); it != by_name_.end()) {
    *replaced = it->second;
    RetireLocked(it->second);
  }
  dead_names_.erase(spec.name);  // back: no longer lost
  const NodeId id = next_id_++;
  if (how.before_visible) how.before_visible(id);
  {
    MutexLock node_lock(&node->mu);
    node->view.id = id;
    node->view.spec = spec;
    node->view.registered_at = node->view.last_heartbeat = clock_->Now();
    if (spec.dram_size > 0) {
      node->allocator =
          std::make_unique<SpaceAllocator>(spec.dram_size, dram_alignment_);
    }
    if (held_taken != nullptr) held_taken->assign(held.size(), false);
    for (size_t i = 0; i < held.size() && node->allocator; ++i) {
      const bool taken = node->allocator->Reserve(held[i].offset, held[i].size);
      if (held_taken != nullptr) (*held_taken)[i] = taken;
    }
    node->segment_bytes.store(node->allocator ? node->allocator->capacity()
                                              : 0);
    node->ssd_capacity.store(spec.ssd_capacity);
    if (fenced_until > clock_->Now()) {
      const int64_t until_ns = fenced_until.time_since_epoch().count();
      node->fenced_until_ns.store(until_ns, std::memory_order_relaxed);
      int64_t end = fences_end_ns_.load(std::memory_order_relaxed);
      while (end < until_ns && !fences_end_ns_.compare_exchange_weak(
                                   end, until_ns, std::memory_order_relaxed)) {
      }
    }
    PublishSpace(*node);
  }
  nodes_.emplace(id, std::move(node));
  by_name_[spec.name] = id;
  SegmentsChangedLocked();
  return id;
}

Status NodeRegistry::Fenced() {
  return Status(ErrorReason::kUnavailable,
                "the nodes with room registered again moments ago and "
                "clients may still be writing into ranges granted before: "
                "no placement there until those grants ran out (retry)");
}

std::optional<TimePoint> NodeRegistry::AllFencedUntil() const {
  const int64_t now_ns = clock_->Now().time_since_epoch().count();
  // A fence set just after this load is missed here, as if its node had
  // registered a moment later: AllocateMemory still honours it (it reads
  // each node's fence under the lock).
  if (now_ns >= fences_end_ns_.load(std::memory_order_relaxed)) {
    return std::nullopt;
  }
  ReaderMutexLock lock(&map_mu_);
  std::optional<int64_t> soonest;
  for (const auto& [id, node] : nodes_) {
    if (node->segment_bytes.load(std::memory_order_relaxed) == 0) continue;
    const int64_t until = node->fenced_until_ns.load(std::memory_order_relaxed);
    if (now_ns >= until) return std::nullopt;
    soonest = soonest ? std::min(*soonest, until) : until;
  }
  if (!soonest) return std::nullopt;
  return TimePoint(Duration(*soonest));
}

void NodeRegistry::SegmentsChangedLocked() {
  uint64_t capacity = 0;
  uint64_t largest = 0;
  for (const auto& [id, node] : nodes_) {
    const uint64_t bytes = node->segment_bytes.load(std::memory_order_relaxed);
    capacity += bytes;
    largest = std::max(largest, bytes);
  }
  memory_capacity_.store(capacity, std::memory_order_relaxed);
  largest_segment_.store(largest, std::memory_order_relaxed);
}

void NodeRegistry::RetireLocked(NodeId id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  NodeView view = ViewOf(*it->second);
  view.state = NodeState::kDead;
  view.dram_used = 0;
  dead_.push_back(std::move(view));
  if (dead_.size() > kDeadHistory) dead_.pop_front();
  by_name_.erase(it->second->name);
  nodes_.erase(it);
  SegmentsChangedLocked();
}

Status NodeRegistry::Heartbeat(NodeId id) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return NodeGone(id);
  MutexLock node_lock(&node->mu);
  node->view.last_heartbeat = clock_->Now();
  node->view.state = NodeState::kAlive;
  node->placeable.store(true, std::memory_order_relaxed);
  return Status::Ok();
}

std::vector<NodeId> NodeRegistry::ExpireSilent(Duration ttl) {
  const TimePoint now = clock_->Now();
  WriterMutexLock lock(&map_mu_);
  std::vector<NodeId> died;
  for (auto& [id, node] : nodes_) {
    MutexLock node_lock(&node->mu);
    const Duration silent = now - node->view.last_heartbeat;
    if (silent >= ttl) {
      died.push_back(id);
    } else if (silent >= ttl / 2) {
      node->view.state = NodeState::kSuspect;
      node->placeable.store(false, std::memory_order_relaxed);
    }
  }
  for (NodeId id : died) DeclareDeadLocked(id);
  return died;
}

void NodeRegistry::DeclareDeadLocked(NodeId id) {
  if (dead_names_.size() >= kDeadNamesLimit) {
    dead_names_.erase(dead_names_.begin());
  }
  dead_names_.insert(nodes_.at(id)->name);
  RetireLocked(id);
}

Status NodeRegistry::Deregister(NodeId id) {
  WriterMutexLock lock(&map_mu_);
  if (Find(id) == nullptr) {
    return Status(ErrorReason::kNodeNotFound,
                  "node " + std::to_string(id) +
                      " is not registered (unknown, already dead or "
                      "replaced): nothing to deregister");
  }
  DeclareDeadLocked(id);
  return Status::Ok();
}

size_t NodeRegistry::DeadCount() const {
  ReaderMutexLock lock(&map_mu_);
  return dead_names_.size();
}

bool NodeRegistry::Retire(NodeId id) {
  WriterMutexLock lock(&map_mu_);
  if (Find(id) == nullptr) return false;
  RetireLocked(id);
  return true;
}

Result<uint64_t> NodeRegistry::AllocateOn(Node& node, uint64_t size) {
  MutexLock lock(&node.mu);
  if (node.held_due_ns.load(std::memory_order_relaxed) <=
      clock_->Now().time_since_epoch().count()) {
    ReleaseDueLocked(node, clock_->Now());
  }
  if (!node.allocator) {
    return Status(ErrorReason::kNoSpace, "node has no DRAM segment");
  }
  std::optional<uint64_t> offset = node.allocator->Allocate(size);
  if (!offset) {
    return Status(ErrorReason::kNoSpace,
                  "node " + std::to_string(node.view.id) + " has no room for " +
                      std::to_string(size) + " bytes");
  }
  PublishSpace(node);
  return *offset;
}

Result<ReplicaDescriptor> NodeRegistry::AllocateMemory(
    uint64_t size, std::string_view preferred) {
  ReaderMutexLock lock(&map_mu_);
  absl::InlinedVector<NodeSpace, kInlineNodes> spaces;
  const int64_t now_ns = clock_->Now().time_since_epoch().count();
  size_t fenced = 0;
  for (const auto& [id, node] : nodes_) {
    if (!node->placeable.load(std::memory_order_relaxed) ||
        node->segment_bytes.load(std::memory_order_relaxed) == 0) {
      continue;
    }
    if (now_ns < node->fenced_until_ns.load(std::memory_order_relaxed)) {
      ++fenced;
      continue;
    }
    // Held ranges whose grants ran out count as free in the ranking.
    ReleaseDue(*node, TimePoint(Duration(now_ns)));
    const bool is_preferred = !preferred.empty() && node->name == preferred;
    spaces.push_back({id, node->free_bytes.load(std::memory_order_relaxed),
                      node->largest_free.load(std::memory_order_relaxed),
                      is_preferred});
  }
  NodeOrder order;
  strategy_->Rank(spaces, size, &order);
  for (NodeId id : order) {
    Result<uint64_t> offset = AllocateOn(*nodes_.at(id), size);
    if (!offset.ok()) continue;  // the figures were a moment old
    ReplicaDescriptor desc;
    desc.tier = Tier::kMemory;
    desc.node = id;
    desc.offset = *offset;
    desc.size = size;
    return desc;
  }
  if (spaces.empty() && fenced > 0) {
    return Fenced();
  }
  return Status(ErrorReason::kNoSpace, "no alive node has " +
                                           std::to_string(size) +
                                           " contiguous bytes of DRAM free");
}

Result<uint64_t> NodeRegistry::AllocateMemoryOn(NodeId id, uint64_t size) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return NodeGone(id);
  if (clock_->Now().time_since_epoch().count() <
      node->fenced_until_ns.load(std::memory_order_relaxed)) {
    return Fenced();
  }
  return AllocateOn(*node, size);
}

bool NodeRegistry::FreeMemory(NodeId id, uint64_t offset, uint64_t size,
                              TimePoint reuse_after) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return true;  // the segment went with the node
  MutexLock node_lock(&node->mu);
  if (!node->allocator) return false;
  if (reuse_after > clock_->Now()) {
    const uint64_t bytes =
        (size + dram_alignment_ - 1) / dram_alignment_ * dram_alignment_;
    node->held.push_back(Node::Held{reuse_after, offset, size, bytes});
    std::push_heap(node->held.begin(), node->held.end(),
                   HeldLater<Node::Held, Node::Held>);
    node->held_due_ns.store(node->held.front().until.time_since_epoch().count(),
                            std::memory_order_relaxed);
    node->held_bytes.fetch_add(bytes, std::memory_order_relaxed);
    PublishSpace(*node);
    return true;
  }
  if (!node->allocator->Free(offset, size)) return false;
  PublishSpace(*node);
  return true;
}

void NodeRegistry::ReportSsd(NodeId id, const SsdReport& report) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return;
  // The object bytes that fit where the store's puts stop, at the overhead
  // it measured (1:1 until it holds something to measure), short of room
  // for records deleted but not yet compacted away: an append-only store
  // always carries some, spread over its files below the share at which
  // compaction takes a file.
  const uint64_t capacity = ToObjectBytes(
      report,
      static_cast<uint64_t>(static_cast<double>(report.put_limit_bytes) *
                            (1 - kSsdDeadAllowance)));
  // A node with an SSD tier keeps one, even a full one: with none, eviction
  // would drop its objects' only copies instead of waiting for room.
  node->ssd_capacity.store(std::max<uint64_t>(capacity, 1),
                           std::memory_order_relaxed);
  MutexLock node_lock(&node->mu);
  node->ssd_report = report;
}

void NodeRegistry::PauseOffloads(NodeId id, TimePoint now, Duration first,
                                 Duration max) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return;
  const uint32_t level = std::min<uint32_t>(
      node->pause_level.fetch_add(1, std::memory_order_relaxed), 16);
  const Duration pause = std::min<Duration>(first * (int64_t{1} << level), max);
  node->offloads_paused_until_ns.store((now + pause).time_since_epoch().count(),
                                       std::memory_order_relaxed);
  node->ssd_room_owed.store(true, std::memory_order_relaxed);
}

bool NodeRegistry::TakeSsdRoomOwed(NodeId id) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  return node != nullptr &&
         node->ssd_room_owed.exchange(false, std::memory_order_relaxed);
}

void NodeRegistry::ResumeOffloads(NodeId id) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return;
  node->pause_level.store(0, std::memory_order_relaxed);
  node->offloads_paused_until_ns.store(0, std::memory_order_relaxed);
}

void NodeRegistry::EndOffloadPause(NodeId id) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return;
  node->offloads_paused_until_ns.store(0, std::memory_order_relaxed);
}

bool NodeRegistry::OffloadsPaused(NodeId id, TimePoint now) const {
  ReaderMutexLock lock(&map_mu_);
  const Node* node = Find(id);
  return node != nullptr &&
         node->offloads_paused_until_ns.load(std::memory_order_relaxed) >
             now.time_since_epoch().count();
}

void NodeRegistry::AddSsdUsed(NodeId id, int64_t delta) {
  ReaderMutexLock lock(&map_mu_);
  Node* node = Find(id);
  if (node == nullptr) return;
  uint64_t used = node->ssd_used.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    const int64_t sum = static_cast<int64_t>(used) + delta;
    next = sum < 0 ? 0 : static_cast<uint64_t>(sum);
  } while (!node->ssd_used.compare_exchange_weak(used, next,
                                                 std::memory_order_relaxed));
}

bool NodeRegistry::IsAlive(NodeId id) const {
  ReaderMutexLock lock(&map_mu_);
  return Find(id) != nullptr;
}

std::optional<NodeView> NodeRegistry::Get(NodeId id) const {
  ReaderMutexLock lock(&map_mu_);
  const Node* node = Find(id);
  if (node == nullptr) return std::nullopt;
  return ViewOf(*node);
}

std::vector<NodeView> NodeRegistry::List() const {
  ReaderMutexLock lock(&map_mu_);
  std::vector<NodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) out.push_back(ViewOf(*node));
  std::sort(out.begin(), out.end(),
            [](const NodeView& a, const NodeView& b) { return a.id < b.id; });
  return out;
}

std::vector<NodeView> NodeRegistry::ListDead() const {
  ReaderMutexLock lock(&map_mu_);
  return {dead_.begin(), dead_.end()};
}

uint64_t NodeRegistry::LargestFreeOn(NodeId id) const {
  ReaderMutexLock lock(&map_mu_);
  const Node* node = Find(id);
  return node == nullptr ? 0
                         : node->largest_free.load(std::memory_order_relaxed);
}

TierUsage NodeRegistry::MemoryUsage() const {
  ReaderMutexLock lock(&map_mu_);
  TierUsage usage;
  for (const auto& [id, node] : nodes_) {
    const uint64_t capacity =
        node->segment_bytes.load(std::memory_order_relaxed);
    usage.capacity += capacity;
    usage.used += capacity - node->free_bytes.load(std::memory_order_relaxed);
  }
  return usage;
}

TierUsage NodeRegistry::MemoryUsageOf(NodeId id) const {
  ReaderMutexLock lock(&map_mu_);
  const Node* node = Find(id);
  if (node == nullptr) return {};
  const uint64_t capacity = node->segment_bytes.load(std::memory_order_relaxed);
  return {capacity,
          capacity - node->free_bytes.load(std::memory_order_relaxed)};
}

TierUsage NodeRegistry::SsdUsage() const {
  ReaderMutexLock lock(&map_mu_);
  TierUsage usage;
  for (const auto& [id, node] : nodes_) {
    usage.capacity += node->ssd_capacity.load(std::memory_order_relaxed);
    usage.used += node->ssd_used.load(std::memory_order_relaxed);
  }
  return usage;
}

bool SsdReportShowsRoom(const SsdReport& report) {
  constexpr uint64_t kBatchBytes = 32ull << 20;
  const uint64_t room = report.put_limit_bytes -
                        std::min(report.put_limit_bytes, report.file_bytes);
  return room > 0 && room >= std::min(kBatchBytes, report.put_limit_bytes / 32);
}

double SsdFillCap(const SsdReport& report) {
  if (report.put_limit_bytes == 0 ||
      report.capacity_bytes <= report.put_limit_bytes) {
    return 1.0;
  }
  const double headroom =
      static_cast<double>(report.capacity_bytes - report.put_limit_bytes);
  return std::clamp(
      1.0 - 2 * headroom / static_cast<double>(report.put_limit_bytes), 0.5,
      1.0);
}

uint64_t SsdDeadBeyondAllowance(const SsdReport& report) {
  const uint64_t allowance = static_cast<uint64_t>(
      static_cast<double>(report.put_limit_bytes) * kSsdDeadAllowance);
  const uint64_t taken = report.live_record_bytes + allowance;
  if (report.file_bytes <= taken) return 0;
  return ToObjectBytes(report, report.file_bytes - taken);
}

TierUsage NodeRegistry::SsdUsageOf(NodeId id) const {
  ReaderMutexLock lock(&map_mu_);
  const Node* node = Find(id);
  if (node == nullptr) return {};
  return {node->ssd_capacity.load(std::memory_order_relaxed),
          node->ssd_used.load(std::memory_order_relaxed)};
}

}  // namespace mooncake_tier
