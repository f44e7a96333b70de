// Same-host shared memory: the remote-key envelope, the node's export lock,
// the client's mapping cache, and UcxTransport taking the memcpy path (or
// falling back to UCX) between an exporter and a client in one process.
// A forked child plays a node in another process where it matters (the
// mapping through /proc/<pid>/fd, the lock vanishing with the process).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "transport/shared_memory_file.h"
#include "transport/shm_export.h"
#include "transport/shm_locator.h"
#include "transport/shm_mapping_cache.h"
#include "transport/ucx_segment_exporter.h"
#include "transport/ucx_transport.h"

namespace mooncake_tier {
namespace shm_transport_test {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kSegmentSize = 8 << 20;

ShmLocator SampleLocator() {
  ShmLocator l;
  for (size_t i = 0; i < l.boot_id.size(); ++i) {
    l.boot_id[i] = static_cast<uint8_t>(i + 1);
    l.token[i] = static_cast<uint8_t>(0xa0 + i);
  }
  l.pid = 4242;
  l.fd = 17;
  l.inode = 99;
  l.file_size = 1 << 20;
  l.file_offset = 4096;
  return l;
}

std::vector<std::byte> Pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> out(size);
  std::mt19937 rng(seed);
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

void PutU32At(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

TEST(ShmLocatorTest, EnvelopeRoundTrips) {
  const std::string ucx_key("\x03\x00\x00\x00rkey-bytes", 14);
  const std::string envelope = EncodeShmEnvelope(SampleLocator(), ucx_key);
  Result<DecodedRemoteKey> decoded = DecodeRemoteKey(envelope);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->ucx_key, ucx_key);
  ASSERT_TRUE(decoded->locator.has_value()) << decoded->ignored_locator;
  EXPECT_EQ(*decoded->locator, SampleLocator());
}

TEST(ShmLocatorTest, RawUcxKeysPassThroughWhole) {
  for (const std::string& raw :
       {std::string("\x01\x00\x00\x00\x00\x00\x00\x00xyz", 11),
        std::string("short"), std::string(1, '\x89')}) {
    Result<DecodedRemoteKey> decoded = DecodeRemoteKey(raw);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(decoded->ucx_key, raw);
    EXPECT_FALSE(decoded->locator.has_value());
  }
}

TEST(ShmLocatorTest, BrokenFramingIsRefusedNeverTrusted) {
  const std::string envelope = EncodeShmEnvelope(SampleLocator(), "key");
  // Every truncation past the magic.
  for (size_t n = 8; n < envelope.size(); ++n) {
    Result<DecodedRemoteKey> decoded =
        DecodeRemoteKey(std::string_view(envelope).substr(0, n));
    ASSERT_FALSE(decoded.ok()) << n;
    EXPECT_EQ(decoded.status().reason(), ErrorReason::kInvalidArgument);
  }
  EXPECT_FALSE(DecodeRemoteKey(envelope + "x").ok());
  EXPECT_FALSE(DecodeRemoteKey(EncodeShmEnvelope(SampleLocator(), "")).ok());
  // A locator length that points past the end.
  std::string huge = envelope;
  PutU32At(huge, 12, 0xffffffffu);
  EXPECT_FALSE(DecodeRemoteKey(huge).ok());
  // Random corruption: any answer, but no crash and no out-of-range key.
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string bad = envelope;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bad[8 + rng() % (bad.size() - 8)] = static_cast<char>(rng());
    }
    Result<DecodedRemoteKey> decoded = DecodeRemoteKey(bad);
    if (decoded.ok()) {
      EXPECT_GE(decoded->ucx_key.data(), bad.data());
      EXPECT_LE(decoded->ucx_key.data() + decoded->ucx_key.size(),
                bad.data() + bad.size());
    }
  }
}

TEST(ShmLocatorTest, UnknownOrBadLocatorsAreIgnoredAndTheKeyKept) {
  std::string newer = EncodeShmEnvelope(SampleLocator(), "key");
  newer[8] = 2;  // version 2
  Result<DecodedRemoteKey> decoded = DecodeRemoteKey(newer);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->ucx_key, "key");
  EXPECT_FALSE(decoded->locator.has_value());
  EXPECT_NE(decoded->ignored_locator.find("version"), std::string::npos);

  ShmLocator no_host = SampleLocator();
  no_host.boot_id = BootId{};
  ShmLocator bad_offset = SampleLocator();
  bad_offset.file_offset = bad_offset.file_size + 1;
  ShmLocator no_fd = SampleLocator();
  no_fd.fd = -1;
  for (const ShmLocator& l : {no_host, bad_offset, no_fd}) {
    const std::string envelope = EncodeShmEnvelope(l, "key");
    decoded = DecodeRemoteKey(envelope);  // views into `envelope`
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(decoded->ucx_key, "key");
    EXPECT_FALSE(decoded->locator.has_value());
    EXPECT_FALSE(decoded->ignored_locator.empty());
  }
}

TEST(ShmLocatorTest, NamesCarryTheTokenAndHostHasABootId) {
  Result<ShmToken> a = NewShmToken();
  Result<ShmToken> b = NewShmToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  const std::string name = ShmFileName(*a);
  EXPECT_EQ(name.size(), kShmNamePrefix.size() + 32);
  EXPECT_EQ(name.rfind(kShmNamePrefix, 0), 0u);
  EXPECT_NE(HostBootId(), BootId{});
}

// A child process that opens its own description of `fd` (inherited) and
// holds the export lock on it, like a node; reports its descriptor.
class ForkedNode {
 public:
  explicit ForkedNode(int fd) {
    // Built before fork: the child only makes system calls.
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int to_parent[2];
    if (pipe(to_parent) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(to_parent[0]);
      int own = open(path, O_RDWR | O_CLOEXEC);
      struct flock lock {};
      lock.l_type = F_RDLCK;
      lock.l_whence = SEEK_SET;
      lock.l_len = 1;
      if (own < 0 || fcntl(own, F_OFD_SETLK, &lock) != 0) own = -1;
      (void)!write(to_parent[1], &own, sizeof(own));
      for (;;) pause();
    }
    close(to_parent[1]);
    if (pid_ > 0 && read(to_parent[0], &fd_, sizeof(fd_)) != sizeof(fd_)) {
      fd_ = -1;
    }
    close(to_parent[0]);
  }
  ~ForkedNode() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  int fd() const { return fd_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

// What a client is given for a segment that `node` exports from `mine`.
std::pair<ShmLocator, SegmentEndpoint> SegmentOf(
    const ForkedNode& node, const SharedMemoryFile::Opened& mine,
    uint64_t size) {
  ShmLocator locator = mine.locator;
  locator.pid = static_cast<uint32_t>(node.pid());
  locator.fd = node.fd();
  SegmentEndpoint segment;
  segment.size = size;
  segment.remote_key = EncodeShmEnvelope(locator, "k");
  return {locator, segment};
}

TEST(ShmMappingCacheTest, MapsAnotherProcessSegmentAndSeesItDie) {
  Result<std::unique_ptr<SharedMemoryFile>> file =
      SharedMemoryFile::Create(1 << 20, false);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<SharedMemoryFile::Opened> mine =
      SharedMemoryFile::OpenForExport((*file)->base(), (*file)->size());
  ASSERT_TRUE(mine.ok());
  ForkedNode node(mine->fd);
  ASSERT_GT(node.pid(), 0);
  ASSERT_GE(node.fd(), 0);

  const auto [locator, segment] = SegmentOf(node, *mine, (*file)->size());

  // A locator naming the right process but the wrong token, or the right
  // token in a process that never had the file, is refused.
  ShmLocator wrong_token = locator;
  wrong_token.token[0] ^= 1;
  SegmentEndpoint wrong = segment;
  wrong.remote_key = EncodeShmEnvelope(wrong_token, "k");
  ShmMappingCache cache(4);
  EXPECT_EQ(cache.Find(wrong, wrong_token).mapping, nullptr);
  ShmLocator wrong_pid = locator;
  wrong_pid.pid = static_cast<uint32_t>(getppid());
  wrong.remote_key = EncodeShmEnvelope(wrong_pid, "k");
  EXPECT_EQ(cache.Find(wrong, wrong_pid).mapping, nullptr);
  EXPECT_EQ(cache.stats().map_failures, 2u);

  ShmMappingCache::Found found = cache.Find(segment, locator);
  ASSERT_NE(found.mapping, nullptr);
  std::memcpy(found.mapping->segment() + 100, "hello", 5);
  EXPECT_EQ(std::memcmp((*file)->base() + 100, "hello", 5), 0);
  EXPECT_TRUE(*found.mapping->IsExported());
  EXPECT_EQ(cache.Find(segment, locator).mapping, found.mapping);  // cached

  node.Kill();
  EXPECT_FALSE(*found.mapping->IsExported());
  // The sweep lets the dead node's memory go without a transfer to it;
  // from then on the segment is known to be gone.
  cache.SweepIfDue();
  EXPECT_EQ(cache.stats().gone, 1u);
  EXPECT_EQ(cache.stats().live, 0u);
  ShmMappingCache::Found after = cache.Find(segment, locator);
  EXPECT_EQ(after.mapping, nullptr);
  EXPECT_TRUE(after.gone);
  close(mine->fd);
}

TEST(ShmMappingCacheTest, PopulatesOnlyThePagesTheNodeHolds) {
  Result<std::unique_ptr<SharedMemoryFile>> file =
      SharedMemoryFile::Create(1 << 20, false);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // The node has written two pages of its 1 MiB.
  (*file)->base()[0] = std::byte{1};
  (*file)->base()[10 * page] = std::byte{2};
  Result<SharedMemoryFile::Opened> mine =
      SharedMemoryFile::OpenForExport((*file)->base(), (*file)->size());
  ASSERT_TRUE(mine.ok());
  const auto allocated = [&] {
    struct stat st {};
    fstat(mine->fd, &st);
    return static_cast<uint64_t>(st.st_blocks) * 512;
  };
  ASSERT_EQ(allocated(), 2 * page);
  ForkedNode node(mine->fd);
  ASSERT_GT(node.pid(), 0);
  ASSERT_GE(node.fd(), 0);
  const auto [locator, segment] = SegmentOf(node, *mine, (*file)->size());

  ShmMappingCache cache(4);
  ASSERT_NE(cache.Find(segment, locator).mapping, nullptr);
  for (int i = 0; i < 1000 && cache.stats().populated_bytes < 2 * page; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(cache.stats().populated_bytes, 2 * page);
  EXPECT_EQ(allocated(), 2 * page);  // nothing allocated on our account

  // The node holds two more pages: the next sweep passes again.
  (*file)->base()[20 * page] = std::byte{3};
  (*file)->base()[30 * page] = std::byte{4};
  std::this_thread::sleep_for(ShmMappingCache::kSweepInterval);
  cache.SweepIfDue();
  for (int i = 0; i < 1000 && cache.stats().populated_bytes < 6 * page; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(cache.stats().populated_bytes, 6 * page);
  EXPECT_EQ(allocated(), 4 * page);
  close(mine->fd);
}

TEST(ShmMappingCacheTest, ExportLockGoesWithTheExport) {
  Result<std::unique_ptr<SharedMemoryFile>> file =
      SharedMemoryFile::Create(1 << 20, false);
  ASSERT_TRUE(file.ok());
  Result<std::unique_ptr<ShmExport>> share =
      ShmExport::Create((*file)->base(), (*file)->size());
  ASSERT_TRUE(share.ok()) << share.status().ToString();
  Result<SharedMemoryFile::Opened> probe =
      SharedMemoryFile::OpenForExport((*file)->base(), 1);
  ASSERT_TRUE(probe.ok());
  EXPECT_TRUE(*ShmFileIsExported(probe->fd));
  share->reset();
  EXPECT_FALSE(*ShmFileIsExported(probe->fd));
  close(probe->fd);
  // Memory outside any shared file cannot be exported this way.
  std::vector<std::byte> heap(4096);
  EXPECT_EQ(ShmExport::Create(heap.data(), heap.size()).status().reason(),
            ErrorReason::kNotApplicable);
}

// Exporter and client in one process with UCX pinned to TCP, as in
// ucx_transport_test; the node's segment lives in a SharedMemoryFile.
class ShmTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SharedMemoryFile>> file =
        SharedMemoryFile::Create(kSegmentSize, false);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    file_ = std::move(*file);
    exporter_ = MakeExporter(true);
    ASSERT_NE(exporter_, nullptr);
    Result<SegmentEndpoint> endpoint =
        exporter_->Export("node-1", file_->base(), file_->size(), nullptr);
    ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
    endpoint_ = *endpoint;
  }

  static std::unique_ptr<UcxSegmentExporter> MakeExporter(bool shared) {
    UcxExporterOptions options;
    options.transports = "tcp";
    options.shared_memory = shared;
    Result<std::unique_ptr<UcxSegmentExporter>> exporter =
        UcxSegmentExporter::Create(options);
    EXPECT_TRUE(exporter.ok()) << exporter.status().ToString();
    return exporter.ok() ? std::move(*exporter) : nullptr;
  }

  static std::unique_ptr<UcxTransport> MakeClient(bool shared,
                                                  size_t max_mappings = 64) {
    UcxTransportOptions options;
    options.transports = "tcp";
    options.timeout = milliseconds(3000);
    options.shared_memory = shared;
    options.max_shared_mappings = max_mappings;
    Result<std::unique_ptr<UcxTransport>> client =
        UcxTransport::Create(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  static Status Write(UcxTransport& client, const SegmentEndpoint& segment,
                      uint64_t offset, std::span<std::byte> data) {
    SegmentTransfer op{&segment, offset, data};
    return client.Write({&op, 1})[0];
  }
  static Status Read(UcxTransport& client, const SegmentEndpoint& segment,
                     uint64_t offset, std::span<std::byte> data) {
    SegmentTransfer op{&segment, offset, data};
    return client.Read({&op, 1})[0];
  }

  // Writes and reads back a pattern at `offset`; checks the node's memory.
  void RoundTrip(UcxTransport& client, const SegmentEndpoint& segment,
                 uint64_t offset, size_t size, uint32_t seed) {
    std::vector<std::byte> data = Pattern(size, seed);
    ASSERT_TRUE(Write(client, segment, offset, data).ok());
    EXPECT_EQ(std::memcmp(file_->base() + offset, data.data(), size), 0);
    std::vector<std::byte> back(size);
    ASSERT_TRUE(Read(client, segment, offset, back).ok());
    EXPECT_EQ(back, data);
  }

  std::unique_ptr<SharedMemoryFile> file_;
  std::unique_ptr<UcxSegmentExporter> exporter_;
  SegmentEndpoint endpoint_;
};

TEST_F(ShmTransportTest, SameHostTransfersAreCopiedThroughSharedMemory) {
  Result<UcxSegmentServerStats> server = exporter_->StatsFor("node-1");
  ASSERT_TRUE(server.ok());
  EXPECT_TRUE(server->shared_memory);
  Result<DecodedRemoteKey> key = DecodeRemoteKey(endpoint_.remote_key);
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(key->locator.has_value());
  EXPECT_EQ(key->locator->pid, static_cast<uint32_t>(getpid()));

  std::unique_ptr<UcxTransport> client = MakeClient(true);
  uint64_t offset = 0;
  uint32_t seed = 1;
  for (size_t size : {size_t{1}, size_t{4096}, size_t{1} << 20}) {
    RoundTrip(*client, endpoint_, offset, size, seed++);
    offset += size;
  }
  // A batch over both paths' validation: one bad transfer, two good ones.
  std::vector<std::byte> a = Pattern(64, 9), b = Pattern(64, 10);
  std::vector<std::byte> c(64);
  SegmentTransfer ops[3] = {{&endpoint_, 0, a},
                            {&endpoint_, kSegmentSize - 10, c},
                            {&endpoint_, 4096, b}};
  std::vector<Status> statuses = client->Write(ops);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[1].reason(), ErrorReason::kInvalidArgument);
  EXPECT_TRUE(statuses[2].ok());

  const UcxTransportStats stats = client->stats();
  EXPECT_EQ(stats.shm_writes, 5u);
  EXPECT_EQ(stats.shm_reads, 3u);
  EXPECT_EQ(stats.ucx_transfers, 0u);
  EXPECT_EQ(stats.shm.mapped, 1u);
  EXPECT_EQ(stats.shm.live, 1u);
}

TEST_F(ShmTransportTest, EitherSideCanTurnItOff) {
  std::unique_ptr<UcxTransport> ucx_only = MakeClient(false);
  RoundTrip(*ucx_only, endpoint_, 0, 1 << 16, 3);
  EXPECT_EQ(ucx_only->stats().shm_writes + ucx_only->stats().shm_reads, 0u);
  EXPECT_EQ(ucx_only->stats().ucx_transfers, 2u);

  std::unique_ptr<UcxSegmentExporter> plain = MakeExporter(false);
  Result<SegmentEndpoint> endpoint =
      plain->Export("node-2", file_->base(), file_->size(), nullptr);
  ASSERT_TRUE(endpoint.ok());
  EXPECT_FALSE(plain->StatsFor("node-2")->shared_memory);
  Result<DecodedRemoteKey> key = DecodeRemoteKey(endpoint->remote_key);
  ASSERT_TRUE(key.ok());
  EXPECT_FALSE(key->locator.has_value());
  EXPECT_EQ(key->ucx_key, endpoint->remote_key);  // the plain UCX key
  std::unique_ptr<UcxTransport> client = MakeClient(true);
  RoundTrip(*client, *endpoint, 8192, 1 << 16, 4);
  EXPECT_EQ(client->stats().ucx_transfers, 2u);
  EXPECT_EQ(client->stats().shm.mapped, 0u);
}

TEST_F(ShmTransportTest, BogusLocatorsFallBackToUcx) {
  Result<DecodedRemoteKey> key = DecodeRemoteKey(endpoint_.remote_key);
  ASSERT_TRUE(key.ok() && key->locator.has_value());
  const std::string ucx_key(key->ucx_key);
  ShmLocator other_host = *key->locator;
  other_host.boot_id[0] ^= 1;
  ShmLocator wrong_token = *key->locator;
  wrong_token.token[5] ^= 1;
  ShmLocator wrong_fd = *key->locator;
  wrong_fd.fd = 0;  // stdin: some other file
  ShmLocator wrong_size = *key->locator;
  wrong_size.file_size += 4096;
  ShmLocator dead_pid = *key->locator;
  dead_pid.pid = 0x3ffffff0;  // beyond pid_max
  std::unique_ptr<UcxTransport> client = MakeClient(true);
  uint32_t seed = 20;
  for (const ShmLocator& l :
       {other_host, wrong_token, wrong_fd, wrong_size, dead_pid}) {
    SegmentEndpoint bogus = endpoint_;
    bogus.remote_key = EncodeShmEnvelope(l, ucx_key);
    RoundTrip(*client, bogus, 0, 4096, seed++);
  }
  std::string unknown = endpoint_.remote_key;
  unknown[8] = 7;  // a locator version from the future
  SegmentEndpoint future = endpoint_;
  future.remote_key = unknown;
  RoundTrip(*client, future, 0, 4096, seed++);

  const UcxTransportStats stats = client->stats();
  EXPECT_EQ(stats.shm_reads + stats.shm_writes, 0u);
  EXPECT_EQ(stats.ucx_transfers, 12u);
  EXPECT_EQ(stats.shm.map_failures, 5u);
  EXPECT_EQ(stats.shm.live, 0u);
}

TEST_F(ShmTransportTest, MalformedEnvelopeIsRefusedAndTheRestOfTheBatchRuns) {
  SegmentEndpoint broken = endpoint_;
  broken.remote_key.resize(broken.remote_key.size() - 3);
  std::unique_ptr<UcxTransport> client = MakeClient(true);
  std::vector<std::byte> a = Pattern(128, 1), b = Pattern(128, 2);
  SegmentTransfer ops[2] = {{&broken, 0, a}, {&endpoint_, 0, b}};
  std::vector<Status> statuses = client->Write(ops);
  EXPECT_EQ(statuses[0].reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(statuses[0].message().find("envelope"), std::string::npos);
  EXPECT_TRUE(statuses[1].ok());
  EXPECT_EQ(std::memcmp(file_->base(), b.data(), b.size()), 0);
}

TEST_F(ShmTransportTest, WithdrawnSegmentIsRefusedAtOnce) {
  std::unique_ptr<UcxTransport> client = MakeClient(true);
  RoundTrip(*client, endpoint_, 0, 4096, 5);
  exporter_->Withdraw(endpoint_);
  std::vector<std::byte> data = Pattern(4096, 6);
  const auto start = std::chrono::steady_clock::now();
  Status write = Write(*client, endpoint_, 0, data);
  EXPECT_EQ(write.reason(), ErrorReason::kUnavailable) << write.ToString();
  Status read = Read(*client, endpoint_, 0, data);
  EXPECT_EQ(read.reason(), ErrorReason::kUnavailable) << read.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  EXPECT_EQ(client->stats().shm.gone, 1u);
  EXPECT_EQ(client->stats().shm.live, 0u);
  EXPECT_EQ(client->stats().ucx_transfers, 0u);
}

TEST_F(ShmTransportTest, MappingsStayWithinTheirBound) {
  Result<std::unique_ptr<SharedMemoryFile>> second =
      SharedMemoryFile::Create(1 << 20, false);
  ASSERT_TRUE(second.ok());
  Result<SegmentEndpoint> other = exporter_->Export("node-2", (*second)->base(),
                                                    (*second)->size(), nullptr);
  ASSERT_TRUE(other.ok());
  std::unique_ptr<UcxTransport> client = MakeClient(true, /*max_mappings=*/1);
  for (int round = 0; round < 3; ++round) {
    RoundTrip(*client, endpoint_, 0, 4096, 30 + round);
    std::vector<std::byte> data = Pattern(4096, 40 + round);
    ASSERT_TRUE(Write(*client, *other, 0, data).ok());
    EXPECT_EQ(std::memcmp((*second)->base(), data.data(), data.size()), 0);
  }
  const UcxTransportStats stats = client->stats();
  EXPECT_EQ(stats.shm.live, 1u);
  EXPECT_EQ(stats.shm.mapped, 6u);
  EXPECT_EQ(stats.shm.evicted, 5u);
  EXPECT_EQ(stats.ucx_transfers, 0u);
  exporter_->Withdraw(*other);
}

}  // namespace
}  // namespace shm_transport_test
}  // namespace mooncake_tier
