// SsdStore::Open's recovery: scan every data file, keep the newest record of
// each key (by sequence number), cut torn tails, then start a fresh active
// file and write tombstones for keys whose newest record is damaged. Also
// what becomes of a record that a read finds corrupt later.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "base/align.h"
#include "node/ssd_file_scanner.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"

namespace mooncake_tier {

// The newest record seen so far for a key during the scan.
struct SsdStore::ScanEntry {
  enum class Kind { kValue, kTombstone, kDamaged };
  Kind kind = Kind::kValue;
  IndexEntry entry;
};

namespace {

using Kind = SsdFileScanner::Kind;

}  // namespace

Status SsdStore::Recover() {
  MT_ASSIGN_OR_RETURN(std::vector<std::string> names, device_->List());
  std::vector<uint32_t> numbers;
  for (const std::string& name : names) {
    if (std::optional<uint32_t> number = ParseFileName(name)) {
      numbers.push_back(*number);
    }
  }
  std::sort(numbers.begin(), numbers.end());
  ScanMap scan;
  std::map<uint32_t, DataFile> files;
  for (uint32_t number : numbers) {
    MT_RETURN_IF_ERROR(RecoverFile(number, scan, files));
  }

  std::vector<std::string> damaged;
  {
    MutexLock lock(&mutex_);
    files_ = std::move(files);
    for (const auto& [number, file] : files_) file_bytes_ += file.size;
    uint64_t max_sequence = 0;
    for (auto& [key, s] : scan) {
      max_sequence = std::max(max_sequence, s.entry.sequence);
      if (s.kind == ScanEntry::Kind::kValue) {
        files_.at(s.entry.file).live_bytes += s.entry.record_bytes;
        live_bytes_ += s.entry.value_len;
        index_.emplace(key, std::move(s.entry));
      } else if (s.kind == ScanEntry::Kind::kDamaged) {
        damaged.push_back(key);
        corrupt_keys_.push_back(key);
      }
    }
    next_sequence_ = max_sequence + 1;
    next_file_number_ = numbers.empty() ? 1 : numbers.back() + 1;
  }
  MT_RETURN_IF_ERROR(StartActiveFile());
  // The newest record of these keys is unreadable: make sure no older one
  // comes back either.
  WriteCorruptionTombstones(damaged);
  return Status::Ok();
}

Status SsdStore::RecoverFile(uint32_t number, ScanMap& scan,
                             std::map<uint32_t, DataFile>& files) {
  const std::string name = FileName(number);
  MT_ASSIGN_OR_RETURN(std::unique_ptr<SsdFile> opened,
                      device_->Open(name, /*create=*/false));
  DataFile data;
  data.file = std::move(opened);
  MT_ASSIGN_OR_RETURN(uint64_t size, data.file->Size());
  MT_RETURN_IF_ERROR(ScanRecoveredFile(number, name, scan, data, size));
  if (size % SsdRecord::kAlignment != 0) {
    // The file ends inside the padding after its last record (cut there,
    // or copied so): make it whole blocks again, as reads expect.
    const uint64_t whole = AlignUp(size, SsdRecord::kAlignment);
    MT_RETURN_IF_ERROR(data.file->Truncate(whole));
    size = whole;
  }
  if (size == 0) {
    data.file.reset();
    const Status removed = device_->Remove(name);
    if (!removed.ok()) {
      spdlog::warn("SSD store: cannot remove empty {}: {}", name,
                   removed.ToString());
    }
    return Status::Ok();
  }
  data.size = size;
  files.emplace(number, std::move(data));
  return Status::Ok();
}

Status SsdStore::ScanRecoveredFile(uint32_t number, const std::string& name,
                                   ScanMap& scan, DataFile& data,
                                   uint64_t& size) {
  // Keeps the newest record of `key` (a removal is one too).
  auto apply = [&](std::string_view key, uint64_t sequence,
                   const SsdRecord& record, ScanEntry::Kind kind,
                   uint64_t offset) {
    data.key_hashes.insert(SsdRecord::KeyHash(key));
    auto [it, inserted] = scan.try_emplace(std::string(key));
    if (!inserted && it->second.entry.sequence >= sequence) return;
    it->second.kind = kind;
    it->second.entry =
        IndexEntry{number,        offset,        sequence, record.value_len(),
                   record.size(), record.group()};
  };

  SsdFileScanner scanner(*data.file, size);
  SsdFileScanner::Entry entry;
  while (true) {
    MT_ASSIGN_OR_RETURN(const bool more, scanner.Next(&entry));
    if (!more) break;
    switch (entry.kind) {
      case Kind::kRecord: {
        const SsdRecord& record = *entry.record;
        if (!record.tombstone()) {
          apply(record.key(), record.sequence(), record,
                ScanEntry::Kind::kValue, entry.offset);
          break;
        }
        data.tombstone_bytes += record.size();
        // Its checksum holds, so its list parses; a list that does not
        // leaves only the header's own removal.
        Result<std::vector<SsdRecord::Removal>> removed = record.Removals(
            entry.data.subspan(record.value_offset(), record.value_len()));
        if (!removed.ok())
          removed = std::vector<SsdRecord::Removal>{
              {record.key(), record.sequence()}};
        for (const SsdRecord::Removal& r : *removed) {
          apply(r.key, r.sequence, record, ScanEntry::Kind::kTombstone,
                entry.offset);
        }
        break;
      }
      case Kind::kDamagedRecord:
        spdlog::error(
            "SSD store: record of '{}' in {} at {} fails its checksum",
            entry.record->key(), name, entry.offset);
        counters_.corrupt_records.fetch_add(1, std::memory_order_relaxed);
        apply(entry.record->key(), entry.record->sequence(), *entry.record,
              ScanEntry::Kind::kDamaged, entry.offset);
        break;
      case Kind::kDamagedRegion:
        spdlog::error("SSD store: {} bytes without a valid header in {} at {}",
                      entry.bytes, name, entry.offset);
        (entry.zeros ? counters_.torn_records : counters_.corrupt_records)
            .fetch_add(1, std::memory_order_relaxed);
        break;
      case Kind::kTornTail:
        spdlog::warn("SSD store: torn tail of {} bytes in {} at {}; truncated",
                     entry.bytes, name, entry.offset);
        counters_.torn_records.fetch_add(1, std::memory_order_relaxed);
        // Back to the end of the last good record, then zeros to the next
        // block boundary (padding): files stay whole blocks for O_DIRECT.
        MT_RETURN_IF_ERROR(data.file->Truncate(entry.offset));
        size = AlignUp(entry.offset, SsdRecord::kAlignment);
        if (size != entry.offset) {
          MT_RETURN_IF_ERROR(data.file->Truncate(size));
        }
        break;
    }
  }
  return Status::Ok();
}

Status SsdStore::StartActiveFile() {
  uint32_t number = 0;
  {
    MutexLock lock(&mutex_);
    number = next_file_number_++;
  }
  MT_ASSIGN_OR_RETURN(std::unique_ptr<SsdFile> file,
                      device_->Open(FileName(number), /*create=*/true));
  MutexLock lock(&mutex_);
  files_[number].file = std::move(file);
  active_file_ = number;
  return Status::Ok();
}

// ---- Records a read found corrupt ------------------------------------------

void SsdStore::DropCorrupt(std::span<const CorruptRecord> records) {
  if (records.empty()) return;
  std::vector<std::string> dropped;
  {
    MutexLock lock(&mutex_);
    for (const CorruptRecord& r : records) {
      auto it = index_.find(r.key);
      if (it == index_.end() || it->second.sequence != r.sequence ||
          it->second.file != r.file || it->second.offset != r.offset) {
        continue;  // already dropped, replaced or moved
      }
      spdlog::error("SSD store: record of '{}' in {} at {} is corrupt", r.key,
                    FileName(r.file), r.offset);
      RemoveIndexEntryLocked(r.key);
      corrupt_keys_.push_back(r.key);
      dropped.push_back(r.key);
      counters_.corrupt_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  WriteCorruptionTombstones(dropped);
}

void SsdStore::WriteCorruptionTombstones(std::span<const std::string> keys) {
  if (keys.empty()) return;
  std::vector<PendingWrite> pending(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    pending[i].kind = WriteKind::kCorruptionTombstone;
    pending[i].key = keys[i];
    pending[i].bytes = SsdRecord::Tombstone(keys[i], 0).size();
  }
  WriteRecords(pending);
  for (const PendingWrite& p : pending) {
    if (!p.status.ok()) {
      spdlog::warn("SSD store: no tombstone for corrupt '{}': {}", p.key,
                   p.status.ToString());
    }
  }
}

std::vector<std::string> SsdStore::TakeCorruptKeys() {
  MutexLock lock(&mutex_);
  return std::exchange(corrupt_keys_, {});
}

}  // namespace mooncake_tier
