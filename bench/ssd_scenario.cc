#include "bench/ssd_scenario.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "node/aligned_buffer.h"
#include "node/ssd_store.h"
#include "node/uring_ssd_device.h"

namespace mooncake_tier::bench {
namespace {

constexpr uint64_t kRecordSizes[] = {64ull << 10, 1ull << 20, 4ull << 20};
constexpr uint64_t kBytesPerSize = 512ull << 20;
constexpr uint64_t kMinRecords = 16;
// Records per PutBatch / ReadBatch, and chunks per raw batch.
constexpr size_t kDepth = 8;
// Read passes per side, store and raw taking turns; the best pass counts, so
// that a burst of load from other processes skews neither side.
constexpr int kReadPasses = 3;

using SteadyClock = std::chrono::steady_clock;

double Gbps(uint64_t bytes, SteadyClock::duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

// kDepth aligned buffers of `size` bytes; slot s holds a pattern of its own.
std::vector<AlignedBuffer> PatternBuffers(uint64_t size) {
  std::vector<AlignedBuffer> buffers;
  for (size_t slot = 0; slot < kDepth; ++slot) {
    AlignedBuffer& b = buffers.emplace_back(size);
    uint64_t x = slot * 0x9E3779B97F4A7C15ull + 7;
    for (size_t i = 0; i + 8 <= b.size(); i += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(b.data() + i, &x, 8);
    }
  }
  return buffers;
}

Result<std::unique_ptr<UringSsdDevice>> DirectDevice(const std::string& dir) {
  UringSsdDeviceOptions options;
  options.direct_io = true;
  return UringSsdDevice::Open(dir, options);
}

Status Fail(std::string message) {
  return Status(ErrorReason::kInternal, std::move(message));
}

// `count` records of `record_bytes` through SsdStore on an O_DIRECT
// UringSsdDevice: PutBatch and ReadBatch calls of kDepth records, read into
// aligned buffers (the store's direct path).
class StoreSide {
 public:
  StoreSide(uint64_t record_bytes, uint64_t count)
      : record_bytes_(record_bytes),
        count_(count),
        values_(PatternBuffers(record_bytes)),
        out_(PatternBuffers(record_bytes)) {
    for (uint64_t i = 0; i < count; ++i) {
      keys_.push_back("bench/" + std::to_string(record_bytes) + "/" +
                      std::to_string(i));
    }
  }

  // Opens the store in `dir`, writes every record and syncs; returns GB/s.
  Result<double> Write(const std::string& dir) {
    MT_ASSIGN_OR_RETURN(std::unique_ptr<UringSsdDevice> device,
                        DirectDevice(dir));
    SsdStoreOptions options;
    options.capacity_bytes =
        2 * count_ * (record_bytes_ + (8 << 10)) + (1ull << 30);
    MT_ASSIGN_OR_RETURN(store_, SsdStore::Open(std::move(device), options));
    const auto start = SteadyClock::now();
    for (uint64_t first = 0; first < count_; first += kDepth) {
      std::vector<SsdWrite> batch;
      for (uint64_t i = first; i < std::min(count_, first + kDepth); ++i) {
        batch.push_back({keys_[i], std::nullopt, values_[i % kDepth].span()});
      }
      for (const Status& s : store_->PutBatch(batch)) MT_RETURN_IF_ERROR(s);
    }
    MT_RETURN_IF_ERROR(store_->Sync());
    return Gbps(count_ * record_bytes_, SteadyClock::now() - start);
  }

  // Reads every record back; returns GB/s. Checks the last batch's bytes.
  Result<double> Read() {
    const auto start = SteadyClock::now();
    for (uint64_t first = 0; first < count_; first += kDepth) {
      std::vector<SsdRead> batch;
      for (uint64_t i = first; i < std::min(count_, first + kDepth); ++i) {
        SsdRead& read = batch.emplace_back();
        read.key = keys_[i];
        read.buffer = out_[i - first].span();
      }
      store_->ReadBatch(batch);
      for (const SsdRead& read : batch) MT_RETURN_IF_ERROR(read.status);
    }
    const double gbps =
        Gbps(count_ * record_bytes_, SteadyClock::now() - start);
    for (uint64_t i = (count_ - 1) / kDepth * kDepth; i < count_; ++i) {
      const AlignedBuffer& got = out_[i % kDepth];
      if (!std::equal(got.data(), got.data() + record_bytes_,
                      values_[i % kDepth].data())) {
        return Fail("store read back different bytes for " + keys_[i]);
      }
    }
    return gbps;
  }

  void Close() { store_.reset(); }

 private:
  const uint64_t record_bytes_;
  const uint64_t count_;
  std::vector<AlignedBuffer> values_;
  std::vector<AlignedBuffer> out_;
  std::vector<std::string> keys_;
  std::unique_ptr<SsdStore> store_;
};

// The baseline: the same bytes as sequential O_DIRECT chunks of the record
// size in one file, through the same UringSsdDevice (io_uring, one submit
// per batch of kDepth chunks) but without the store: no records, headers,
// checksums, index or copies.
class RawSide {
 public:
  RawSide(uint64_t record_bytes, uint64_t count)
      : record_bytes_(record_bytes),
        count_(count),
        values_(PatternBuffers(record_bytes)),
        out_(PatternBuffers(record_bytes)) {}

  Result<double> Write(const std::string& dir) {
    MT_ASSIGN_OR_RETURN(device_, DirectDevice(dir));
    MT_ASSIGN_OR_RETURN(file_, device_->Open("raw.data", /*create=*/true));
    const auto start = SteadyClock::now();
    MT_RETURN_IF_ERROR(Run(values_, /*write=*/true));
    MT_RETURN_IF_ERROR(file_->Sync());
    return Gbps(count_ * record_bytes_, SteadyClock::now() - start);
  }

  Result<double> Read() {
    const auto start = SteadyClock::now();
    MT_RETURN_IF_ERROR(Run(out_, /*write=*/false));
    return Gbps(count_ * record_bytes_, SteadyClock::now() - start);
  }

  void Close() {
    file_.reset();
    device_.reset();
  }

 private:
  Status Run(std::vector<AlignedBuffer>& buffers, bool write) {
    for (uint64_t first = 0; first < count_; first += kDepth) {
      std::vector<IoRequest> batch;
      for (uint64_t i = first; i < std::min(count_, first + kDepth); ++i) {
        batch.push_back(
            {i * record_bytes_, buffers[i - first].data(), record_bytes_, 0});
      }
      MT_RETURN_IF_ERROR(write ? file_->WriteBatch(batch)
                               : file_->ReadBatch(batch));
      for (const IoRequest& r : batch) {
        if (r.result != static_cast<ssize_t>(r.len))
          return Fail("short raw I/O");
      }
    }
    return Status::Ok();
  }

  const uint64_t record_bytes_;
  const uint64_t count_;
  std::vector<AlignedBuffer> values_;
  std::vector<AlignedBuffer> out_;
  std::unique_ptr<UringSsdDevice> device_;
  std::unique_ptr<SsdFile> file_;
};

Status RunOneSize(const std::string& root, uint64_t record_bytes,
                  uint64_t count, ResultSink& sink) {
  StoreSide store(record_bytes, count);
  RawSide raw(record_bytes, count);
  MT_ASSIGN_OR_RETURN(const double write_gbps, store.Write(root + "/store"));
  MT_ASSIGN_OR_RETURN(const double raw_write_gbps, raw.Write(root + "/raw"));
  double read_gbps = 0;
  double raw_read_gbps = 0;
  for (int pass = 0; pass < kReadPasses; ++pass) {
    MT_ASSIGN_OR_RETURN(const double s, store.Read());
    MT_ASSIGN_OR_RETURN(const double r, raw.Read());
    read_gbps = std::max(read_gbps, s);
    raw_read_gbps = std::max(raw_read_gbps, r);
  }
  store.Close();
  raw.Close();

  nlohmann::ordered_json result;
  result["scenario"] = "ssd";
  result["record_bytes"] = record_bytes;
  result["write_gbps"] = write_gbps;
  result["read_gbps"] = read_gbps;
  result["raw_write_gbps"] = raw_write_gbps;
  result["raw_read_gbps"] = raw_read_gbps;
  result["read_ratio"] = raw_read_gbps > 0 ? read_gbps / raw_read_gbps : 0.0;
  sink.Emit(result);
  return Status::Ok();
}

}  // namespace

int RunSsdScenario(const CommonOptions& common, ResultSink& sink) {
  std::string root = common.scratch_dir + "/mt-ssd-bench-XXXXXX";
  if (::mkdtemp(root.data()) == nullptr) {
    sink.Progress("ssd: cannot create a temp dir under " + common.scratch_dir);
    return 1;
  }
  const double bytes = static_cast<double>(kBytesPerSize) * common.scale;
  int exit_code = 0;
  for (uint64_t record_bytes : kRecordSizes) {
    const uint64_t count = std::max<uint64_t>(
        kMinRecords,
        static_cast<uint64_t>(bytes / static_cast<double>(record_bytes)));
    sink.Progress("ssd: " + std::to_string(count) + " records of " +
                  std::to_string(record_bytes) + " bytes in " + root);
    const Status status = RunOneSize(root, record_bytes, count, sink);
    std::filesystem::remove_all(root + "/store");
    std::filesystem::remove_all(root + "/raw");
    if (!status.ok()) {
      sink.Progress("ssd: " + status.ToString());
      exit_code = 1;
      break;
    }
  }
  std::filesystem::remove_all(root);
  return exit_code;
}

}  // namespace mooncake_tier::bench
