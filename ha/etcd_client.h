#pragma once

// EtcdClient: the calls master high availability needs from etcd v3
// (leases, keys, a fenced transaction, elections, watches), spoken as JSON
// over HTTP to the gRPC gateway every etcd member serves on its client port
// (docs/design/ha.md says why not gRPC). Every call is a POST to
// "/v3/...": keys and values travel base64-encoded, 64-bit integers as JSON
// strings, and etcd leaves fields at their default value (0, false, "")
// out of its replies, so an absent field reads as its default here.
//
// Failures are Status values, never exceptions:
//   - etcd unreachable, a connection broken, no reply within the call
//     timeout: UNAVAILABLE, naming the endpoint;
//   - a reply that is not what etcd 3.4 sends: INTERNAL with an excerpt;
//   - an error etcd reports: the closest reason (a lease that is gone:
//     OBJECT_NOT_FOUND; a bad request: INVALID_ARGUMENT; a precondition
//     such as "election: not leader": NOT_APPLICABLE), with etcd's message.
//
// Endpoints: the client sticks to the endpoint that last answered. When it
// cannot connect to one, it tries the next in the same call (the request
// was never sent, so nothing can have happened twice); when a request was
// sent but its reply was lost or timed out, the call fails (it may have
// been applied) and the next call starts at the next endpoint.
//
// Long calls (Campaign, WatchPrefix) run on a connection of their own, so
// a campaign waiting for minutes never delays a lease renewal, and stop
// promptly when their CallCanceller is cancelled from another thread.
//
// Thread safety: every method may be called from any number of threads at
// once. Short calls share a small pool of keep-alive connections.
//
// REQUIRES: the process ignores SIGPIPE (as mooncake-tierd does): the HTTP
// library writes with plain send(), and a write to a connection etcd has
// closed would otherwise end the process instead of failing the call.
// REQUIRES: no call is running when the client is destroyed (cancel long
// calls and join their threads first).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "mooncake_tier/status.h"

namespace httplib {
class Client;
}  // namespace httplib

namespace mooncake_tier::ha {

struct EtcdClientOptions {
  // Client URLs of etcd members as "host:port" ("http://" in front is
  // accepted; https is not supported). REQUIRES: at least one.
  std::vector<std::string> endpoints;

  // Longest wait for the reply to one short call once it is sent (httplib
  // applies it to each read and write). Default: 2 s. REQUIRES: > 0.
  std::chrono::milliseconds call_timeout{2000};

  // Longest wait to connect to one endpoint. Short, so that a dead first
  // endpoint costs little before the next is tried. Default: 500 ms.
  // REQUIRES: > 0.
  std::chrono::milliseconds connect_timeout{500};

  // Longest a Campaign waits before giving up with TIMEOUT (its
  // connection closes, which withdraws the candidate; campaign again).
  // Keep it longer than the TTL of the leases that campaign: a leader that
  // died is replaced only once its lease expired. Default: 60 s.
  // REQUIRES: > 0.
  std::chrono::milliseconds campaign_timeout{60000};

  // A watch that hears nothing from etcd for this long reconnects (from
  // where it left off) to prove etcd is still there: a silent network
  // cannot hold it forever. Default: 10 s. REQUIRES: > 0.
  std::chrono::milliseconds watch_idle_timeout{10000};

  // Idle keep-alive connections kept per endpoint for short calls.
  // Default: 4.
  size_t max_idle_connections = 4;
};

// One key as etcd stores it. Revisions are etcd's store revisions: they
// only grow, across all keys.
struct KeyValue {
  std::string key;    // any bytes
  std::string value;  // any bytes
  // Revision of the write that created the key (for an election key: the
  // leader's term).
  int64_t create_revision = 0;
  // Revision of the last write to the key.
  int64_t mod_revision = 0;
  // Writes since the key was created (1 after the first).
  int64_t version = 0;
  // Lease the key is attached to; 0 when none.
  int64_t lease = 0;
};

// The keys under a prefix and the store revision they were read at (watch
// from revision + 1 to see every later change).
struct PrefixRange {
  std::vector<KeyValue> kvs;  // in key order
  int64_t revision = 0;
};

struct LeaseGrant {
  int64_t id = 0;
  // The TTL etcd granted, which may exceed the one asked for (etcd raises
  // a TTL below its minimum, 1.5 election timeouts rounded up to seconds).
  int64_t ttl_seconds = 0;
};

// One write of a FencedWrite.
struct WriteOp {
  enum class Kind : uint8_t { kPut, kDelete };

  static WriteOp Put(std::string key, std::string value, int64_t lease = 0) {
    return WriteOp{Kind::kPut, std::move(key), std::move(value), lease};
  }
  static WriteOp Delete(std::string key) {
    return WriteOp{Kind::kDelete, std::move(key), {}, 0};
  }

  Kind kind = Kind::kPut;
  std::string key;
  std::string value;  // kPut only
  int64_t lease = 0;  // kPut only; 0: none
};

// What a successful Campaign holds: the candidate's key in the election.
// Pass it to Resign and Proclaim.
struct LeaderKey {
  std::string name;      // the election
  std::string key;       // "<name>/<lease in hex>", created by etcd
  int64_t revision = 0;  // create revision of `key`: the leader's term
  int64_t lease = 0;
};

// One message of a watch stream.
struct WatchBatch {
  // The watch is established: etcd will report every change after
  // `revision` (when watching from "now") or from the asked revision.
  // `events` is empty.
  bool created = false;
  // etcd's store revision when it sent the message.
  int64_t revision = 0;

  struct Event {
    enum class Type : uint8_t { kPut, kDelete };
    Type type = Type::kPut;
    // For a delete: the key and mod_revision (the deletion's revision).
    KeyValue kv;
  };
  std::vector<Event> events;  // in revision order
};

// Stops long calls (Campaign, WatchPrefix) from another thread. Sticky:
// once cancelled, a call given this canceller returns ABORTED, whether it
// was running or starts later. Several calls may share one canceller. A
// call whose reply had already arrived returns it: a campaign cancelled
// just as it won returns its key (resign, or revoke the lease, to step
// down).
//
// Thread safety: Cancel() may be called from any thread, any number of
// times.
class CallCanceller {
 public:
  CallCanceller() = default;
  CallCanceller(const CallCanceller&) = delete;
  CallCanceller& operator=(const CallCanceller&) = delete;

  // Cancels, and returns once every call running with this canceller has
  // stopped using its connection (at most about one connect timeout, when
  // one was connecting).
  void Cancel();
  bool cancelled() const;

 private:
  friend class EtcdClient;
  // Registers a connection a call is about to use; false when already
  // cancelled.
  bool Attach(httplib::Client* http);
  void Detach(httplib::Client* http);

  // A connection in use and the thread using it.
  struct Active {
    httplib::Client* http;
    std::thread::id thread;
  };

  mutable Mutex mu_;
  CondVar detached_{&mu_};
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Active> active_ ABSL_GUARDED_BY(mu_);
};

class EtcdClient {
 public:
  // INVALID_ARGUMENT when the options break a REQUIRES. Connects lazily:
  // an unreachable etcd fails the first call, not this.
  static Result<std::unique_ptr<EtcdClient>> Create(EtcdClientOptions options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // "host:port" of the endpoint the next call starts at.
  std::string CurrentEndpoint() const;

  // ---- Leases: a lease expires unless renewed within its TTL; keys
  // attached to it are deleted when it does (or is revoked).

  // A new lease. REQUIRES: ttl_seconds > 0 (INVALID_ARGUMENT otherwise).
  Result<LeaseGrant> GrantLease(int64_t ttl_seconds);
  // Renews the lease to its full TTL once; returns the TTL it now has.
  // OBJECT_NOT_FOUND when the lease expired or was revoked (etcd answers
  // without a TTL).
  Result<int64_t> RenewLease(int64_t lease);
  // Ends the lease now, deleting its keys. OBJECT_NOT_FOUND when it is
  // already gone.
  Status RevokeLease(int64_t lease);
  // Seconds the lease has left (0 in its last second). OBJECT_NOT_FOUND
  // when it is gone.
  Result<int64_t> LeaseTimeToLive(int64_t lease);

  // ---- Keys. Keys and values are arbitrary bytes.

  // Writes `value` at `key`, attached to `lease` (0: none). Returns the
  // revision of the write. OBJECT_NOT_FOUND when the lease is gone.
  // REQUIRES: key non-empty.
  Result<int64_t> Put(std::string_view key, std::string_view value,
                      int64_t lease = 0);
  // The key, or nullopt when absent.
  Result<std::optional<KeyValue>> Get(std::string_view key);
  // Every key starting with `prefix` ("" for all keys).
  Result<PrefixRange> GetPrefix(std::string_view prefix);
  // Deletes the key; true when it existed.
  Result<bool> Delete(std::string_view key);

  // The fencing write: applies every op in `ops`, atomically, only if
  // `guard_key` exists with create revision `guard_revision` (a leader
  // passes its LeaderKey's key and revision, so a deposed leader's write
  // cannot land). Returns whether the ops were applied; false is not an
  // error. etcd allows at most 128 ops (--max-txn-ops) by default.
  // REQUIRES: guard_revision > 0, ops non-empty.
  Result<bool> FencedWrite(std::string_view guard_key, int64_t guard_revision,
                           const std::vector<WriteOp>& ops);

  // ---- Elections (etcd's v3election service). Candidates of one name
  // lead in the order they campaigned; a candidate leads until it
  // resigns, its lease ends, or its campaign connection drops while it
  // still waits.

  // Blocks until this candidate leads `name`, then returns its key. The
  // lease must be renewed meanwhile (from another thread): etcd 3.4
  // answers a campaign whose lease expired while it waited once the
  // candidates before it are gone, with a key that no longer exists, so
  // this checks the key and returns OBJECT_NOT_FOUND in that case.
  // Campaigning again with the same lease while leading returns the same
  // key (and proclaims `value`). ABORTED when `cancel` was cancelled;
  // TIMEOUT after campaign_timeout; OBJECT_NOT_FOUND when the lease is
  // gone. REQUIRES: name non-empty, lease != 0 (etcd would invent a lease
  // of its own that nobody renews).
  Result<LeaderKey> Campaign(std::string_view name, int64_t lease,
                             std::string_view value,
                             CallCanceller* cancel = nullptr);
  // The current leader's key (value, create_revision = term, lease), or
  // nullopt when nobody leads.
  Result<std::optional<KeyValue>> Leader(std::string_view name);
  // Gives up leadership (deletes the key); OK when it was already gone.
  Status Resign(const LeaderKey& leader);
  // Replaces the leader's value. NOT_APPLICABLE when `leader` no longer
  // leads.
  Status Proclaim(const LeaderKey& leader, std::string_view value);

  // ---- Change notification.

  // Streams changes to keys under `prefix` to `on_batch`, starting after
  // the current revision (start_revision 0) or at start_revision. The
  // first batch has created = true. Returns when:
  //   - on_batch returns false: OK;
  //   - `cancel` is cancelled: ABORTED;
  //   - start_revision was compacted away: NOT_APPLICABLE, after a
  //     created batch (etcd confirms the watch, then cancels it); read
  //     with GetPrefix and watch from its revision + 1;
  //   - the stream broke or etcd is unreachable: UNAVAILABLE (watch again
  //     from the last event's mod_revision + 1).
  // Silence for watch_idle_timeout reconnects from where it left off,
  // without a second created batch. on_batch runs on the calling thread.
  Status WatchPrefix(std::string_view prefix, int64_t start_revision,
                     const std::function<bool(const WatchBatch&)>& on_batch,
                     CallCanceller* cancel = nullptr);

 private:
  struct Endpoint {
    std::string host;
    int port = 0;
    std::string name;  // "host:port", for messages
  };
  struct StreamOutcome;

  explicit EtcdClient(EtcdClientOptions options,
                      std::vector<Endpoint> endpoints);

  // POSTs `request` to `path` and returns the JSON of a 200 reply, or the
  // Status the failure maps to. Rotates endpoints as the class comment
  // says.
  Result<nlohmann::json> Call(std::string_view path,
                              const nlohmann::json& request);
  // POSTs `body` to `path` on a connection of its own with `read_timeout`,
  // handing the reply's bytes to `on_data` as they arrive (returning false
  // stops the reply).
  StreamOutcome Stream(std::string_view path, const std::string& body,
                       std::chrono::milliseconds read_timeout,
                       CallCanceller* cancel,
                       const std::function<bool(std::string_view)>& on_data);
  // One connection of a watch, from `*next_revision`, which it advances.
  Status WatchOnce(std::string_view prefix, int64_t* next_revision,
                   bool* created_seen,
                   const std::function<bool(const WatchBatch&)>& on_batch,
                   CallCanceller* cancel);

  std::unique_ptr<httplib::Client> TakeClient(size_t index);
  void ReturnClient(size_t index, std::unique_ptr<httplib::Client> http);
  std::unique_ptr<httplib::Client> NewClient(
      size_t index, std::chrono::milliseconds read_timeout) const;
  // Moves the sticky endpoint past `index` if it is still there.
  void LeaveEndpoint(size_t index);

  const EtcdClientOptions options_;
  const std::vector<Endpoint> endpoints_;
  // Index into endpoints_ where the next call starts.
  std::atomic<size_t> current_{0};

  Mutex pool_mu_;
  // Idle keep-alive connections, per endpoint.
  std::vector<std::vector<std::unique_ptr<httplib::Client>>> idle_
      ABSL_GUARDED_BY(pool_mu_);
};

}  // namespace mooncake_tier::ha
