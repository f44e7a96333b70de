#pragma once

// The crash-safe SSD store of a node (the L2 tier): values by key in
// append-only data files of checksummed records (node/ssd_record.h), with an
// in-memory index rebuilt by scanning the files at Open. Format, recovery
// and compaction are described in docs/design/ssd-store.md.
//
// Guarantees:
// - A value that Put returned OK for is served byte-identical by Get until it
//   is overwritten or removed, also after a restart or a `kill -9` (after a
//   power loss only once Sync returned OK).
// - A corrupt record is detected (checksums), counted and never served, nor
//   is an older version of its key; TakeCorruptKeys reports its key when the
//   key is still readable. A torn tail (an append cut short by a crash, never
//   acknowledged) is counted and cut off at Open.
// - A removed key stays removed after a restart (tombstones).
// - The data files together never exceed options.capacity_bytes.
//
// Thread safety: every method may be called from any number of threads at
// once. The index lock is held only for lookups and updates, never across
// I/O. Operations on one key are applied in the order their writes were
// admitted, so the index and a later recovery scan agree on the winner.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "base/latency_histogram.h"
#include "base/mutex.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"
#include "node/aligned_buffer.h"
#include "node/aligned_buffer_pool.h"
#include "node/ssd_device.h"
#include "node/ssd_file_scanner.h"
#include "node/ssd_record.h"

namespace mooncake_tier {

struct SsdStoreOptions {
  // Limit on the bytes of all data files together (records, padding, dead
  // records awaiting compaction); never exceeded. A file system with less
  // room than that caps it further: the store looks at its free space (at
  // most every second, and at once when a write finds it full) and counts
  // only what its files hold plus what the file system can still give. Puts
  // stop short of it by a headroom that only removes (tombstones) and
  // compaction may use, so that a full store can always be emptied: room to
  // compact one file
  // ((1 - compaction_min_dead_ratio) * max_file_bytes) plus capacity / 512
  // (at most 64 MiB) for tombstones, in all at most half the capacity:
  // under 1 % of a store of 512 MiB or more.
  // SsdStoreStats::put_limit_bytes tells where puts stop.
  // REQUIRES: > 0.
  uint64_t capacity_bytes = 0;
  // A new data file is started when a record would take the active one past
  // this; a larger record gets a file of its own. Capped at capacity / 128
  // (but at least 1 MiB, or capacity / 16 under 16 MiB, and at least 4096)
  // to keep the compaction headroom small, with the
  // capacity the file system allows (a store on a small file system gets
  // small files: only sealed files can be compacted). Small files also let
  // eviction in log order empty whole files (eviction-policy.md).
  // Default: 256 MiB. REQUIRES: >= 4096.
  uint64_t max_file_bytes = 256ull << 20;
  // CompactStep only compacts sealed files with at least this share of dead
  // bytes (tombstones count as live here: they may have to move).
  // Default: 0.25. REQUIRES: in (0, 1].
  double compaction_min_dead_ratio = 0.25;
  // How often the store looks at its file system's free space (and after
  // every write it refused for room). Default: 1 s.
  std::chrono::milliseconds space_check_interval{1000};
};

struct SsdWrite {
  std::string_view key;
  std::optional<GroupSpec> group;
  std::span<const std::byte> value;  // may be empty
};

struct SsdRead {
  std::string_view key;
  std::span<std::byte> buffer;  // receives the value; unspecified on error
  Status status;                // out
  uint64_t size = 0;            // out: value size (also on BUFFER_TOO_SMALL)
};

struct SsdRecordInfo {
  std::string key;
  uint64_t size = 0;
  std::optional<GroupSpec> group;
};

// Bucket bounds of the store's batch latency histograms. Chosen for SSD
// batches: a page-cache hit is microseconds, an io_uring batch on a loaded
// device milliseconds, a stalled device seconds.
inline constexpr LatencyBounds kIoLatencyBounds = {
    std::chrono::microseconds(10),      std::chrono::microseconds(25),
    std::chrono::microseconds(50),      std::chrono::microseconds(100),
    std::chrono::microseconds(250),     std::chrono::microseconds(500),
    std::chrono::microseconds(1000),    std::chrono::microseconds(2500),
    std::chrono::microseconds(5000),    std::chrono::microseconds(10000),
    std::chrono::microseconds(25000),   std::chrono::microseconds(50000),
    std::chrono::microseconds(100000),  std::chrono::microseconds(250000),
    std::chrono::microseconds(1000000), std::chrono::microseconds(2500000)};

struct SsdStoreStats {
  uint64_t live_records = 0;
  uint64_t live_bytes = 0;  // value bytes of live records
  // What the live records take in the files (headers, keys, alignment):
  // live_record_bytes / live_bytes is the store's overhead per value byte.
  uint64_t live_record_bytes = 0;
  uint64_t file_bytes = 0;  // bytes in data files, dead records too
  // The configured cap, and what the store may fill now: the cap, or less
  // when the file system has less room (file_bytes plus its free space).
  uint64_t configured_capacity_bytes = 0;
  uint64_t capacity_bytes = 0;
  uint64_t put_limit_bytes = 0;  // file_bytes beyond which puts get NO_SPACE
  // The file system's free space when last looked at (UINT64_MAX: no limit
  // known).
  uint64_t filesystem_free_bytes = 0;
  uint64_t no_space_refusals = 0;  // writes refused: store or disk full
  uint64_t owed_tombstones = 0;    // removals done, tombstone not yet written
  uint64_t records_written = 0;    // by PutBatch
  uint64_t bytes_written = 0;      // value bytes, by PutBatch
  // Every byte written to the data files: records of puts and removals,
  // compaction's copies, padding. Over bytes_written: the store's write
  // amplification.
  uint64_t device_bytes_written = 0;
  uint64_t records_read = 0;
  uint64_t bytes_read = 0;
  uint64_t corrupt_records = 0;  // checksum failures seen at scan or read
  uint64_t torn_records = 0;     // torn tails and never-written holes
  uint64_t compactions = 0;
  uint64_t compacted_bytes_reclaimed = 0;
  uint64_t read_errors = 0;
  uint64_t write_errors = 0;
  // Device time of each read batch (ReadBatch) and put round (PutBatch)
  // that did I/O: one sample per batch, not per record. A put round's
  // sample is its device write only (not admission or encoding).
  LatencySnapshot read_latency;
  LatencySnapshot write_latency;
};

class SsdStore {
 public:
  // Scans every data file of `device`, truncates torn tails, rebuilds the
  // index and starts a fresh active file. INVALID_ARGUMENT for bad options,
  // IO_ERROR when the device fails.
  static Result<std::unique_ptr<SsdStore>> Open(
      std::unique_ptr<SsdDevice> device, SsdStoreOptions options);

  ~SsdStore();
  SsdStore(const SsdStore&) = delete;
  SsdStore& operator=(const SsdStore&) = delete;

  // Stores every write; one status per write, in order. Overwriting a key is
  // allowed (the old record turns dead; the later write of a batch wins).
  // INVALID_KEY (empty, longer than kMaxKeyBytes, or with NUL), INVALID_GROUP,
  // INVALID_SIZE, NO_SPACE (also after trying compaction; nothing changed),
  // IO_ERROR.
  std::vector<Status> PutBatch(std::span<const SsdWrite> writes);

  // Reads every key into its buffer; fills status and size of each read.
  // OBJECT_NOT_FOUND, INVALID_KEY, BUFFER_TOO_SMALL (size still filled),
  // CHECKSUM_MISMATCH (the record is dropped, counted, reported by
  // TakeCorruptKeys and never served again), IO_ERROR.
  void ReadBatch(std::span<SsdRead> reads);

  // Removes every key, writing tombstones so that it stays removed after a
  // restart (a batch's removals share tombstone records: about a hundred
  // bytes each, not a block). OBJECT_NOT_FOUND if absent, INVALID_KEY,
  // IO_ERROR. When the store has no room for the tombstone (its limit, or
  // the file system refusing the write), the keys are removed all the same
  // and their tombstones owed: a full store must still free what it is told
  // to free, or it holds records nobody wants and never gets room again.
  // Owed tombstones are written by the next removal batch or compaction
  // that finds room, and dropped for records compaction erased meanwhile;
  // until then a crash brings such a record back at the next Open.
  std::vector<Status> RemoveBatch(std::span<const std::string_view> keys);

  // Writes owed tombstones (RemoveBatch) that are still needed, as far as
  // room allows; the rest stay owed.
  void WriteOwedTombstones();

  // Batches of one.
  Status Put(std::string_view key, std::span<const std::byte> value,
             std::optional<GroupSpec> group = {});
  // Returns the value size.
  Result<uint64_t> Get(std::string_view key, std::span<std::byte> buffer);
  Status Remove(std::string_view key);

  std::optional<uint64_t> ValueSize(std::string_view key) const;

  // Every live record (what a node reports to the master on registration).
  std::vector<SsdRecordInfo> Inventory() const;

  // Keys found corrupt (at the Open scan, by reads or by compaction) since
  // the last call.
  std::vector<std::string> TakeCorruptKeys();

  // Compacts at most one sealed file whose dead ratio is at least
  // compaction_min_dead_ratio (or `min_dead_ratio`), the most dead first,
  // among those whose live records fit in the free space: rewrites its live
  // records into the active file and deletes it. True if it did work.
  // NO_SPACE or IO_ERROR if it had to stop (what it moved stays valid).
  Result<bool> CompactStep();
  Result<bool> CompactStep(double min_dead_ratio);
  // The dead-ratio bar compaction lowers to when room is short, and, when
  // a put waits for room, lower still.
  static constexpr double kPressureDeadRatio = 0.2;
  static constexpr double kUrgentDeadRatio = 0.05;
  // The files are at 90% of where puts stop or beyond: compaction should
  // not wait for the store to be idle (a store the master keeps full lives
  // there).
  bool UnderPressure() const;

  // Makes every completed write durable, including file creations and
  // removals.
  Status Sync();

  SsdStoreStats stats() const;

 private:
  // Where the live record of a key is.
  struct IndexEntry {
    uint32_t file = 0;  // data file number
    uint64_t offset = 0;
    uint64_t sequence = 0;
    uint64_t value_len = 0;
    uint64_t record_bytes = 0;
    std::optional<GroupSpec> group;
  };

  struct DataFile {
    std::shared_ptr<SsdFile> file;  // readers hold a copy across their I/O
    uint64_t size = 0;              // bytes admitted (written or in flight)
    uint64_t live_bytes = 0;        // bytes of records the index points at
    uint64_t tombstone_bytes = 0;   // bytes of tombstone records in the file
    // Hashes of every key with a record (live, dead or tombstone) in the
    // file: a tombstone is carried forward by compaction only while an
    // older file may still hold its key.
    absl::flat_hash_set<uint64_t> key_hashes;
    bool dirty = false;  // written since the last Sync
    // Admitted writes not yet published; compaction leaves the file alone
    // until they are.
    uint32_t writes_in_flight = 0;
  };

  enum class WriteKind : uint8_t {
    kPut,                  // a value from PutBatch
    kRemoveList,           // one tombstone record for removals of RemoveBatch
                           // (each key must be live)
    kCorruptionTombstone,  // for a key found corrupt; skipped if it is live
    kCopy,                 // compaction: a live record moved verbatim
    kCarryTombstone,       // compaction: a tombstone moved, if still needed
    kOwedTombstones,       // removals done without a tombstone (no room)
  };

  // One record on its way through WriteRecords.
  struct PendingWrite {
    WriteKind kind = WriteKind::kPut;
    std::string_view key;   // points into the caller's batch or owned_key
    std::string owned_key;  // kCopy, kCarryTombstone
    const SsdWrite* put = nullptr;  // kPut
    // kRemoveList: the keys (views into the caller's batch), the sequence
    // each got and each one's outcome; `key` is the first one admitted.
    std::vector<std::string_view> removals;
    std::vector<uint64_t> removal_sequences;
    std::vector<Status> removal_status;
    // kOwedTombstones: the owed (key, sequence) pairs, and those of them
    // whose key some file still holds (views into `owed`).
    std::vector<std::pair<std::string, uint64_t>> owed;
    std::vector<SsdRecord::Removal> owed_kept;
    // kCarryTombstone: hashes of every key the tombstone says was removed.
    std::vector<uint64_t> carried_hashes;
    uint64_t bytes = 0;  // record size in the file
    // The record starts on a block boundary (SsdRecord::block_aligned());
    // otherwise on a sector boundary, right after the batch's previous one.
    bool block_aligned = false;
    // Zeros written after the record, up to a block boundary: a batch's
    // last record in a file (or one before a block-aligned record) ends its
    // run of records there. Dead bytes of the file from the start.
    uint64_t pad = 0;
    uint64_t sequence = 0;       // assigned at admission, kept when moved
    uint32_t source_file = 0;    // kCopy, kCarryTombstone
    uint64_t source_offset = 0;  // kCopy
    AlignedBuffer buffer;        // the record as it goes to the file
    // kPut of a large value in memory that suits the device: this many value
    // bytes are written straight from the caller's buffer; `buffer` then
    // holds only the first head_bytes of the record and its tail.
    uint64_t direct_bytes = 0;
    uint64_t head_bytes = 0;
    Status status;          // OK until something fails
    bool busy = false;      // key listed in busy_keys_
    bool admitted = false;  // space and sequence reserved
    bool skipped = false;   // not needed after all; not an error
    uint32_t file = 0;
    uint64_t offset = 0;
    std::shared_ptr<SsdFile> handle;
  };

  // A record that failed its checksum: dropped only if the index still
  // points at it.
  struct CorruptRecord {
    std::string key;
    uint64_t sequence = 0;
    uint32_t file = 0;
    uint64_t offset = 0;
  };

  struct Counters {
    std::atomic<uint64_t> records_written{0};
    std::atomic<uint64_t> bytes_written{0};
    std::atomic<uint64_t> device_bytes_written{0};
    std::atomic<uint64_t> records_read{0};
    std::atomic<uint64_t> bytes_read{0};
    std::atomic<uint64_t> corrupt_records{0};
    std::atomic<uint64_t> torn_records{0};
    std::atomic<uint64_t> compactions{0};
    std::atomic<uint64_t> compacted_bytes_reclaimed{0};
    std::atomic<uint64_t> read_errors{0};
    std::atomic<uint64_t> write_errors{0};
    std::atomic<uint64_t> no_space_refusals{0};
    LatencyHistogram read_latency{kIoLatencyBounds};
    LatencyHistogram write_latency{kIoLatencyBounds};
  };

  struct ScanEntry;
  struct ReadPlan;

  // Values at least this large move between the file and the caller's
  // buffer directly when its alignment allows (no staging copy); smaller
  // ones go with their header as one request through a staging buffer (one
  // I/O beats two plus a saved small copy).
  static constexpr uint64_t kDirectIoMinBytes = 256 << 10;
  using ScanMap = absl::flat_hash_map<std::string, ScanEntry>;

  SsdStore(std::unique_ptr<SsdDevice> device, SsdStoreOptions options);

  // Recovery (ssd_store_recovery.cc).
  Status Recover();
  Status RecoverFile(uint32_t number, ScanMap& scan,
                     std::map<uint32_t, DataFile>& files);
  // Reads every record of file `number` (`name`, `size` bytes) into `scan`
  // (the newest record of each key wins; a removal counts) and `data`
  // (key hashes, tombstone bytes); a torn tail is cut back to the last
  // good record, and `size` follows.
  Status ScanRecoveredFile(uint32_t number, const std::string& name,
                           ScanMap& scan, DataFile& data, uint64_t& size);
  Status StartActiveFile();

  // The write path shared by puts, removes, tombstones and compaction:
  // admit (space, sequence, per-key order), fill, write, publish.
  // `device_time`, if given, gets the time of the device write when one was
  // issued.
  void WriteRecords(std::span<PendingWrite> writes,
                    LatencyHistogram* device_time = nullptr);
  void Reserve(std::span<PendingWrite> writes);
  // Pads `file` to a block boundary; the zeros go out with `last` (the
  // batch's last write placed there), which is then the end of a run.
  void PadFileLocked(uint32_t file, PendingWrite* last)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // `last`: the batch's last write placed so far (nullptr: none); set to
  // `write` when it is placed.
  Status ReserveOneLocked(PendingWrite& write,
                          absl::flat_hash_set<std::string_view>& removed,
                          PendingWrite*& last)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  Status RollActiveFileLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Seals the active file (starts a new one) when it holds enough dead
  // bytes for compaction to want it and no sealed file qualifies: dead
  // records in the active file could otherwise never be reclaimed. True
  // when it did.
  bool SealDeadActiveFileLocked(double min_dead_ratio)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Fills w.buffer (and direct_bytes) for an admitted put.
  void EncodePut(PendingWrite& w);
  // The removals of a kRemoveList that were admitted, with their sequences.
  static std::vector<SsdRecord::Removal> AdmittedRemovals(
      const PendingWrite& w);
  // Sends every admitted write to its file, one WriteBatch per file. False
  // when there was nothing to write (no I/O issued).
  bool WriteToFiles(std::span<PendingWrite> writes);
  // The admitted writes of `writes` that go to `file`, as one WriteBatch:
  // records that share blocks go out as one run from one buffer; a large
  // record's body goes from the caller's buffer. A short or failed write
  // sets its records' status.
  void WriteFile(SsdFile& file, std::span<PendingWrite> writes);
  void Publish(std::span<PendingWrite> writes);
  // A removal list that found no room: its keys are removed from the index
  // now (they are still busy) and their tombstones owed.
  void OweRemovalsLocked(PendingWrite& write)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void PublishOneLocked(PendingWrite& write)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RunPutRound(std::span<const SsdWrite> writes,
                   std::span<const size_t> indices,
                   std::vector<Status>& statuses);
  // Runs compaction steps until `bytes` more fit under the put limit or no
  // step helps; true if they fit.
  bool CompactForRoom(uint64_t bytes);

  // The read path (ssd_store_read.cc): look up under the lock, plan the I/O
  // of each read, run it one batch per file, verify and copy.
  void LookUp(std::span<SsdRead> reads, std::span<ReadPlan> plans) const;
  void PlanIo(SsdRead& read, ReadPlan& plan) const;
  void RunReads(std::span<ReadPlan> plans);
  Status FinishRead(SsdRead& read, ReadPlan& plan);

  // Drops records found damaged from the index (if the index still points at
  // them), counts and reports them, and writes tombstones so that older
  // versions of their keys are not served either.
  void DropCorrupt(std::span<const CorruptRecord> records);
  void WriteCorruptionTombstones(std::span<const std::string> keys);

  // Compaction (ssd_store_compaction.cc).
  std::optional<uint32_t> PickVictimLocked(double min_dead_ratio) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Recomputes capacity_ and put_limit_ from the file system's free space,
  // if it was last looked at over a second ago (or `force`).
  void RefreshSpaceLocked(bool force) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool NeedsTombstoneLocked(uint64_t key_hash, uint32_t victim) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  Status CompactFile(uint32_t victim);
  // Moves the victim's live records and needed tombstones to the active
  // file; adds the bytes moved to `copied_bytes`.
  Status MoveRecords(uint32_t victim, SsdFile& file, uint64_t size,
                     uint64_t& copied_bytes);
  bool StillNeeded(const SsdRecord& record, const SsdFileScanner::Entry& entry,
                   uint32_t victim, uint64_t offset) const;
  // Hashes of the keys a tombstone (`entry`'s record) says were removed.
  static std::vector<uint64_t> RemovedKeyHashes(
      const SsdRecord& record, const SsdFileScanner::Entry& entry);
  void DropLostRecords(uint32_t victim);
  Status CopyChunk(std::vector<PendingWrite>& chunk, uint64_t& copied_bytes);

  void RemoveIndexEntryLocked(std::string_view key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Heterogeneous index lookups take absl::string_view (Debian's abseil
  // does not alias it to std::string_view).
  static absl::string_view IndexKey(std::string_view key) {
    return {key.data(), key.size()};
  }
  static std::string FileName(uint32_t number);
  static std::optional<uint32_t> ParseFileName(const std::string& name);

  const std::unique_ptr<SsdDevice> device_;
  const SsdStoreOptions options_;
  Counters counters_;
  // Write staging and read bounce buffers, recycled.
  mutable AlignedBufferPool buffers_;

  // One compaction at a time.
  Mutex compaction_mu_ ABSL_ACQUIRED_BEFORE(mutex_);

  mutable Mutex mutex_;
  absl::flat_hash_map<std::string, IndexEntry> index_ ABSL_GUARDED_BY(mutex_);
  std::map<uint32_t, DataFile> files_ ABSL_GUARDED_BY(mutex_);
  uint32_t active_file_ ABSL_GUARDED_BY(mutex_) = 0;
  uint32_t next_file_number_ ABSL_GUARDED_BY(mutex_) = 1;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 1;
  uint64_t file_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t live_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  // Set while the active file is being replaced; no write is admitted then.
  bool rolling_ ABSL_GUARDED_BY(mutex_) = false;
  // Keys with a write admitted but not yet published. A later write of the
  // same key waits, so per key the publish order is the sequence order.
  // The views point into the callers' batches, alive while listed.
  absl::flat_hash_set<std::string_view> busy_keys_ ABSL_GUARDED_BY(mutex_);
  // Signalled when busy keys are released or a roll ends.
  CondVar admission_cv_{&mutex_};
  std::vector<std::string> corrupt_keys_ ABSL_GUARDED_BY(mutex_);
  // Removals done without their tombstone, with the sequence each got.
  std::vector<std::pair<std::string, uint64_t>> owed_removals_
      ABSL_GUARDED_BY(mutex_);
  // What the files may fill now (options_.capacity_bytes, or less when the
  // file system has less room), and where puts stop within it.
  uint64_t capacity_ ABSL_GUARDED_BY(mutex_);
  // options_.max_file_bytes after the cap described there, with capacity_.
  uint64_t max_file_bytes_ ABSL_GUARDED_BY(mutex_);
  uint64_t put_limit_ ABSL_GUARDED_BY(mutex_);
  uint64_t filesystem_free_ ABSL_GUARDED_BY(mutex_) = UINT64_MAX;
  std::chrono::steady_clock::time_point space_checked_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mooncake_tier
