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

using SteadyClock = std::chrono::steady_clock;

struct Throughput {
  double write_gbps = 0;
  double read_gbps = 0;
};

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

std::vector<AlignedBuffer> EmptyBuffers(uint64_t size) {
  std::vector<AlignedBuffer> buffers;
  for (size_t slot = 0; slot < kDepth; ++slot) buffers.emplace_back(size);
  return buffers;
}

std::string Key(uint64_t record_bytes, uint64_t i) {
  return "bench/" + std::to_string(record_bytes) + "/" + std::to_string(i);
}

Result<std::unique_ptr<UringSsdDevice>> DirectDevice(const std::string& dir) {
  UringSsdDeviceOptions options;
  options.direct_io = true;
  return UringSsdDevice::Open(dir, options);
}

Status Fail(std::string message) {
  return Status(ErrorReason::kInternal, std::move(message));
}

// Writes `count` records through SsdStore in PutBatch calls of kDepth, syncs,
// then reads them all back in ReadBatch calls of kDepth into aligned buffers
// (the store's direct path) and checks the bytes.
Result<Throughput> RunStore(const std::string& dir, uint64_t record_bytes,
                            uint64_t count) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<UringSsdDevice> device, DirectDevice(dir));
  SsdStoreOptions options;
  options.capacity_bytes = 2 * count * (record_bytes + (8 << 10)) + (1ull << 30);
  MT_ASSIGN_OR_RETURN(std::unique_ptr<SsdStore> store,
                      SsdStore::Open(std::move(device), options));
  const std::vector<AlignedBuffer> values = PatternBuffers(record_bytes);
  std::vector<AlignedBuffer> out = EmptyBuffers(record_bytes);
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < count; ++i) keys.push_back(Key(record_bytes, i));
  const uint64_t total = count * record_bytes;
  Throughput t;

  auto start = SteadyClock::now();
  for (uint64_t first = 0; first < count; first += kDepth) {
    std::vector<SsdWrite> batch;
    for (uint64_t i = first; i < std::min(count, first + kDepth); ++i) {
      batch.push_back({keys[i], std::nullopt, values[i % kDepth].span()});
    }
    for (const Status& s : store->PutBatch(batch)) MT_RETURN_IF_ERROR(s);
  }
  MT_RETURN_IF_ERROR(store->Sync());
  t.write_gbps = Gbps(total, SteadyClock::now() - start);

  start = SteadyClock::now();
  for (uint64_t first = 0; first < count; first += kDepth) {
    std::vector<SsdRead> batch;
    for (uint64_t i = first; i < std::min(count, first + kDepth); ++i) {
      SsdRead& read = batch.emplace_back();
      read.key = keys[i];
      read.buffer = out[i - first].span();
    }
    store->ReadBatch(batch);
    for (const SsdRead& read : batch) MT_RETURN_IF_ERROR(read.status);
  }
  t.read_gbps = Gbps(total, SteadyClock::now() - start);
  // The last batch is still in `out`: it must be what was written.
  for (uint64_t i = (count - 1) / kDepth * kDepth; i < count; ++i) {
    const AlignedBuffer& got = out[i % kDepth];
    if (!std::equal(got.data(), got.data() + record_bytes,
                    values[i % kDepth].data())) {
      return Fail("store read back different bytes for " + keys[i]);
    }
  }
  return t;
}

// The baseline: the same bytes as sequential O_DIRECT chunks of the record
// size in one file, through the same UringSsdDevice (io_uring, one submit
// per batch of kDepth chunks) but without the store: no records, headers,
// checksums, index or copies.
Result<Throughput> RunRaw(const std::string& dir, uint64_t record_bytes,
                          uint64_t count) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<UringSsdDevice> device, DirectDevice(dir));
  MT_ASSIGN_OR_RETURN(std::unique_ptr<SsdFile> file,
                      device->Open("raw.data", /*create=*/true));
  std::vector<AlignedBuffer> values = PatternBuffers(record_bytes);
  std::vector<AlignedBuffer> out = EmptyBuffers(record_bytes);
  const uint64_t total = count * record_bytes;
  Throughput t;

  auto run = [&](std::vector<AlignedBuffer>& buffers, bool write) -> Status {
    for (uint64_t first = 0; first < count; first += kDepth) {
      std::vector<IoRequest> batch;
      for (uint64_t i = first; i < std::min(count, first + kDepth); ++i) {
        batch.push_back({i * record_bytes, buffers[i - first].data(),
                         record_bytes, 0});
      }
      MT_RETURN_IF_ERROR(write ? file->WriteBatch(batch) : file->ReadBatch(batch));
      for (const IoRequest& r : batch) {
        if (r.result != static_cast<ssize_t>(r.len)) return Fail("short raw I/O");
      }
    }
    return Status::Ok();
  };
  auto start = SteadyClock::now();
  MT_RETURN_IF_ERROR(run(values, /*write=*/true));
  MT_RETURN_IF_ERROR(file->Sync());
  t.write_gbps = Gbps(total, SteadyClock::now() - start);
  start = SteadyClock::now();
  MT_RETURN_IF_ERROR(run(out, /*write=*/false));
  t.read_gbps = Gbps(total, SteadyClock::now() - start);
  return t;
}

Status RunOneSize(const std::string& root, uint64_t record_bytes,
                  uint64_t count, ResultSink& sink) {
  const std::string store_dir = root + "/store";
  const std::string raw_dir = root + "/raw";
  Result<Throughput> store = RunStore(store_dir, record_bytes, count);
  std::filesystem::remove_all(store_dir);
  MT_RETURN_IF_ERROR(store.status());
  Result<Throughput> raw = RunRaw(raw_dir, record_bytes, count);
  std::filesystem::remove_all(raw_dir);
  MT_RETURN_IF_ERROR(raw.status());

  nlohmann::ordered_json result;
  result["scenario"] = "ssd";
  result["record_bytes"] = record_bytes;
  result["write_gbps"] = store->write_gbps;
  result["read_gbps"] = store->read_gbps;
  result["raw_write_gbps"] = raw->write_gbps;
  result["raw_read_gbps"] = raw->read_gbps;
  result["read_ratio"] =
      raw->read_gbps > 0 ? store->read_gbps / raw->read_gbps : 0.0;
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
        kMinRecords, static_cast<uint64_t>(bytes / static_cast<double>(record_bytes)));
    sink.Progress("ssd: " + std::to_string(count) + " records of " +
                  std::to_string(record_bytes) + " bytes in " + root);
    const Status status = RunOneSize(root, record_bytes, count, sink);
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
