#include "node/ssd_store.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "base/align.h"
#include "core/validation.h"
#include "node/ssd_record.h"

namespace mooncake_tier {
namespace {

// Headroom for tombstones: capacity / kTombstoneRoomDivisor, at most
// kMaxTombstoneRoom. Files are at most capacity / kFilesPerCapacity.
constexpr uint64_t kTombstoneRoomDivisor = 512;
constexpr uint64_t kMaxTombstoneRoom = 64ull << 20;
constexpr uint64_t kFilesPerCapacity = 128;
constexpr uint64_t kMinFileBytes = 1ull << 20;
// Bytes of released staging and bounce buffers kept for reuse.
constexpr size_t kBufferPoolBytes = 64 << 20;

// Files of capacity / 128, so that the headroom for compacting one is
// small; but at least 1 MiB (capacity / 16 on a store under 16 MiB), so
// that a small store is not made of files a few records long.
uint64_t CappedFileBytes(const SsdStoreOptions& o, uint64_t capacity) {
  const uint64_t share = std::max(capacity / kFilesPerCapacity,
                                  std::min(kMinFileBytes, capacity / 16));
  return std::max(
      SsdRecord::kAlignment,
      std::min(o.max_file_bytes, AlignDown(share, SsdRecord::kAlignment)));
}

// Where puts stop in a store of `capacity` bytes with files of at most
// `file_bytes`: short of it by room to compact one file plus room for
// tombstones, at most half of it.
uint64_t PutLimitBytes(const SsdStoreOptions& o, uint64_t capacity,
                       uint64_t file_bytes) {
  const double live_share = 1.0 - o.compaction_min_dead_ratio;
  const uint64_t compaction_room = AlignUp(
      static_cast<uint64_t>(live_share * static_cast<double>(file_bytes)),
      SsdRecord::kAlignment);
  const uint64_t tombstone_room =
      AlignDown(std::min(capacity / kTombstoneRoomDivisor, kMaxTombstoneRoom),
                SsdRecord::kAlignment);
  return capacity - std::min(compaction_room + tombstone_room, capacity / 2);
}

Status ValidateWrite(const SsdWrite& write) {
  MT_RETURN_IF_ERROR(ValidateKey(write.key));
  if (write.group) MT_RETURN_IF_ERROR(ValidateGroupSpec(*write.group));
  if (write.value.size() > SsdRecord::kMaxValueBytes) {
    return Status(ErrorReason::kInvalidSize, "value too large");
  }
  return Status::Ok();
}

uint64_t PutRecordBytes(const SsdWrite& write) {
  return SsdRecord::Value(write.key, write.group, write.value.size(), 0).size();
}

}  // namespace

// ---- Construction -------------------------------------------------------

SsdStore::SsdStore(std::unique_ptr<SsdDevice> device, SsdStoreOptions options)
    : device_(std::move(device)),
      options_(options),
      buffers_(kBufferPoolBytes),
      capacity_(options.capacity_bytes),
      max_file_bytes_(CappedFileBytes(options, options.capacity_bytes)),
      put_limit_(
          PutLimitBytes(options, options.capacity_bytes, max_file_bytes_)) {}

SsdStore::~SsdStore() = default;

Result<std::unique_ptr<SsdStore>> SsdStore::Open(
    std::unique_ptr<SsdDevice> device, SsdStoreOptions options) {
  if (device == nullptr || options.capacity_bytes == 0 ||
      options.max_file_bytes < SsdRecord::kAlignment ||
      !(options.compaction_min_dead_ratio > 0.0 &&
        options.compaction_min_dead_ratio <= 1.0) ||
      options.space_check_interval.count() < 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "SsdStore needs a device, capacity_bytes > 0, "
                  "max_file_bytes >= 4096, compaction_min_dead_ratio in "
                  "(0, 1] and space_check_interval >= 0");
  }
  std::unique_ptr<SsdStore> store(new SsdStore(std::move(device), options));
  MT_RETURN_IF_ERROR(store->Recover());
  {
    MutexLock lock(&store->mutex_);
    store->RefreshSpaceLocked(/*force=*/true);
  }
  return store;
}

std::string SsdStore::FileName(uint32_t number) {
  char name[32];
  std::snprintf(name, sizeof(name), "%06u.data", number);
  return name;
}

std::optional<uint32_t> SsdStore::ParseFileName(const std::string& name) {
  constexpr std::string_view kSuffix = ".data";
  if (name.size() <= kSuffix.size() || name.size() > 10 + kSuffix.size() ||
      !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  uint64_t number = 0;
  for (size_t i = 0; i + kSuffix.size() < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    number = number * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (number == 0 || number > UINT32_MAX ||
      FileName(static_cast<uint32_t>(number)) != name) {
    return std::nullopt;  // not a name this store writes ("1.data", ...)
  }
  return static_cast<uint32_t>(number);
}

// ---- Writes -------------------------------------------------------------

std::vector<Status> SsdStore::PutBatch(std::span<const SsdWrite> writes) {
  std::vector<Status> statuses(writes.size());
  std::vector<size_t> valid;
  valid.reserve(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    statuses[i] = ValidateWrite(writes[i]);
    if (statuses[i].ok()) valid.push_back(i);
  }
  RunPutRound(writes, valid, statuses);

  std::vector<size_t> retry;
  uint64_t retry_bytes = 0;
  for (size_t i : valid) {
    if (statuses[i].reason() == ErrorReason::kNoSpace) {
      retry.push_back(i);
      retry_bytes += PutRecordBytes(writes[i]);
    }
  }
  if (!retry.empty() && CompactForRoom(retry_bytes)) {
    RunPutRound(writes, retry, statuses);
  }
  return statuses;
}

void SsdStore::RunPutRound(std::span<const SsdWrite> writes,
                           std::span<const size_t> indices,
                           std::vector<Status>& statuses) {
  if (indices.empty()) return;
  std::vector<PendingWrite> pending(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    const SsdWrite& write = writes[indices[k]];
    pending[k].kind = WriteKind::kPut;
    pending[k].key = write.key;
    pending[k].put = &write;
    pending[k].bytes = PutRecordBytes(write);
    pending[k].block_aligned =
        write.value.size() >= SsdRecord::kAlignedValueMinBytes;
  }
  WriteRecords(pending, &counters_.write_latency);
  for (size_t k = 0; k < indices.size(); ++k) {
    statuses[indices[k]] = pending[k].status;
    if (pending[k].status.ok()) {
      counters_.records_written.fetch_add(1, std::memory_order_relaxed);
      counters_.bytes_written.fetch_add(pending[k].put->value.size(),
                                        std::memory_order_relaxed);
    }
  }
}

bool SsdStore::CompactForRoom(uint64_t bytes) {
  constexpr int kMaxSteps = 64;
  for (int step = 0;; ++step) {
    {
      MutexLock lock(&mutex_);
      RefreshSpaceLocked(/*force=*/false);
      if (file_bytes_ + bytes <= put_limit_) return true;
    }
    if (step == kMaxSteps) return false;
    // A put is waiting: a file with a little to reclaim will do.
    Result<bool> worked = CompactStep(kUrgentDeadRatio);
    if (!worked.ok() || !*worked) return step > 0;
  }
}

void SsdStore::RefreshSpaceLocked(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - space_checked_ < options_.space_check_interval) return;
  space_checked_ = now;
  Result<SsdDevice::Space> space = device_->FreeSpace();
  filesystem_free_ = space.ok() ? space->free : UINT64_MAX;
  // What the files hold plus what the file system can still give them,
  // never more than configured, nor than the whole file system: file_bytes_
  // also counts what the file system has not charged (writes placed but not
  // yet landed, the holes failed writes leave).
  const uint64_t reachable =
      filesystem_free_ >= options_.capacity_bytes
          ? options_.capacity_bytes
          : std::min(file_bytes_ + filesystem_free_, space->total);
  capacity_ = std::min(options_.capacity_bytes,
                       AlignDown(reachable, SsdRecord::kAlignment));
  max_file_bytes_ = CappedFileBytes(options_, capacity_);
  put_limit_ = PutLimitBytes(options_, capacity_, max_file_bytes_);
}

bool SsdStore::UnderPressure() const {
  MutexLock lock(&mutex_);
  return file_bytes_ >= put_limit_ / 10 * 9;
}

std::vector<Status> SsdStore::RemoveBatch(
    std::span<const std::string_view> keys) {
  // Removals per tombstone record: a record of at most ~260 KiB even with
  // keys of the longest length.
  constexpr size_t kRemovalsPerRecord = 256;
  WriteOwedTombstones();
  std::vector<Status> statuses(keys.size());
  std::vector<PendingWrite> pending;
  std::vector<std::vector<size_t>> positions;
  for (size_t i = 0; i < keys.size(); ++i) {
    statuses[i] = ValidateKey(keys[i]);
    if (!statuses[i].ok()) continue;
    if (pending.empty() ||
        pending.back().removals.size() == kRemovalsPerRecord) {
      pending.emplace_back().kind = WriteKind::kRemoveList;
      positions.emplace_back();
    }
    pending.back().removals.push_back(keys[i]);
    positions.back().push_back(i);
  }
  WriteRecords(pending);
  for (size_t w = 0; w < pending.size(); ++w) {
    const PendingWrite& list = pending[w];
    for (size_t j = 0; j < positions[w].size(); ++j) {
      const bool own =
          j < list.removal_status.size() && !list.removal_status[j].ok();
      statuses[positions[w][j]] = own ? list.removal_status[j] : list.status;
    }
  }
  return statuses;
}

Status SsdStore::Put(std::string_view key, std::span<const std::byte> value,
                     std::optional<GroupSpec> group) {
  const SsdWrite write{key, std::move(group), value};
  return std::move(PutBatch({&write, 1})[0]);
}

Result<uint64_t> SsdStore::Get(std::string_view key,
                               std::span<std::byte> buffer) {
  SsdRead read{key, buffer, Status::Ok(), 0};
  ReadBatch({&read, 1});
  if (!read.status.ok()) return read.status;
  return read.size;
}

Status SsdStore::Remove(std::string_view key) {
  return std::move(RemoveBatch({&key, 1})[0]);
}

std::optional<uint64_t> SsdStore::ValueSize(std::string_view key) const {
  MutexLock lock(&mutex_);
  auto it = index_.find(IndexKey(key));
  if (it == index_.end()) return std::nullopt;
  return it->second.value_len;
}

std::vector<SsdRecordInfo> SsdStore::Inventory() const {
  MutexLock lock(&mutex_);
  std::vector<SsdRecordInfo> out;
  out.reserve(index_.size());
  for (const auto& [key, entry] : index_) {
    out.push_back({key, entry.value_len, entry.group});
  }
  return out;
}

Status SsdStore::Sync() {
  std::vector<std::pair<std::shared_ptr<SsdFile>, uint32_t>> dirty;
  {
    MutexLock lock(&mutex_);
    for (auto& [number, f] : files_) {
      if (!f.dirty) continue;
      dirty.emplace_back(f.file, number);
      f.dirty = false;
    }
  }
  Status first_error;
  for (auto& [file, number] : dirty) {
    Status status = file->Sync();
    if (status.ok()) continue;
    if (first_error.ok()) first_error = status;
    MutexLock lock(&mutex_);
    auto it = files_.find(number);
    if (it != files_.end()) it->second.dirty = true;  // try again next time
  }
  MT_RETURN_IF_ERROR(first_error);
  return device_->Sync();
}

SsdStoreStats SsdStore::stats() const {
  SsdStoreStats s;
  {
    MutexLock lock(&mutex_);
    s.live_records = index_.size();
    s.owed_tombstones = owed_removals_.size();
    s.live_bytes = live_bytes_;
    s.file_bytes = file_bytes_;
    for (const auto& [number, f] : files_) s.live_record_bytes += f.live_bytes;
    s.capacity_bytes = capacity_;
    s.put_limit_bytes = put_limit_;
    s.filesystem_free_bytes = filesystem_free_;
  }
  constexpr auto r = std::memory_order_relaxed;
  s.configured_capacity_bytes = options_.capacity_bytes;
  s.no_space_refusals = counters_.no_space_refusals.load(r);
  s.records_written = counters_.records_written.load(r);
  s.bytes_written = counters_.bytes_written.load(r);
  s.device_bytes_written = counters_.device_bytes_written.load(r);
  s.records_read = counters_.records_read.load(r);
  s.bytes_read = counters_.bytes_read.load(r);
  s.corrupt_records = counters_.corrupt_records.load(r);
  s.torn_records = counters_.torn_records.load(r);
  s.compactions = counters_.compactions.load(r);
  s.compacted_bytes_reclaimed = counters_.compacted_bytes_reclaimed.load(r);
  s.read_errors = counters_.read_errors.load(r);
  s.write_errors = counters_.write_errors.load(r);
  s.read_latency = counters_.read_latency.Snapshot();
  s.write_latency = counters_.write_latency.Snapshot();
  return s;
}

}  // namespace mooncake_tier
