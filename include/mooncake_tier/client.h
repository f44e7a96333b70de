#pragma once

// The mooncake-tier client API: put and get objects by key.
//
// Every call takes a batch and returns one result per item, in order, so
// one bad key never hides the others; the single-key forms are batches of
// one. Reads never wait for background work (offload, promotion).
//
// Implementations: the in-process client of EmbeddedStore
// (mooncake_tier/embedded_store.h) and the remote client of the
// distributed store. Both pass the same conformance suite.
//
// Thread safety: a Client may be used from many threads at once.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier {

struct PutItem {
  std::string key;
  std::span<const std::byte> value;  // must stay valid during the call
  PutOptions options;
  // Gather: when not empty, the value is these buffers one after another
  // (an engine's KV block spread over per-layer pages), written straight
  // from each; `value` must then be empty. Empty parts are skipped.
  std::vector<std::span<const std::byte>> parts = {};
};

struct GetIntoItem {
  std::string key;
  std::span<std::byte> buffer;  // receives the value
  // Scatter: when not empty, the value fills these buffers in order (the
  // last one used may be filled in part); `buffer` must then be empty.
  std::vector<std::span<std::byte>> parts = {};
};

class Client {
 public:
  virtual ~Client() = default;

  // Stores each value. INVALID_ARGUMENT for an item with both a value and
  // parts; OBJECT_EXISTS for a key already stored,
  // INVALID_KEY / INVALID_SIZE (empty value) / INVALID_GROUP for bad input.
  // A store whose DRAM is full makes room by dropping objects already on
  // SSD; when there are none, the put waits for the store to write some
  // back, up to the master's put_wait_timeout and within the call's
  // deadline, and is NO_SPACE only then (the message says what holds each
  // node's DRAM), or at once when nothing could ever free room.
  virtual std::vector<Status> PutBatch(std::span<const PutItem> items) = 0;

  // Reads each value into its buffer and returns its size. The object is
  // protected from eviction while it is copied; the client tells the store
  // when the copy is done (in the background, batched).
  // A scattered read lands in each part straight from a DRAM copy; from an
  // SSD copy it is read whole into a client buffer first and copied out.
  // OBJECT_NOT_FOUND, BUFFER_TOO_SMALL (nothing written; for parts, their
  // sum is too small), INVALID_ARGUMENT for an item with both a buffer and
  // parts, UNAVAILABLE when no replica could be read.
  virtual std::vector<Result<uint64_t>> GetIntoBatch(
      std::span<const GetIntoItem> items) = 0;

  // Reads each value into a new buffer.
  virtual std::vector<Result<std::vector<std::byte>>> GetBatch(
      std::span<const std::string> keys) = 0;

  // Existence probes; they do not protect the object from eviction.
  virtual std::vector<Result<ExistsInfo>> ExistsBatch(
      std::span<const std::string> keys) = 0;

  // An engine's lookup of a prompt's cached blocks, in one round trip: how
  // many of `keys`, in order from the first, can be read now (each object
  // complete, a group member's group complete), and their bytes. Stops at
  // the first that cannot. A probe: no lease, no access counted.
  // INVALID_KEY, naming its position, for a bad key (nothing probed).
  virtual Result<PrefixInfo> ProbePrefix(std::span<const std::string> keys) = 0;

  // A cheap health check: OK when the store's master (a cluster's leader)
  // answers now, else why not (UNAVAILABLE, TIMEOUT). One round trip that
  // reads and counts nothing.
  virtual Status CheckHealth() = 0;

  // OBJECT_NOT_FOUND, OBJECT_LEASED while another reader holds a lease
  // (unless forced), OBJECT_BUSY while a put is in flight.
  virtual std::vector<Status> RemoveBatch(std::span<const std::string> keys,
                                          RemoveOptions options = {}) = 0;

  // Groups by id: state, counts and members. GROUP_NOT_FOUND when unknown.
  virtual std::vector<Result<GroupInfo>> GetGroupBatch(
      std::span<const std::string> group_ids) = 0;

  // Removes every member of each group. OBJECT_LEASED / OBJECT_BUSY (and
  // nothing removed) while a member is leased (unless forced) or being put.
  virtual std::vector<Status> RemoveGroupBatch(
      std::span<const std::string> group_ids, RemoveOptions options = {}) = 0;

  // Registers memory the caller will put from or get into many times, so
  // that transfers from and into it need no per-call registration (on an
  // RDMA fabric: pinning), which is what makes them zero-copy and cheap.
  // The memory must stay valid until UnregisterBuffer. Transfers work
  // without registration too. INVALID_ARGUMENT for an empty buffer or one
  // overlapping a registered buffer.
  virtual Status RegisterBuffer(std::span<std::byte> buffer) = 0;
  // INVALID_ARGUMENT unless `buffer` is exactly a registered buffer. Calls
  // still using the buffer finish first.
  virtual Status UnregisterBuffer(std::span<std::byte> buffer) = 0;

  // Batches of one.
  Status Put(std::string_view key, std::span<const std::byte> value,
             PutOptions options = {});
  Result<uint64_t> GetInto(std::string_view key, std::span<std::byte> buffer);
  Result<std::vector<std::byte>> Get(std::string_view key);
  Result<ExistsInfo> Exists(std::string_view key);
  Status Remove(std::string_view key, RemoveOptions options = {});
  Result<GroupInfo> GetGroup(std::string_view group_id);
  Status RemoveGroup(std::string_view group_id, RemoveOptions options = {});
};

}  // namespace mooncake_tier
