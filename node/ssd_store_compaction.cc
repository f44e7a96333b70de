// SsdStore compaction: pick the sealed file with the largest share of dead
// bytes, move its live records (verbatim, sequence numbers kept) and its
// still-needed tombstones into the active file, sync, then delete it.

#include <spdlog/spdlog.h>

#include <cstring>

#include "node/ssd_file_scanner.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"

namespace mooncake_tier {
namespace {

// Records moved per WriteRecords call: bounds the staging memory and how
// long their keys stay busy.
constexpr size_t kChunkRecords = 64;
constexpr uint64_t kChunkBytes = 16ull << 20;

}  // namespace

Result<bool> SsdStore::CompactStep() {
  return CompactStep(options_.compaction_min_dead_ratio);
}

Result<bool> SsdStore::CompactStep(double min_dead_ratio) {
  MutexLock compaction_lock(&compaction_mu_);
  std::optional<uint32_t> victim;
  {
    MutexLock lock(&mutex_);
    victim = PickVictimLocked(min_dead_ratio);
    if (!victim && SealDeadActiveFileLocked(min_dead_ratio)) {
      victim = PickVictimLocked(min_dead_ratio);
    }
  }
  if (!victim) return false;
  MT_RETURN_IF_ERROR(CompactFile(*victim));
  WriteOwedTombstones();  // the file's room pays what removals owe
  return true;
}

std::optional<uint32_t> SsdStore::PickVictimLocked(
    double min_dead_ratio) const {
  std::optional<uint32_t> best;
  double best_ratio = -1;
  for (const auto& [number, f] : files_) {
    if (number == active_file_ || f.size == 0 || f.writes_in_flight > 0) {
      continue;
    }
    // What moving it may take before the file itself is freed.
    const uint64_t need = f.live_bytes + f.tombstone_bytes;
    const double ratio =
        static_cast<double>(f.size - need) / static_cast<double>(f.size);
    if (ratio < min_dead_ratio || need >= f.size) continue;
    // (A file with nothing to move is freed even when the store counts
    // itself past its capacity.)
    if (need > 0 && file_bytes_ + need > capacity_) continue;
    if (ratio > best_ratio) {
      best = number;
      best_ratio = ratio;
    }
  }
  return best;
}

bool SsdStore::SealDeadActiveFileLocked(double min_dead_ratio) {
  auto it = files_.find(active_file_);
  if (it == files_.end() || rolling_) return false;
  const DataFile& f = it->second;
  // Not worth a file of its own below a quarter of the file size.
  if (f.size < max_file_bytes_ / 4) return false;
  const uint64_t need = f.live_bytes + f.tombstone_bytes;
  const double dead = static_cast<double>(f.size - std::min(need, f.size)) /
                      static_cast<double>(f.size);
  if (dead < min_dead_ratio) return false;
  const Status rolled = RollActiveFileLocked();
  if (!rolled.ok()) {
    spdlog::warn("SSD store: cannot seal {} for compaction: {}",
                 FileName(it->first), rolled.ToString());
    return false;
  }
  return true;
}

// Records of a key older than a tombstone live in files numbered no higher
// than the tombstone's (writes of one key are admitted in order and go to
// the active file of their time), so only lower-numbered files matter.
bool SsdStore::NeedsTombstoneLocked(uint64_t key_hash, uint32_t victim) const {
  for (const auto& [number, f] : files_) {
    if (number >= victim) break;
    if (f.key_hashes.contains(key_hash)) return true;
  }
  return false;
}

Status SsdStore::CompactFile(uint32_t victim) {
  std::shared_ptr<SsdFile> file;
  uint64_t size = 0;
  {
    MutexLock lock(&mutex_);
    const DataFile& f = files_.at(victim);
    file = f.file;
    size = f.size;
  }
  uint64_t copied_bytes = 0;
  MT_RETURN_IF_ERROR(MoveRecords(victim, *file, size, copied_bytes));
  DropLostRecords(victim);
  // The moved records must be durable before their originals go.
  MT_RETURN_IF_ERROR(Sync());
  {
    MutexLock lock(&mutex_);
    file_bytes_ -= size;
    files_.erase(victim);
  }
  counters_.compactions.fetch_add(1, std::memory_order_relaxed);
  counters_.compacted_bytes_reclaimed.fetch_add(size - copied_bytes,
                                                std::memory_order_relaxed);
  const Status removed = device_->Remove(FileName(victim));
  if (!removed.ok()) {
    spdlog::warn("SSD store: cannot delete compacted {}: {}", FileName(victim),
                 removed.ToString());
  }
  return Status::Ok();
}

Status SsdStore::MoveRecords(uint32_t victim, SsdFile& file, uint64_t size,
                             uint64_t& copied_bytes) {
  SsdFileScanner scanner(file, size);
  SsdFileScanner::Entry entry;
  std::vector<PendingWrite> chunk;
  uint64_t chunk_bytes = 0;
  std::vector<CorruptRecord> damaged;
  while (true) {
    MT_ASSIGN_OR_RETURN(const bool more, scanner.Next(&entry));
    if (!more) break;
    if (entry.kind == SsdFileScanner::Kind::kDamagedRecord) {
      damaged.push_back({entry.record->key(), entry.record->sequence(), victim,
                         entry.offset});
    }
    if (entry.kind != SsdFileScanner::Kind::kRecord ||
        !StillNeeded(*entry.record, entry, victim, entry.offset)) {
      continue;
    }
    const SsdRecord& record = *entry.record;
    PendingWrite& w = chunk.emplace_back();
    w.kind = record.tombstone() ? WriteKind::kCarryTombstone : WriteKind::kCopy;
    if (record.tombstone()) w.carried_hashes = RemovedKeyHashes(record, entry);
    w.owned_key = record.key();
    w.sequence = record.sequence();
    w.source_file = victim;
    w.source_offset = entry.offset;
    w.bytes = entry.bytes;
    w.block_aligned = record.block_aligned();
    w.buffer = buffers_.Get(entry.bytes);
    std::memcpy(w.buffer.data(), entry.data.data(), entry.bytes);
    chunk_bytes += entry.bytes;
    if (chunk.size() >= kChunkRecords || chunk_bytes >= kChunkBytes) {
      MT_RETURN_IF_ERROR(CopyChunk(chunk, copied_bytes));
      chunk_bytes = 0;
    }
  }
  MT_RETURN_IF_ERROR(CopyChunk(chunk, copied_bytes));
  DropCorrupt(damaged);
  return Status::Ok();
}

std::vector<uint64_t> SsdStore::RemovedKeyHashes(
    const SsdRecord& record, const SsdFileScanner::Entry& entry) {
  std::vector<uint64_t> hashes;
  // The scanner verified the record checksum, so the list parses; were it
  // not to, the header's own key still counts.
  Result<std::vector<SsdRecord::Removal>> removed = record.Removals(
      entry.data.subspan(record.value_offset(), record.value_len()));
  if (!removed.ok()) return {SsdRecord::KeyHash(record.key())};
  for (const SsdRecord::Removal& r : *removed) {
    hashes.push_back(SsdRecord::KeyHash(r.key));
  }
  return hashes;
}

bool SsdStore::StillNeeded(const SsdRecord& record,
                           const SsdFileScanner::Entry& entry, uint32_t victim,
                           uint64_t offset) const {
  // A first look to skip what is already dead; admission checks again.
  if (record.tombstone()) {
    const std::vector<uint64_t> hashes = RemovedKeyHashes(record, entry);
    MutexLock lock(&mutex_);
    return std::any_of(hashes.begin(), hashes.end(),
                       [&](uint64_t hash)
                           ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
                             return NeedsTombstoneLocked(hash, victim);
                           });
  }
  MutexLock lock(&mutex_);
  auto it = index_.find(record.key());
  return it != index_.end() && it->second.file == victim &&
         it->second.offset == offset;
}

void SsdStore::DropLostRecords(uint32_t victim) {
  // Whatever the index still places in the file after the move sits in a
  // stretch the scan could not read: it is lost.
  std::vector<CorruptRecord> lost;
  {
    MutexLock lock(&mutex_);
    if (files_.at(victim).live_bytes == 0) return;
    for (const auto& [key, e] : index_) {
      if (e.file == victim) lost.push_back({key, e.sequence, victim, e.offset});
    }
  }
  DropCorrupt(lost);
}

Status SsdStore::CopyChunk(std::vector<PendingWrite>& chunk,
                           uint64_t& copied_bytes) {
  if (chunk.empty()) return Status::Ok();
  // The vector no longer grows: keys may now point at owned_key.
  for (PendingWrite& w : chunk) w.key = w.owned_key;
  WriteRecords(chunk);
  Status first_error;
  for (const PendingWrite& w : chunk) {
    if (!w.status.ok() && first_error.ok()) first_error = w.status;
    if (w.status.ok() && w.admitted && !w.skipped) copied_bytes += w.bytes;
  }
  chunk.clear();
  return first_error;
}

}  // namespace mooncake_tier
