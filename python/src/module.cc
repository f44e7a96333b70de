// mooncake_tier._native: the compiled half of the mooncake_tier package.
// Users import mooncake_tier, which re-exports these classes beside the
// exception hierarchy (errors.py). Docstrings here are what help() shows;
// mooncake_tier/__init__.pyi repeats the signatures for type checkers.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "mooncake_tier/remote_client.h"
#include "mooncake_tier/types.h"
#include "python/src/py_store.h"
#include "python/src/status_error.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace py = pybind11;

namespace mooncake_tier::python {
namespace {

std::chrono::milliseconds ToMillis(double seconds, const char* what) {
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 86400.0 * 365) {
    ThrowInvalidArgument(std::string(what) +
                         " must be a positive number of seconds");
  }
  // Round up so that a tiny positive timeout never becomes 0 ms.
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::ceil(seconds * 1000.0)));
}

py::list TierNames(const std::vector<Tier>& tiers) {
  py::list out;
  for (Tier t : tiers) out.append(std::string(TierName(t)));
  return out;
}

std::string GroupStatusRepr(const GroupStatus& g) {
  return "GroupStatus(group_id=" +
         py::repr(py::str(g.group_id)).cast<std::string>() + ", state='" +
         std::string(GroupStateName(g.state)) +
         "', expected=" + std::to_string(g.expected) +
         ", present=" + std::to_string(g.present) + ")";
}

// Group fields of an ExistsInfo, None when the object is in no group.
template <typename F>
py::object GroupField(const ExistsInfo& info, F field) {
  if (!info.group) return py::none();
  return py::cast(field(*info.group));
}

// GroupStatus: a group's completeness.
void BindGroupStatus(py::module_& m) {
  py::class_<GroupStatus>(m, "GroupStatus",
                          "A group's completeness: state is 'filling', "
                          "'complete', 'broken' or 'expired'; present of "
                          "expected members have been put.")
      .def_readonly("group_id", &GroupStatus::group_id)
      .def_property_readonly("state",
                             [](const GroupStatus& g) {
                               return std::string(GroupStateName(g.state));
                             })
      .def_readonly("expected", &GroupStatus::expected)
      .def_readonly("present", &GroupStatus::present)
      .def_property_readonly(
          "complete",
          [](const GroupStatus& g) { return g.state == GroupState::kComplete; },
          "True when every member is present (state 'complete').")
      .def("__repr__", &GroupStatusRepr);
}

// PrefixInfo: the answer of Store.probe_prefix(), also a (length, bytes) pair.
void BindPrefixInfo(py::module_& m) {
  py::class_<PrefixInfo>(
      m, "PrefixInfo",
      "Answer of Store.probe_prefix(): length (keys readable in order from "
      "the first), bytes (their sizes) and memory_bytes (of those, bytes "
      "with a DRAM copy now). Unpacks and compares as (length, bytes).")
      .def_readonly("length", &PrefixInfo::length)
      .def_readonly("bytes", &PrefixInfo::bytes)
      .def_readonly("memory_bytes", &PrefixInfo::memory_bytes)
      .def("__len__", [](const PrefixInfo&) { return 2; })
      .def("__getitem__",
           [](const PrefixInfo& p, int i) -> uint64_t {
             if (i == 0 || i == -2) return p.length;
             if (i == 1 || i == -1) return p.bytes;
             throw py::index_error("PrefixInfo has 2 items");
           })
      .def("__iter__",
           [](const PrefixInfo& p) {
             return py::iter(py::make_tuple(p.length, p.bytes));
           })
      .def("__eq__",
           [](const PrefixInfo& p, py::handle other) {
             if (py::isinstance<PrefixInfo>(other)) {
               const auto& o = other.cast<const PrefixInfo&>();
               return p.length == o.length && p.bytes == o.bytes &&
                      p.memory_bytes == o.memory_bytes;
             }
             return py::make_tuple(p.length, p.bytes).equal(other);
           })
      .def("__repr__", [](const PrefixInfo& p) {
        return "PrefixInfo(length=" + std::to_string(p.length) +
               ", bytes=" + std::to_string(p.bytes) +
               ", memory_bytes=" + std::to_string(p.memory_bytes) + ")";
      });
}

// ExistsInfo: the answer of Store.exists(), with shortcuts to the group's
// status.
void BindExistsInfo(py::module_& m) {
  py::class_<ExistsInfo>(
      m, "ExistsInfo",
      "Answer of Store.exists(). exists is True when a complete copy is "
      "stored; for a group member, group (and the state / expected / present "
      "shortcuts) say whether the whole group is complete. Probes never "
      "extend leases. Truthy when exists.")
      .def_readonly("exists", &ExistsInfo::exists)
      .def_readonly("size", &ExistsInfo::size, "Object size in bytes.")
      .def_property_readonly(
          "group",
          [](const ExistsInfo& i) {
            return GroupField(i, [](const GroupStatus& g) { return g; });
          },
          "GroupStatus, or None for an object in no group.")
      .def_property_readonly("group_id",
                             [](const ExistsInfo& i) {
                               return GroupField(i, [](const GroupStatus& g) {
                                 return g.group_id;
                               });
                             })
      .def_property_readonly(
          "state",
          [](const ExistsInfo& i) {
            return GroupField(i, [](const GroupStatus& g) {
              return std::string(GroupStateName(g.state));
            });
          },
          "The group's state, or None for an object in no group.")
      .def_property_readonly("expected",
                             [](const ExistsInfo& i) {
                               return GroupField(i, [](const GroupStatus& g) {
                                 return g.expected;
                               });
                             })
      .def_property_readonly("present",
                             [](const ExistsInfo& i) {
                               return GroupField(i, [](const GroupStatus& g) {
                                 return g.present;
                               });
                             })
      .def("__bool__", [](const ExistsInfo& i) { return i.exists; })
      .def("__repr__", [](const ExistsInfo& i) {
        return "ExistsInfo(exists=" + std::string(i.exists ? "True" : "False") +
               ", size=" + std::to_string(i.size) + ", group=" +
               (i.group ? GroupStatusRepr(*i.group) : std::string("None")) +
               ")";
      });
}

// GroupMember: one member as Store.group() lists it.
void BindGroupMember(py::module_& m) {
  py::class_<GroupMemberInfo>(m, "GroupMember",
                              "One member of a group, as Store.group() "
                              "reports it; tiers hold a complete copy, "
                              "'memory' first.")
      .def_readonly("index", &GroupMemberInfo::index)
      .def_readonly("key", &GroupMemberInfo::key)
      .def_readonly("present", &GroupMemberInfo::present)
      .def_property_readonly(
          "tiers", [](const GroupMemberInfo& g) { return TierNames(g.tiers); })
      .def("__repr__", [](const GroupMemberInfo& g) {
        return "GroupMember(index=" + std::to_string(g.index) +
               ", key=" + py::repr(py::str(g.key)).cast<std::string>() +
               ", present=" + (g.present ? "True" : "False") +
               ", tiers=" + py::repr(TierNames(g.tiers)).cast<std::string>() +
               ")";
      });
}

// GroupInfo: a group by id, with its members.
void BindGroupInfo(py::module_& m) {
  py::class_<GroupInfo>(m, "GroupInfo",
                        "A group by id: its status, members and, for a "
                        "broken group, why ('removed', 'node_lost', "
                        "'corrupt').")
      .def_readonly("status", &GroupInfo::status)
      .def_property_readonly(
          "group_id", [](const GroupInfo& g) { return g.status.group_id; })
      .def_property_readonly(
          "state",
          [](const GroupInfo& g) {
            return std::string(GroupStateName(g.status.state));
          })
      .def_property_readonly(
          "expected", [](const GroupInfo& g) { return g.status.expected; })
      .def_property_readonly(
          "present", [](const GroupInfo& g) { return g.status.present; })
      .def_readonly("break_cause", &GroupInfo::break_cause)
      .def_readonly("members", &GroupInfo::members)
      .def("__repr__", [](const GroupInfo& g) {
        return "GroupInfo(" + GroupStatusRepr(g.status) +
               ", members=" + std::to_string(g.members.size()) +
               (g.break_cause.empty()
                    ? ""
                    : ", break_cause='" + g.break_cause + "'") +
               ")";
      });
}

void BindResults(py::module_& m) {
  BindGroupStatus(m);
  BindPrefixInfo(m);
  BindExistsInfo(m);
  BindGroupMember(m);
  BindGroupInfo(m);
}

void BindBatchQueue(py::module_& m) {
  py::class_<PyBatchQueue>(m, "BatchQueue", R"doc(
Non-blocking batches over a Store (Store.batch_queue()): a submit_* call
checks its arguments as the matching Store call does, queues the batch and
returns a task id at once; worker threads run it. Results are taken with
collect() (never waits) or wait(task); fileno() is an eventfd that is
readable exactly while results wait, for select / poll / epoll / asyncio's
add_reader (never read it yourself). Each result list has one entry per
key: a put's 0, the bytes a get read, an exists probe's size (absent:
ObjectNotFoundError, a member of an incomplete group: GroupIncompleteError),
or the StoreError instance. The buffers of a task are held until its
result is taken. close() (or leaving a with block) stops the queue: queued
batches never start, running ones finish, results not taken are dropped.
)doc")
      .def("submit_put", &PyBatchQueue::SubmitPut, py::arg("keys"),
           py::arg("values"), py::arg("groups") = py::none(),
           "Queues put_batch(keys, values, groups). Returns the task id.")
      .def("submit_get_into", &PyBatchQueue::SubmitGetInto, py::arg("keys"),
           py::arg("buffers"),
           "Queues get_into_batch(keys, buffers). Returns the task id.")
      .def("submit_put_from_addresses", &PyBatchQueue::SubmitPutFromAddresses,
           py::arg("keys"), py::arg("addresses"), py::arg("sizes"),
           py::arg("groups") = py::none(),
           "Queues put_from_addresses(...). The memory must stay valid "
           "until the result is taken.")
      .def("submit_get_into_addresses", &PyBatchQueue::SubmitGetIntoAddresses,
           py::arg("keys"), py::arg("addresses"), py::arg("sizes"),
           "Queues get_into_addresses(...). The memory must stay valid "
           "until the result is taken.")
      .def("submit_exists", &PyBatchQueue::SubmitExists, py::arg("keys"),
           "Queues an existence probe of each key (readable now: its size).")
      .def("fileno", &PyBatchQueue::Fileno,
           "The eventfd, readable exactly while results wait.")
      .def("collect", &PyBatchQueue::Collect, py::arg("max") = py::none(),
           "Takes up to `max` waiting results, oldest first, as "
           "[(task_id, results), ...]; [] when none waits. Never waits.")
      .def("wait", &PyBatchQueue::Wait, py::arg("task_id"),
           py::arg("timeout") = py::none(), R"doc(
Waits (GIL released) for task `task_id` and takes its results. Raises
StoreTimeoutError when `timeout` seconds pass first (the task stays
pending), TaskNotFoundError for an id not pending (never issued, or its
results already taken).
)doc")
      .def_property_readonly("pending", &PyBatchQueue::Pending,
                             "Tasks submitted whose results are not taken.")
      .def_property_readonly("closed", &PyBatchQueue::closed)
      .def("close", &PyBatchQueue::Close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyBatchQueue& q, py::handle, py::handle, py::handle) {
        q.Close();
        return false;
      });
}

// Store(...): opening (arguments, else their environment variables), closing,
// repr.
void DefineStoreLifecycle(py::class_<PyStore>& store) {
  store
      .def(py::init([](const std::string& master, double rpc_timeout,
                       double transfer_timeout,
                       const std::string& ucx_transports, bool probe_master,
                       bool location_cache, bool control_lane,
                       const std::string& token,
                       std::optional<std::string> token_file,
                       std::optional<std::string> tls_ca,
                       std::optional<std::string> tls_cert,
                       std::optional<std::string> tls_key,
                       std::optional<std::string> tls_server_name) {
             RemoteClientOptions options;
             options.master = master;
             options.rpc_timeout = ToMillis(rpc_timeout, "rpc_timeout");
             options.transfer_timeout =
                 ToMillis(transfer_timeout, "transfer_timeout");
             options.ucx_transports = ucx_transports;
             options.probe_master = probe_master;
             options.location_cache = location_cache;
             options.control_lane = control_lane;
             options.token = token;
             if (token_file) {
               options.token_file = *token_file;
             } else if (const char* env =
                            std::getenv("MOONCAKE_TIER_CLIENT_TOKEN_FILE")) {
               options.token_file = env;
             }
             // An argument, else its environment variable, else none.
             auto pick = [](const std::optional<std::string>& arg,
                            const char* variable) -> std::string {
               if (arg) return *arg;
               const char* env = std::getenv(variable);
               return env == nullptr ? std::string() : std::string(env);
             };
             options.tls_ca = pick(tls_ca, "MOONCAKE_TIER_TLS_CA");
             options.tls_cert = pick(tls_cert, "MOONCAKE_TIER_TLS_CERT");
             options.tls_key = pick(tls_key, "MOONCAKE_TIER_TLS_KEY");
             options.tls_server_name =
                 pick(tls_server_name, "MOONCAKE_TIER_TLS_SERVER_NAME");
             return std::make_unique<PyStore>(options);
           }),
           py::arg("master") = "127.0.0.1:50051", py::kw_only(),
           py::arg("rpc_timeout") = 5.0, py::arg("transfer_timeout") = 5.0,
           py::arg("ucx_transports") = "", py::arg("probe_master") = true,
           py::arg("location_cache") = true, py::arg("control_lane") = true,
           py::arg("token") = "", py::arg("token_file") = py::none(),
           py::arg("tls_ca") = py::none(), py::arg("tls_cert") = py::none(),
           py::arg("tls_key") = py::none(),
           py::arg("tls_server_name") = py::none())
      .def_property_readonly("master", &PyStore::master,
                             "The master address this store was opened with.")
      .def_property_readonly("closed", &PyStore::closed)
      .def("close", &PyStore::Close,
           "Unregisters every registered buffer and disconnects. Calls "
           "already running finish; later calls raise StoreError. "
           "Idempotent.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](PyStore& s, py::args) {
             s.Close();
             return false;
           })
      .def("__repr__", [](const PyStore& s) {
        return "Store(master='" + s.master() + "'" +
               (s.closed() ? ", closed" : "") + ")";
      });
}

// Puts and gets: single, batched, scattered and from raw addresses.
void DefineStoreData(py::class_<PyStore>& store) {
  store
      .def("put", &PyStore::Put, py::arg("key"), py::arg("data"),
           py::arg("group") = py::none(), py::kw_only(),
           py::arg("preferred_node") = "", py::arg("hard_pin") = false,
           R"doc(
Stores `data` (any C-contiguous buffer) under `key` (str or bytes). A list
or tuple of buffers is one object made of those parts, in order, each sent
from where it lies (an engine's block spread over per-layer pages).

group: None, a Group, or (group_id, group_size, group_index) to make the
object a member of a group the store reports and manages as one unit.
Raises ObjectExistsError for a key already stored, InvalidKeyError /
InvalidSizeError / InvalidGroupError for bad input. When the store's DRAM
is full and nothing can be dropped at once, the put waits (GIL released)
for the store to write cold objects back to SSD, up to the master's
--put-wait-timeout and within rpc_timeout; NoSpaceError only after that,
saying what holds the DRAM. The bytes are sent from `data` itself, no copy.
)doc")
      .def("put_batch", &PyStore::PutBatch, py::arg("keys"), py::arg("values"),
           py::arg("groups") = py::none(), py::kw_only(),
           py::arg("hard_pin") = false,
           R"doc(
Stores values[i] under keys[i] (groups[i] when groups is given, each None
or a group), in one batch. Returns one entry per key: None when stored,
else the StoreError instance. Raises (and stores nothing) only when the
arguments themselves are malformed.
)doc")
      .def("get", &PyStore::Get, py::arg("key"), R"doc(
Returns the value of `key` as bytes.

The bytes object is allocated once at the size an existence probe reports
and read into directly (one metadata round trip more than get_into, no
second copy). Raises ObjectNotFoundError, GroupIncompleteError (a member of
a group not yet complete), ObjectNotReadyError (put in flight), ...
)doc")
      .def("get_batch", &PyStore::GetBatch, py::arg("keys"),
           "Reads many keys. Returns one entry per key: bytes, or the "
           "StoreError instance.")
      .def("get_into", &PyStore::GetInto, py::arg("key"), py::arg("buffer"),
           R"doc(
Reads the value of `key` straight into `buffer` (writable, C-contiguous:
bytearray, numpy array, memoryview of one) and returns its size in bytes.
A list or tuple of buffers receives the value scattered over them in
order (the last one used may be filled in part).
No copy is made; register the buffer (register_buffer) to also avoid
per-call registration. Raises BufferTooSmallError (nothing written) when
the value does not fit, InvalidArgumentError (a ValueError) for a read-only
or non-contiguous buffer.
)doc")
      .def("get_into_batch", &PyStore::GetIntoBatch, py::arg("keys"),
           py::arg("buffers"),
           "Reads keys[i] into buffers[i] (a buffer, or a list of them to "
           "scatter into). Returns one entry per key: the size read, or the "
           "StoreError instance.")
      .def("put_from_addresses", &PyStore::PutFromAddresses, py::arg("keys"),
           py::arg("addresses"), py::arg("sizes"),
           py::arg("groups") = py::none(), py::kw_only(),
           py::arg("hard_pin") = false, R"doc(
Stores keys[i] from raw memory the caller owns: addresses[i] and sizes[i]
are an int each, or equal-length lists of ints (the object's parts, in
order). For engines that hold pointers (pinned host pools, device memory
the transport can reach); the memory must stay valid during the call, and
nothing can check that it is. Returns one entry per key: None or the
StoreError instance.
)doc")
      .def("get_into_addresses", &PyStore::GetIntoAddresses, py::arg("keys"),
           py::arg("addresses"), py::arg("sizes"), R"doc(
Reads keys[i] into raw memory the caller owns (see put_from_addresses;
a list of ranges is scattered into in order). Returns one entry per key:
the size read, or the StoreError instance (BufferTooSmallError when the
ranges are too small; nothing written).
)doc");
}

// Lookups and removals: exists, readable, prefix probes, groups, remove.
void DefineStoreMetadata(py::class_<PyStore>& store) {
  store
      .def("exists", &PyStore::Exists, py::arg("key"), R"doc(
Probes `key` (without extending its lease). Returns an ExistsInfo:
exists, size and, for a group member, the group's state, expected and
present counts. A missing key is ExistsInfo(exists=False), not an error.
)doc")
      .def("exists_batch", &PyStore::ExistsBatch, py::arg("keys"),
           "Probes many keys. Returns one entry per key: ExistsInfo, or the "
           "StoreError instance (e.g. InvalidKeyError).")
      .def("readable_batch", &PyStore::ReadableBatch, py::arg("keys"),
           R"doc(
Whether a get would read each key now: True (a complete copy and, for a
group member, a complete group), False, or the StoreError instance (e.g.
InvalidKeyError). The cheap form of exists_batch for engines that only
need yes or no (skipping blocks already stored, counting hits); it extends
no lease.
)doc")
      .def("probe_prefix", &PyStore::ProbePrefix, py::arg("keys"), R"doc(
How many of `keys`, in order from the first, can be read now (each
object complete; a group member's group complete), in one call to the
master: an engine's lookup of a prompt's cached blocks. Returns a
PrefixInfo: length, bytes and memory_bytes (the part in DRAM now, which
loads fastest); it unpacks as (length, bytes). Like exists, it extends
no lease. Raises InvalidKeyError, naming the key's position, for a bad key.
)doc")
      .def("group", &PyStore::Group, py::arg("group_id"),
           "Returns the GroupInfo of `group_id`: state, counts, members. "
           "Raises GroupNotFoundError.")
      .def("remove", &PyStore::Remove, py::arg("key"), py::kw_only(),
           py::arg("force") = false,
           "Removes `key` (for a group member, the store's group remove "
           "policy applies). Raises ObjectNotFoundError, ObjectLeasedError "
           "while a reader holds a lease (unless force), ObjectBusyError "
           "while a put is in flight.")
      .def("remove_batch", &PyStore::RemoveBatch, py::arg("keys"),
           py::kw_only(), py::arg("force") = false,
           R"doc(
Removes many keys in one batch. Returns one entry per key: None when
removed, else the StoreError instance (ObjectNotFoundError,
ObjectLeasedError unless force, ObjectBusyError, InvalidKeyError). For a
group member the store's group remove policy applies, as for remove():
under the default policy ("group") removing one member removes its whole
group, so a later key of the same group in the batch reports
ObjectNotFoundError. Raises (and removes nothing) only when `keys` is not
a list or tuple of str / bytes.
)doc")
      .def("remove_group", &PyStore::RemoveGroup, py::arg("group_id"),
           py::kw_only(), py::arg("force") = false,
           "Removes every member of the group. Raises GroupNotFoundError, "
           "ObjectLeasedError / ObjectBusyError (nothing removed).");
}

// Registered memory, the batch queue, health and the benchmark loop.
void DefineStoreBuffers(py::class_<PyStore>& store) {
  store
      .def("register_buffer", &PyStore::RegisterBuffer, py::arg("buffer"),
           R"doc(
Registers `buffer` (C-contiguous) for repeated puts from and get_into
calls into it, so transfers need no per-call memory registration (on an
RDMA fabric: pinning). The store keeps a reference to the buffer until
unregister_buffer() or close(); the exporter cannot be resized meanwhile.
Raises InvalidArgumentError for an empty buffer or one overlapping a
registered buffer.
)doc")
      .def("unregister_buffer", &PyStore::UnregisterBuffer, py::arg("buffer"),
           "Unregisters a buffer passed to register_buffer (calls still "
           "using it finish first) and drops the store's reference.")
      .def_property_readonly("registered_buffers", &PyStore::RegisteredBuffers,
                             "The buffers currently registered.")
      .def("register_memory", &PyStore::RegisterMemory, py::arg("address"),
           py::arg("size"), R"doc(
Registers raw memory the caller owns (register_buffer for a pointer). The
memory must stay valid until unregister_memory() or close().
)doc")
      .def("unregister_memory", &PyStore::UnregisterMemory, py::arg("address"),
           "Unregisters memory registered at `address` (calls still using "
           "it finish first).")
      .def("batch_queue", &PyStore::NewBatchQueue, py::kw_only(),
           py::arg("workers") = 2, py::arg("max_pending") = 64, R"doc(
A BatchQueue over this store: non-blocking batch puts, gets and probes
run by `workers` threads, at most `max_pending` submitted and not yet
collected (a submit beyond that raises QueueFullError).
)doc")
      .def("health_check", &PyStore::HealthCheck, R"doc(
One round trip to the master (a cluster's leader) that reads nothing.
Returns its seconds; raises UnavailableError / StoreTimeoutError when the
store does not answer.
)doc")
      .def("_cpp_get_loop", &PyStore::CppGetLoop, py::arg("keys"),
           py::arg("buffer"), py::arg("rounds") = 1,
           "Benchmark reference: the same get_into calls in a C++ loop with "
           "the GIL released. Returns (seconds, bytes).");
}

void BindStore(py::module_& m) {
  py::class_<PyStore> store(m, "Store", R"doc(
A client of a mooncake-tier store (master + storage nodes).

Store(master="127.0.0.1:50051", *, rpc_timeout=5.0, transfer_timeout=5.0,
      ucx_transports="", probe_master=True, location_cache=True,
      control_lane=True, token="", token_file=None, tls_ca=None,
      tls_cert=None, tls_key=None, tls_server_name=None)

Connects to the master at `master` ("host:port"), or to the masters of a
high-availability cluster ("h1:p,h2:p,h3:p"; calls follow the leader
across failovers); raises UnavailableError or StoreTimeoutError naming the
address when no master answers within rpc_timeout seconds. Use it as a
context manager, or call close().

With location_cache (the default), a repeated read of an object in DRAM
reads it again where the master last said it is, with no call to the
master, for as long as the master vouches for that place (its location
grant, 2 s by default). It never returns another object's bytes; after
another client removes or rewrites a key, this one may read the earlier
value until the grant ends.

With control_lane (the default), lookups (exists, replica lists, prefix
probes) go to the master's UCX control lane when it offers
one, at about a third of a gRPC call's latency, and over gRPC otherwise.

A master that authenticates calls (mooncake-tierd --client-token-file)
needs a client token: `token`, or the first line of `token_file`, which
defaults to the file named by the MOONCAKE_TIER_CLIENT_TOKEN_FILE
environment variable. Without it every call raises UnauthenticatedError.

A master that serves TLS (mooncake-tierd --tls-cert) is dialed with
`tls_ca`, the PEM bundle its certificate must lead to; the certificate
must name the master role and the host dialed (or `tls_server_name`). A
master that asks for client certificates also needs `tls_cert` and
`tls_key` (a client or admin certificate), which then prove the role in
place of a token. Each defaults to the environment variable
MOONCAKE_TIER_TLS_CA, MOONCAKE_TIER_TLS_CERT, MOONCAKE_TIER_TLS_KEY or
MOONCAKE_TIER_TLS_SERVER_NAME; bad files raise InvalidArgumentError.

Every method releases the GIL while it waits on the network or a disk, and
one Store may be shared by many threads. Values are anything with the
buffer protocol (bytes, bytearray, memoryview, C-contiguous numpy arrays).
Failures raise StoreError subclasses (ObjectNotFoundError,
GroupIncompleteError, NoSpaceError, ...); the *_batch methods return one
result per item instead: the value, or the StoreError instance.
)doc");
  DefineStoreLifecycle(store);
  DefineStoreData(store);
  DefineStoreMetadata(store);
  DefineStoreBuffers(store);
}

}  // namespace
}  // namespace mooncake_tier::python

PYBIND11_MODULE(_native, m) {
  // The engine's standard output is its own: the client library logs to
  // standard error, unless the process configured spdlog's default logger
  // already (a named one). UCX's log goes there too (transport).
  if (spdlog::default_logger()->name().empty() &&
      spdlog::get("mooncake_tier") == nullptr) {
    spdlog::set_default_logger(spdlog::stderr_color_mt("mooncake_tier"));
  }
  m.doc() =
      "Compiled half of the mooncake_tier package; import mooncake_tier "
      "instead.";
  mooncake_tier::python::RegisterStatusErrors(m);
  mooncake_tier::python::BindResults(m);
  mooncake_tier::python::BindBatchQueue(m);
  mooncake_tier::python::BindStore(m);
}
