// SsdStore's write path (node/ssd_store.h WriteRecords): admit each record
// (room, sequence, order per key), encode it, write the records of a batch
// to their files in runs of whole blocks, then publish them to the index;
// removals owed while a write was in flight go out as tombstones after it.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "base/align.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"

namespace mooncake_tier {

void SsdStore::WriteRecords(std::span<PendingWrite> writes,
                            LatencyHistogram* device_time) {
  Reserve(writes);
  for (PendingWrite& w : writes) {
    if (!w.admitted || w.skipped) continue;
    if (w.kind == WriteKind::kPut) {
      EncodePut(w);
    } else if (w.kind == WriteKind::kRemoveList) {
      const std::vector<SsdRecord::Removal> removed = AdmittedRemovals(w);
      w.buffer = buffers_.Get(w.bytes);
      SsdRecord::TombstoneList(removed).Encode(
          SsdRecord::EncodeRemovals(removed), w.buffer.span());
    } else if (w.kind == WriteKind::kOwedTombstones) {
      w.buffer = buffers_.Get(w.bytes);
      SsdRecord::TombstoneList(w.owed_kept)
          .Encode(SsdRecord::EncodeRemovals(w.owed_kept), w.buffer.span());
    } else if (w.kind == WriteKind::kCorruptionTombstone) {
      w.buffer = buffers_.Get(w.bytes);
      SsdRecord::Tombstone(w.key, w.sequence).Encode({}, w.buffer.span());
    }  // moved records arrive with their bytes in w.buffer
  }
  const auto start = std::chrono::steady_clock::now();
  if (WriteToFiles(writes) && device_time != nullptr) {
    device_time->Record(std::chrono::steady_clock::now() - start);
  }
  Publish(writes);
  for (PendingWrite& w : writes) buffers_.Put(std::move(w.buffer));
}

std::vector<SsdRecord::Removal> SsdStore::AdmittedRemovals(
    const PendingWrite& w) {
  std::vector<SsdRecord::Removal> removed;
  for (size_t j = 0; j < w.removals.size(); ++j) {
    if (w.removal_status[j].ok()) {
      removed.push_back({w.removals[j], w.removal_sequences[j]});
    }
  }
  return removed;
}

void SsdStore::EncodePut(PendingWrite& w) {
  const std::span<const std::byte> value = w.put->value;
  const SsdRecord record =
      SsdRecord::Value(w.key, w.put->group, value.size(), w.sequence);
  const uint64_t align = device_->alignment();
  static_assert(kDirectIoMinBytes >= SsdRecord::kAlignedValueMinBytes);
  if (value.size() < kDirectIoMinBytes ||
      reinterpret_cast<uintptr_t>(value.data()) % align != 0) {
    w.buffer = buffers_.Get(w.bytes);
    record.Encode(value, w.buffer.span());
    return;
  }
  // The value starts on a block boundary of the record: write its aligned
  // body from where it is, saving a copy; stage the head and the tail.
  w.head_bytes = record.value_offset();
  w.direct_bytes = value.size() / align * align;
  const uint64_t tail_bytes = w.bytes - w.head_bytes - w.direct_bytes;
  const uint64_t tail_value = value.size() - w.direct_bytes;
  w.buffer = buffers_.Get(w.head_bytes + tail_bytes);
  record.EncodeMeta(value, w.buffer.span());
  std::byte* tail = w.buffer.data() + w.head_bytes;
  std::memcpy(tail, value.data() + w.direct_bytes, tail_value);
  std::memset(tail + tail_value, 0, tail_bytes - tail_value);
}

void SsdStore::Reserve(std::span<PendingWrite> writes) {
  MutexLock lock(&mutex_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (rolling_) return false;
    for (const PendingWrite& w : writes) {
      if (!w.status.ok()) continue;
      if (busy_keys_.contains(w.key)) return false;
      for (std::string_view key : w.removals) {
        if (busy_keys_.contains(key)) return false;
      }
    }
    return true;
  };
  while (!ready()) admission_cv_.Wait();
  for (PendingWrite& w : writes) {
    if (!w.status.ok()) continue;
    if (w.kind == WriteKind::kRemoveList) {
      busy_keys_.insert(w.removals.begin(), w.removals.end());
    } else {
      busy_keys_.insert(w.key);
    }
    w.busy = true;
  }
  absl::flat_hash_set<std::string_view> removed;
  PendingWrite* last = nullptr;
  for (PendingWrite& w : writes) {
    if (w.status.ok()) w.status = ReserveOneLocked(w, removed, last);
  }
  // The batch ends on a block boundary: the next batch's first block is its
  // own, so concurrent batches never write the same block.
  if (last != nullptr) PadFileLocked(last->file, last);
}

void SsdStore::PadFileLocked(uint32_t file, PendingWrite* last) {
  DataFile& f = files_.at(file);
  const uint64_t pad = AlignUp(f.size, SsdRecord::kAlignment) - f.size;
  if (pad == 0) return;
  f.size += pad;
  file_bytes_ += pad;
  // Only this batch's writes can have left the file off a block boundary.
  if (last != nullptr && last->file == file) last->pad += pad;
}

Status SsdStore::ReserveOneLocked(
    PendingWrite& w, absl::flat_hash_set<std::string_view>& removed,
    PendingWrite*& last) {
  switch (w.kind) {
    case WriteKind::kPut:
      break;
    case WriteKind::kRemoveList: {
      // Each key on its own: one that is absent (or twice in the batch)
      // fails alone.
      std::vector<SsdRecord::Removal> admitted;
      w.removal_status.assign(w.removals.size(), Status::Ok());
      w.removal_sequences.assign(w.removals.size(), 0);
      for (size_t j = 0; j < w.removals.size(); ++j) {
        const std::string_view key = w.removals[j];
        if (removed.contains(key) || !index_.contains(IndexKey(key))) {
          w.removal_status[j] =
              Status(ErrorReason::kObjectNotFound,
                     "no SSD record for '" + std::string(key) + "'");
          continue;
        }
        removed.insert(key);
        admitted.push_back({key, 0});
      }
      w.skipped = admitted.empty();
      if (!w.skipped) {
        w.key = admitted.front().key;
        w.bytes = SsdRecord::TombstoneListBytes(admitted);
      }
      break;
    }
    case WriteKind::kCorruptionTombstone:
      w.skipped = index_.contains(IndexKey(w.key));  // a newer value shadows it
      break;
    case WriteKind::kOwedTombstones:
      // Only while some file may still hold a record of the key.
      w.owed_kept.clear();
      for (const auto& [key, sequence] : w.owed) {
        if (NeedsTombstoneLocked(SsdRecord::KeyHash(key), UINT32_MAX)) {
          w.owed_kept.push_back({key, sequence});
        }
      }
      w.skipped = w.owed_kept.empty();
      if (!w.skipped) {
        w.bytes = SsdRecord::TombstoneListBytes(w.owed_kept);
        w.sequence = w.owed_kept.front().sequence;
      }
      break;
    case WriteKind::kCopy: {
      auto it = index_.find(IndexKey(w.key));
      w.skipped = it == index_.end() || it->second.file != w.source_file ||
                  it->second.offset != w.source_offset;
      break;
    }
    case WriteKind::kCarryTombstone:
      // Moved while any key it names may still have an older record.
      w.skipped = std::none_of(
          w.carried_hashes.begin(), w.carried_hashes.end(),
          [&](uint64_t hash) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
            return NeedsTombstoneLocked(hash, w.source_file);
          });
      break;
  }
  if (w.skipped) return Status::Ok();

  RefreshSpaceLocked(/*force=*/false);
  const uint64_t limit = w.kind == WriteKind::kPut ? put_limit_ : capacity_;
  DataFile* active = &files_.at(active_file_);
  const bool roll =
      active->size > 0 && active->size + w.bytes > max_file_bytes_;
  // What placing the record costs the store if it ends the batch: zeros
  // closing the file it leaves, zeros before it (a block-aligned record),
  // itself, zeros after it to the block boundary.
  const uint64_t closing =
      roll ? AlignUp(active->size, SsdRecord::kAlignment) - active->size : 0;
  const uint64_t start =
      roll ? 0
           : (w.block_aligned ? AlignUp(active->size, SsdRecord::kAlignment)
                              : active->size);
  const uint64_t lead = roll ? 0 : start - active->size;
  const uint64_t tail =
      AlignUp(start + w.bytes, SsdRecord::kAlignment) - (start + w.bytes);
  if (file_bytes_ + closing + lead + w.bytes + tail > limit) {
    if (w.kind == WriteKind::kPut) {
      counters_.no_space_refusals.fetch_add(1, std::memory_order_relaxed);
    }
    return Status(ErrorReason::kNoSpace,
                  "SSD store full: " + std::to_string(file_bytes_) + " of " +
                      std::to_string(limit) + " bytes used");
  }
  if (roll) {
    PadFileLocked(active_file_, last);
    MT_RETURN_IF_ERROR(RollActiveFileLocked());
    active = &files_.at(active_file_);
  } else if (lead > 0) {
    PadFileLocked(active_file_, last);
  }
  w.file = active_file_;
  w.offset = active->size;
  w.handle = active->file;
  active->size += w.bytes;
  ++active->writes_in_flight;
  file_bytes_ += w.bytes;
  if (w.kind == WriteKind::kRemoveList) {
    for (size_t j = 0; j < w.removals.size(); ++j) {
      if (w.removal_status[j].ok()) w.removal_sequences[j] = next_sequence_++;
    }
    w.sequence = AdmittedRemovals(w).front().sequence;
  } else if (w.kind != WriteKind::kCopy &&
             w.kind != WriteKind::kCarryTombstone &&
             w.kind != WriteKind::kOwedTombstones) {
    w.sequence = next_sequence_++;
  }
  w.admitted = true;
  last = &w;
  return Status::Ok();
}

Status SsdStore::RollActiveFileLocked() {
  rolling_ = true;
  const uint32_t number = next_file_number_++;
  mutex_.Unlock();  // creating a file is I/O; rolling_ holds off writers
  Result<std::unique_ptr<SsdFile>> file = device_->Open(FileName(number), true);
  mutex_.Lock();
  rolling_ = false;
  admission_cv_.SignalAll();
  if (!file.ok()) return file.status();
  files_[number].file = std::move(file).value();
  active_file_ = number;
  return Status::Ok();
}

bool SsdStore::WriteToFiles(std::span<PendingWrite> writes) {
  std::vector<SsdFile*> files;
  for (const auto& w : writes) {
    if (w.admitted && !w.skipped &&
        std::find(files.begin(), files.end(), w.handle.get()) == files.end()) {
      files.push_back(w.handle.get());
    }
  }
  for (SsdFile* file : files) WriteFile(*file, writes);
  return !files.empty();
}

void SsdStore::WriteFile(SsdFile& file, std::span<PendingWrite> writes) {
  std::vector<IoRequest> requests;
  std::vector<std::vector<PendingWrite*>> owners;  // per request
  std::vector<AlignedBuffer> run_buffers;
  // Records placed back to back that share blocks (this batch's, in
  // order) go out as one request from one buffer: a run starts and ends
  // on a block boundary. A record that is whole blocks on its own is a
  // run of one, written from its buffer without a copy.
  std::vector<PendingWrite*> run;
  auto flush_run = [&] {
    if (run.empty()) return;
    const uint64_t at = run.front()->offset;
    const uint64_t len =
        run.back()->offset + run.back()->bytes + run.back()->pad - at;
    if (run.size() == 1 && run.front()->pad == 0) {
      requests.push_back({at, run.front()->buffer.data(), len, 0});
    } else {
      AlignedBuffer& buffer = run_buffers.emplace_back(buffers_.Get(len));
      for (PendingWrite* w : run) {
        std::byte* p = buffer.data() + (w->offset - at);
        std::memcpy(p, w->buffer.data(), w->bytes);
        std::memset(p + w->bytes, 0, w->pad);
      }
      requests.push_back({at, buffer.data(), len, 0});
    }
    owners.push_back(std::move(run));
    run.clear();
  };
  for (auto& w : writes) {
    if (!w.admitted || w.skipped || w.handle.get() != &file) continue;
    if (w.direct_bytes == 0) {
      if (!run.empty() &&
          (run.back()->offset + run.back()->bytes + run.back()->pad !=
           w.offset)) {
        flush_run();
      }
      run.push_back(&w);
      if ((w.offset + w.bytes + w.pad) % SsdRecord::kAlignment == 0)
        flush_run();
      continue;
    }
    flush_run();
    // A large record starts and ends on a block boundary: no pad. The
    // device only reads from a write request's buffer.
    void* body = const_cast<std::byte*>(w.put->value.data());
    const uint64_t tail_bytes = w.bytes - w.head_bytes - w.direct_bytes;
    requests.push_back({w.offset, w.buffer.data(), w.head_bytes, 0});
    requests.push_back({w.offset + w.head_bytes, body, w.direct_bytes, 0});
    owners.insert(owners.end(), 2, {&w});
    if (tail_bytes > 0) {
      requests.push_back({w.offset + w.head_bytes + w.direct_bytes,
                          w.buffer.data() + w.head_bytes, tail_bytes, 0});
      owners.push_back({&w});
    }
  }
  flush_run();
  const Status status = file.WriteBatch(requests);
  uint64_t written = 0;
  for (const IoRequest& r : requests) {
    if (r.result > 0) written += static_cast<uint64_t>(r.result);
  }
  counters_.device_bytes_written.fetch_add(written, std::memory_order_relaxed);
  for (size_t k = 0; k < requests.size(); ++k) {
    if (requests[k].result == static_cast<ssize_t>(requests[k].len)) continue;
    for (PendingWrite* w : owners[k]) {
      w->status =
          status.ok() ? Status(ErrorReason::kIoError, "short write") : status;
    }
  }
  for (AlignedBuffer& buffer : run_buffers) buffers_.Put(std::move(buffer));
}

void SsdStore::Publish(std::span<PendingWrite> writes) {
  MutexLock lock(&mutex_);
  bool file_system_full = false;
  for (PendingWrite& w : writes) {
    if (w.admitted && !w.skipped) --files_.at(w.file).writes_in_flight;
    if (w.kind == WriteKind::kRemoveList && !w.skipped &&
        w.status.reason() == ErrorReason::kNoSpace) {
      file_system_full = file_system_full || w.admitted;
      counters_.no_space_refusals.fetch_add(1, std::memory_order_relaxed);
      OweRemovalsLocked(w);
      continue;
    }
    if (!w.admitted || w.skipped) continue;
    if (w.status.ok()) {
      PublishOneLocked(w);
    } else if (w.status.reason() == ErrorReason::kNoSpace) {
      // The file system had less room than it said: look again now, so
      // that puts stop short of what it really has.
      file_system_full = true;
      counters_.no_space_refusals.fetch_add(1, std::memory_order_relaxed);
    } else {
      counters_.write_errors.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (file_system_full) RefreshSpaceLocked(/*force=*/true);
  bool released = false;
  for (PendingWrite& w : writes) {
    if (w.busy && w.kind == WriteKind::kRemoveList) {
      for (std::string_view key : w.removals) busy_keys_.erase(key);
    } else if (w.busy) {
      busy_keys_.erase(w.key);
    }
    released |= w.busy;
    w.busy = false;
  }
  if (released) admission_cv_.SignalAll();
}

void SsdStore::OweRemovalsLocked(PendingWrite& w) {
  for (size_t j = 0; j < w.removals.size(); ++j) {
    if (j >= w.removal_status.size() || !w.removal_status[j].ok()) continue;
    // An admitted list's sequences were given in order with other writes;
    // one refused at admission gets them now, while its keys are busy, so
    // a later put of the key still outranks the tombstone.
    const uint64_t sequence =
        w.admitted ? w.removal_sequences[j] : next_sequence_++;
    RemoveIndexEntryLocked(w.removals[j]);
    owed_removals_.emplace_back(std::string(w.removals[j]), sequence);
  }
  w.status = Status::Ok();
}

void SsdStore::WriteOwedTombstones() {
  constexpr size_t kPerRecord = 256;
  std::vector<std::pair<std::string, uint64_t>> owed;
  {
    MutexLock lock(&mutex_);
    owed.swap(owed_removals_);
  }
  if (owed.empty()) return;
  std::vector<PendingWrite> pending((owed.size() + kPerRecord - 1) /
                                    kPerRecord);
  for (size_t i = 0; i < owed.size(); ++i) {
    pending[i / kPerRecord].owed.push_back(std::move(owed[i]));
  }
  for (PendingWrite& w : pending) {
    w.kind = WriteKind::kOwedTombstones;
    w.key = w.owed.front().first;  // the vector no longer changes
  }
  WriteRecords(pending);
  MutexLock lock(&mutex_);
  for (PendingWrite& w : pending) {
    if (w.status.ok()) continue;
    for (auto& entry : w.owed) owed_removals_.push_back(std::move(entry));
  }
}

void SsdStore::PublishOneLocked(PendingWrite& w) {
  DataFile& target = files_.at(w.file);
  target.dirty = true;
  target.key_hashes.insert(SsdRecord::KeyHash(w.key));
  switch (w.kind) {
    case WriteKind::kPut: {
      RemoveIndexEntryLocked(w.key);
      const uint64_t value_len = w.put->value.size();
      index_.emplace(std::string(w.key),
                     IndexEntry{w.file, w.offset, w.sequence, value_len,
                                w.bytes, w.put->group});
      target.live_bytes += w.bytes;
      live_bytes_ += value_len;
      break;
    }
    case WriteKind::kRemoveList:
      for (const SsdRecord::Removal& r : AdmittedRemovals(w)) {
        RemoveIndexEntryLocked(r.key);
        target.key_hashes.insert(SsdRecord::KeyHash(r.key));
      }
      target.tombstone_bytes += w.bytes;
      break;
    case WriteKind::kCarryTombstone:
      target.key_hashes.insert(w.carried_hashes.begin(),
                               w.carried_hashes.end());
      target.tombstone_bytes += w.bytes;
      break;
    case WriteKind::kOwedTombstones:
      for (const SsdRecord::Removal& r : w.owed_kept) {
        target.key_hashes.insert(SsdRecord::KeyHash(r.key));
      }
      target.tombstone_bytes += w.bytes;
      break;
    case WriteKind::kCorruptionTombstone:
      target.tombstone_bytes += w.bytes;
      break;
    case WriteKind::kCopy: {
      auto it = index_.find(IndexKey(w.key));
      if (it == index_.end() || it->second.file != w.source_file ||
          it->second.offset != w.source_offset) {
        break;  // dropped meanwhile (found corrupt): the copy is dead
      }
      files_.at(w.source_file).live_bytes -= it->second.record_bytes;
      it->second.file = w.file;
      it->second.offset = w.offset;
      target.live_bytes += it->second.record_bytes;
      break;
    }
  }
}

void SsdStore::RemoveIndexEntryLocked(std::string_view key) {
  auto it = index_.find(IndexKey(key));
  if (it == index_.end()) return;
  files_.at(it->second.file).live_bytes -= it->second.record_bytes;
  live_bytes_ -= it->second.value_len;
  index_.erase(it);
}

// ---- Single-key forms, queries, stats
// -----------------------------------------

}  // namespace mooncake_tier
