#include "node/ssd_file_scanner.h"

#include <algorithm>
#include <vector>

namespace mooncake_tier {
namespace {

constexpr uint64_t kSector = SsdRecord::kSmallAlignment;
// Bytes read per window, split into requests of kRequestBytes submitted as
// one batch so that the device sees several at once.
constexpr uint64_t kWindowBytes = 4 << 20;
constexpr uint64_t kRequestBytes = 1 << 20;

bool AllZero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(),
                     [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

SsdFileScanner::SsdFileScanner(SsdFile& file, uint64_t file_size)
    : file_(file), file_size_(file_size) {}

Result<std::span<const std::byte>> SsdFileScanner::Load(uint64_t offset,
                                                        uint64_t len) {
  const uint64_t end = std::min(offset + len, file_size_);
  if (offset >= window_offset_ && end <= window_offset_ + window_len_) {
    return std::span<const std::byte>(
        window_.data() + (offset - window_offset_), end - offset);
  }
  const uint64_t start = AlignDown(offset, SsdRecord::kAlignment);
  const uint64_t read_end = std::min(
      AlignUp(std::max(end, start + kWindowBytes), SsdRecord::kAlignment),
      AlignUp(file_size_, SsdRecord::kAlignment));
  if (window_.size() < read_end - start) {
    window_ = AlignedBuffer(read_end - start);
  }
  std::vector<IoRequest> requests;
  for (uint64_t at = start; at < read_end; at += kRequestBytes) {
    const uint64_t n = std::min(kRequestBytes, read_end - at);
    requests.push_back({at, window_.data() + (at - start), n, 0});
  }
  window_offset_ = start;
  window_len_ = 0;
  MT_RETURN_IF_ERROR(file_.ReadBatch(requests));
  for (const IoRequest& r : requests) {
    window_len_ += static_cast<uint64_t>(r.result);
    if (static_cast<uint64_t>(r.result) < r.len) break;  // end of file
  }
  const uint64_t have = std::min(end, window_offset_ + window_len_);
  return std::span<const std::byte>(window_.data() + (offset - start),
                                    have > offset ? have - offset : 0);
}

Result<uint64_t> SsdFileScanner::Resync(uint64_t offset) {
  // A record that is not whole blocks may start on any granule (formats 2
  // and 3 both start on multiples of the smaller one).
  for (uint64_t at = offset / kSector * kSector + kSector; at < file_size_;
       at += kSector) {
    MT_ASSIGN_OR_RETURN(std::span<const std::byte> block,
                        Load(at, SsdRecord::kAlignment));
    if (SsdRecord::Decode(block).ok()) return at;
  }
  return file_size_;
}

Result<bool> SsdFileScanner::Next(Entry* entry) {
  if (done_ || offset_ >= file_size_) return false;
  if (offset_ % SsdRecord::kAlignment != 0) {
    // A batch of writes ends on a block boundary: zeros from the end of its
    // last record to there are padding, not damage.
    const uint64_t block_end =
        std::min(AlignUp(offset_, SsdRecord::kAlignment), file_size_);
    MT_ASSIGN_OR_RETURN(std::span<const std::byte> rest,
                        Load(offset_, block_end - offset_));
    if (rest.size() == block_end - offset_ && AllZero(rest)) {
      offset_ = block_end;
      if (offset_ >= file_size_) return false;
    }
  }
  *entry = Entry();
  entry->offset = offset_;
  MT_ASSIGN_OR_RETURN(std::span<const std::byte> head,
                      Load(offset_, SsdRecord::kAlignment));
  Result<SsdRecord> record = SsdRecord::Decode(head);
  if (!record.ok()) {
    const bool zeros = AllZero(head);
    MT_ASSIGN_OR_RETURN(const uint64_t next, Resync(offset_));
    if (next >= file_size_) {
      entry->kind = Kind::kTornTail;
      entry->bytes = file_size_ - offset_;
      done_ = true;
      return true;
    }
    entry->kind = Kind::kDamagedRegion;
    entry->bytes = next - offset_;
    entry->zeros = zeros;
    offset_ = next;
    return true;
  }
  const uint64_t size = record->size();
  MT_ASSIGN_OR_RETURN(std::span<const std::byte> data,
                      Load(offset_, std::min(size, file_size_ - offset_)));
  if (size > file_size_ - offset_ || data.size() < size) {
    entry->kind = Kind::kTornTail;
    entry->bytes = file_size_ - offset_;
    done_ = true;
    return true;
  }
  const bool intact = record->VerifyChecksum(
      data.first(record->meta_bytes()),
      data.subspan(record->value_offset(), record->value_len()));
  entry->kind = intact ? Kind::kRecord : Kind::kDamagedRecord;
  entry->bytes = size;
  if (intact) entry->data = data;
  entry->record = std::move(record).value();
  offset_ += size;
  return true;
}

}  // namespace mooncake_tier
