// SsdStore's read path: one lookup under the index lock for the whole batch,
// then, outside it, one read per record (header and value together; a large
// value goes straight into the caller's buffer when its alignment allows),
// one ReadBatch per data file, and a checksum check of every record.

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/validation.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"

namespace mooncake_tier {

struct SsdStore::ReadPlan {
  bool pending = false;  // found, buffer large enough: has I/O to run
  uint32_t file_number = 0;
  uint64_t offset = 0;
  std::shared_ptr<SsdFile> file;
  std::optional<SsdRecord> expected;  // key, group, lengths, sequence
  AlignedBuffer bounce;
  uint64_t skip = 0;    // bounce buffer bytes before the record's start
  bool direct = false;  // value body read into the caller's buffer
  uint64_t body = 0;    // direct: bytes of it read there
  std::vector<IoRequest> requests;
  Status io_status;
};

void SsdStore::ReadBatch(std::span<SsdRead> reads) {
  std::vector<ReadPlan> plans(reads.size());
  LookUp(reads, plans);
  for (size_t i = 0; i < reads.size(); ++i) {
    if (plans[i].pending) PlanIo(reads[i], plans[i]);
  }
  bool any_io = false;
  for (const ReadPlan& plan : plans) any_io = any_io || plan.pending;
  const auto start = std::chrono::steady_clock::now();
  RunReads(plans);
  if (any_io) {
    counters_.read_latency.Record(std::chrono::steady_clock::now() - start);
  }
  std::vector<CorruptRecord> corrupt;
  for (size_t i = 0; i < reads.size(); ++i) {
    ReadPlan& plan = plans[i];
    if (!plan.pending) continue;
    reads[i].status = FinishRead(reads[i], plan);
    if (reads[i].status.reason() == ErrorReason::kChecksumMismatch) {
      corrupt.push_back({std::string(reads[i].key), plan.expected->sequence(),
                         plan.file_number, plan.offset});
    }
  }
  for (ReadPlan& plan : plans) buffers_.Put(std::move(plan.bounce));
  DropCorrupt(corrupt);
}

void SsdStore::LookUp(std::span<SsdRead> reads,
                      std::span<ReadPlan> plans) const {
  MutexLock lock(&mutex_);
  for (size_t i = 0; i < reads.size(); ++i) {
    SsdRead& read = reads[i];
    read.size = 0;
    read.status = ValidateKey(read.key);
    if (!read.status.ok()) continue;
    auto it = index_.find(IndexKey(read.key));
    if (it == index_.end()) {
      read.status = Status(ErrorReason::kObjectNotFound,
                           "no SSD record for '" + std::string(read.key) + "'");
      continue;
    }
    const IndexEntry& entry = it->second;
    read.size = entry.value_len;
    if (read.buffer.size() < entry.value_len) {
      read.status = Status(ErrorReason::kBufferTooSmall,
                           "value of '" + std::string(read.key) + "' is " +
                               std::to_string(entry.value_len) + " bytes");
      continue;
    }
    ReadPlan& plan = plans[i];
    plan.pending = true;
    plan.file_number = entry.file;
    plan.offset = entry.offset;
    plan.file = files_.at(entry.file).file;
    plan.expected = SsdRecord::Value(read.key, entry.group, entry.value_len,
                                     entry.sequence);
  }
}

void SsdStore::PlanIo(SsdRead& read, ReadPlan& plan) const {
  const SsdRecord& record = *plan.expected;
  const uint64_t align = device_->alignment();
  const uint64_t value_at = record.value_offset();
  const uint64_t value_len = record.value_len();
  std::byte* dst = read.buffer.data();
  plan.direct = value_len >= kDirectIoMinBytes &&
                reinterpret_cast<uintptr_t>(dst) % align == 0;
  if (!plan.direct) {
    // The blocks that hold the record (a small one may start and end
    // inside a block it shares); files are whole blocks, so they exist.
    const uint64_t block = SsdRecord::kAlignment;
    const uint64_t start = plan.offset / block * block;
    plan.skip = plan.offset - start;
    const uint64_t len =
        (plan.skip + value_at + value_len + block - 1) / block * block;
    plan.bounce = buffers_.Get(len);
    plan.requests.push_back({start, plan.bounce.data(), len, 0});
    return;
  }
  // The value starts on a block boundary: header block into the bounce
  // buffer, the aligned body into the caller's buffer, the last partial
  // block (if any) into the bounce buffer behind the header.
  plan.body = value_len / align * align;
  const uint64_t tail = value_len - plan.body;
  plan.bounce = buffers_.Get(value_at + (tail > 0 ? align : 0));
  plan.requests.push_back({plan.offset, plan.bounce.data(), value_at, 0});
  plan.requests.push_back({plan.offset + value_at, dst, plan.body, 0});
  if (tail > 0) {
    plan.requests.push_back({plan.offset + value_at + plan.body,
                             plan.bounce.data() + value_at, align, 0});
  }
}

void SsdStore::RunReads(std::span<ReadPlan> plans) {
  std::vector<SsdFile*> files;
  for (const ReadPlan& plan : plans) {
    if (plan.pending &&
        std::find(files.begin(), files.end(), plan.file.get()) == files.end()) {
      files.push_back(plan.file.get());
    }
  }
  for (SsdFile* file : files) {
    std::vector<IoRequest> batch;
    for (const ReadPlan& plan : plans) {
      if (!plan.pending || plan.file.get() != file) continue;
      batch.insert(batch.end(), plan.requests.begin(), plan.requests.end());
    }
    const Status status = file->ReadBatch(batch);
    size_t next = 0;
    for (ReadPlan& plan : plans) {
      if (!plan.pending || plan.file.get() != file) continue;
      for (IoRequest& request : plan.requests) request = batch[next++];
      plan.io_status = status;
    }
  }
}

Status SsdStore::FinishRead(SsdRead& read, ReadPlan& plan) {
  const SsdRecord& expected = *plan.expected;
  auto corrupt = [&](std::string_view why) {
    return Status(
        ErrorReason::kChecksumMismatch,
        "SSD record of '" + std::string(read.key) + "' " + std::string(why));
  };
  for (const IoRequest& r : plan.requests) {
    if (r.result < 0 || (!plan.io_status.ok() && r.result == 0)) {
      counters_.read_errors.fetch_add(1, std::memory_order_relaxed);
      return plan.io_status.ok() ? Status(ErrorReason::kIoError, "read failed")
                                 : plan.io_status;
    }
    if (static_cast<uint64_t>(r.result) != r.len) return corrupt("cut short");
  }
  const std::span<const std::byte> meta(plan.bounce.data() + plan.skip,
                                        expected.meta_bytes());
  Result<SsdRecord> found = SsdRecord::Decode(meta);
  if (!found.ok()) return corrupt("has a bad header");
  if (found->tombstone() || found->key() != read.key ||
      found->sequence() != expected.sequence() ||
      found->value_len() != expected.value_len()) {
    return corrupt("is not the indexed record");
  }
  const uint64_t value_len = expected.value_len();
  std::span<const std::byte> value;
  if (plan.direct) {
    std::memcpy(read.buffer.data() + plan.body,
                plan.bounce.data() + expected.value_offset(),
                value_len - plan.body);
    value = read.buffer.first(value_len);
  } else {
    value = plan.bounce.span().subspan(plan.skip + expected.value_offset(),
                                       value_len);
  }
  if (!found->VerifyChecksum(meta, value)) return corrupt("fails its checksum");
  if (!plan.direct && value_len > 0) {
    std::memcpy(read.buffer.data(), value.data(), value_len);
  }
  read.size = value_len;
  counters_.records_read.fetch_add(1, std::memory_order_relaxed);
  counters_.bytes_read.fetch_add(value_len, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace mooncake_tier
