#include "python/src/py_store.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "python/src/py_items.h"
#include "python/src/status_error.h"

namespace py = pybind11;

namespace mooncake_tier::python {
namespace {

// Python list of per-item results: the value, or a StoreError instance.
template <typename T, typename Convert>
py::list ToResultList(std::vector<Result<T>>& results, Convert convert) {
  py::list out(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    out[i] = results[i].ok() ? py::object(convert(*results[i]))
                             : MakePyError(results[i].status());
  }
  return out;
}

// Python list of per-item outcomes without a value: None, or a StoreError
// instance.
py::list ToStatusList(const std::vector<Status>& done) {
  py::list out(done.size());
  for (size_t i = 0; i < done.size(); ++i) {
    out[i] = done[i].ok() ? py::none() : MakePyError(done[i]);
  }
  return out;
}

template <typename T>
T& FirstOrThrow(std::vector<Result<T>>& results) {
  ThrowIfError(results.at(0).status());
  return *results[0];
}

}  // namespace

PyStore::PyStore(const RemoteClientOptions& options) : master_(options.master) {
  std::optional<Result<std::unique_ptr<Client>>> client;
  {
    py::gil_scoped_release unlocked;
    client.emplace(ConnectRemote(options));
  }
  ThrowIfError(client->status());
  client_ = std::move(**client);
}

PyStore::~PyStore() {
  // Called from the Python object's deallocation, with the GIL held. At
  // interpreter exit the GIL must not be released any more.
  if (_Py_IsFinalizing()) {
    for (auto& view : registered_) {
      if (client_) client_->UnregisterBuffer(view->bytes()).IgnoreError();
    }
    for (std::span<std::byte> memory : registered_memory_) {
      if (client_) client_->UnregisterBuffer(memory).IgnoreError();
    }
    client_.reset();
    registered_.clear();
    return;
  }
  Close();
}

std::shared_ptr<Client> PyStore::Acquire() const {
  if (client_ == nullptr) {
    ThrowInvalidArgument("the store is closed");
  }
  return client_;
}

void PyStore::Close() {
  if (client_ == nullptr) return;
  std::shared_ptr<Client> client = std::move(client_);
  client_ = nullptr;
  std::vector<std::unique_ptr<PyBufferView>> views = std::move(registered_);
  registered_.clear();
  std::vector<std::span<std::byte>> memory = std::move(registered_memory_);
  registered_memory_.clear();
  {
    py::gil_scoped_release unlocked;
    for (auto& view : views) {
      // Unregistering waits for calls still using the buffer.
      client->UnregisterBuffer(view->bytes()).IgnoreError();
    }
    for (std::span<std::byte> range : memory) {
      client->UnregisterBuffer(range).IgnoreError();
    }
    // Joins the client's threads when this was the last user.
    client.reset();
  }
  // `views` release their Python buffers here, with the GIL held.
}

std::vector<Status> PyStore::PutAll(py::handle keys, py::handle values,
                                    py::handle groups,
                                    const std::string& preferred_node,
                                    bool hard_pin) {
  PreparedPuts puts = PreparePuts(keys, values, groups);
  for (PutItem& item : puts.items) {
    item.options.preferred_node = preferred_node;
    item.options.hard_pin = hard_pin;
  }
  std::shared_ptr<Client> client = Acquire();
  py::gil_scoped_release unlocked;
  return client->PutBatch(puts.items);
}

void PyStore::Put(py::handle key, py::handle data, py::handle group,
                  const std::string& preferred_node, bool hard_pin) {
  py::object groups = py::none();
  if (!group.is_none()) groups = py::make_tuple(group);
  ThrowIfError(PutAll(py::make_tuple(key), py::make_tuple(data), groups,
                      preferred_node, hard_pin)
                   .at(0));
}

py::list PyStore::PutBatch(py::handle keys, py::handle values,
                           py::handle groups, bool hard_pin) {
  return ToStatusList(PutAll(keys, values, groups, "", hard_pin));
}

std::vector<Result<py::object>> PyStore::GetAll(
    const std::vector<std::string>& keys) {
  std::shared_ptr<Client> client = Acquire();
  std::vector<Result<ExistsInfo>> sizes;
  {
    py::gil_scoped_release unlocked;
    sizes = client->ExistsBatch(keys);
  }

  // Read every object straight into a bytes object of its size.
  std::vector<Result<py::object>> out;
  out.reserve(keys.size());
  std::vector<GetIntoItem> reads;
  std::vector<size_t> read_of;
  std::vector<size_t> fallback;  // keys to read the copying way
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!sizes[i].ok()) {
      out.emplace_back(sizes[i].status());
      continue;
    }
    out.emplace_back(py::none());
    if (!sizes[i]->exists || sizes[i]->size == 0) {
      // Not readable now: the read path says why (OBJECT_NOT_FOUND,
      // OBJECT_NOT_READY, ...), or reads it if it appeared meanwhile.
      fallback.push_back(i);
      continue;
    }
    const uint64_t size = sizes[i]->size;
    PyObject* bytes =
        PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
    if (bytes == nullptr) throw py::error_already_set();
    out[i] = py::reinterpret_steal<py::object>(bytes);
    // Only this call references the new object, so it may be written with
    // the GIL released.
    reads.push_back(
        {keys[i],
         std::span<std::byte>(
             reinterpret_cast<std::byte*>(PyBytes_AS_STRING(bytes)), size)});
    read_of.push_back(i);
  }
  std::vector<Result<uint64_t>> got;
  if (!reads.empty()) {
    py::gil_scoped_release unlocked;
    got = client->GetIntoBatch(reads);
  }
  for (size_t r = 0; r < reads.size(); ++r) {
    const size_t i = read_of[r];
    if (got[r].ok()) {
      if (*got[r] == reads[r].buffer.size()) continue;
      // Replaced by a smaller object since the probe: shrink in place.
      PyObject* bytes = out[i]->release().ptr();
      if (_PyBytes_Resize(&bytes, static_cast<Py_ssize_t>(*got[r])) != 0) {
        throw py::error_already_set();
      }
      out[i] = py::reinterpret_steal<py::object>(bytes);
    } else if (got[r].status().reason() == ErrorReason::kBufferTooSmall) {
      fallback.push_back(i);  // replaced by a larger object since the probe
    } else {
      out[i] = got[r].status();
    }
  }
  if (fallback.empty()) return out;

  std::vector<std::string> fallback_keys;
  for (size_t i : fallback) fallback_keys.push_back(keys[i]);
  std::vector<Result<std::vector<std::byte>>> copies;
  {
    py::gil_scoped_release unlocked;
    copies = client->GetBatch(fallback_keys);
  }
  for (size_t f = 0; f < fallback.size(); ++f) {
    if (!copies[f].ok()) {
      out[fallback[f]] = copies[f].status();
      continue;
    }
    out[fallback[f]] =
        py::reinterpret_steal<py::object>(PyBytes_FromStringAndSize(
            reinterpret_cast<const char*>(copies[f]->data()),
            static_cast<Py_ssize_t>(copies[f]->size())));
    if (!(*out[fallback[f]])) throw py::error_already_set();
  }
  return out;
}

py::object PyStore::Get(py::handle key) {
  std::vector<Result<py::object>> got = GetAll({ToKey(key, "key")});
  return std::move(FirstOrThrow(got));
}

py::list PyStore::GetBatch(py::handle keys) {
  std::vector<Result<py::object>> got = GetAll(ToKeys(keys, "keys"));
  return ToResultList(got, [](py::object& v) { return v; });
}

std::vector<Result<uint64_t>> PyStore::GetIntoAll(py::handle keys,
                                                  py::handle buffers) {
  PreparedGets gets = PrepareGets(keys, buffers);
  std::shared_ptr<Client> client = Acquire();
  py::gil_scoped_release unlocked;
  return client->GetIntoBatch(gets.items);
}

uint64_t PyStore::GetInto(py::handle key, py::handle buffer) {
  std::vector<Result<uint64_t>> got =
      GetIntoAll(py::make_tuple(key), py::make_tuple(buffer));
  return FirstOrThrow(got);
}

py::list PyStore::GetIntoBatch(py::handle keys, py::handle buffers) {
  std::vector<Result<uint64_t>> got = GetIntoAll(keys, buffers);
  return ToResultList(got, [](uint64_t n) { return py::int_(n); });
}

ExistsInfo PyStore::Exists(py::handle key) {
  std::vector<std::string> keys{ToKey(key, "key")};
  std::shared_ptr<Client> client = Acquire();
  std::vector<Result<ExistsInfo>> got;
  {
    py::gil_scoped_release unlocked;
    got = client->ExistsBatch(keys);
  }
  return std::move(FirstOrThrow(got));
}

std::vector<Result<ExistsInfo>> PyStore::ExistsAll(py::handle keys) {
  std::vector<std::string> key_list = ToKeys(keys, "keys");
  std::shared_ptr<Client> client = Acquire();
  py::gil_scoped_release unlocked;
  return client->ExistsBatch(key_list);
}

py::list PyStore::ExistsBatch(py::handle keys) {
  std::vector<Result<ExistsInfo>> got = ExistsAll(keys);
  return ToResultList(got, [](ExistsInfo& info) { return py::cast(info); });
}

py::list PyStore::ReadableBatch(py::handle keys) {
  std::vector<Result<ExistsInfo>> got = ExistsAll(keys);
  // What a get would find: a complete copy and, in a group, a complete
  // group.
  return ToResultList(got, [](ExistsInfo& info) {
    return py::bool_(info.exists && (!info.group || info.group->state ==
                                                        GroupState::kComplete));
  });
}

PrefixInfo PyStore::ProbePrefix(py::handle keys) {
  std::vector<std::string> key_list = ToKeys(keys, "keys");
  std::shared_ptr<Client> client = Acquire();
  Result<PrefixInfo> got = PrefixInfo{};
  {
    py::gil_scoped_release unlocked;
    got = client->ProbePrefix(key_list);
  }
  ThrowIfError(got.status());
  return *got;
}

GroupInfo PyStore::Group(py::handle group_id) {
  std::vector<std::string> ids{ToKey(group_id, "group_id")};
  std::shared_ptr<Client> client = Acquire();
  std::vector<Result<GroupInfo>> got;
  {
    py::gil_scoped_release unlocked;
    got = client->GetGroupBatch(ids);
  }
  return std::move(FirstOrThrow(got));
}

std::vector<Status> PyStore::RemoveAll(std::vector<std::string> keys,
                                       bool force) {
  std::shared_ptr<Client> client = Acquire();
  py::gil_scoped_release unlocked;
  return client->RemoveBatch(keys, RemoveOptions{.force = force});
}

void PyStore::Remove(py::handle key, bool force) {
  ThrowIfError(RemoveAll({ToKey(key, "key")}, force).at(0));
}

py::list PyStore::RemoveBatch(py::handle keys, bool force) {
  return ToStatusList(RemoveAll(ToKeys(keys, "keys"), force));
}

void PyStore::RemoveGroup(py::handle group_id, bool force) {
  std::vector<std::string> ids{ToKey(group_id, "group_id")};
  std::shared_ptr<Client> client = Acquire();
  std::vector<Status> done;
  {
    py::gil_scoped_release unlocked;
    done = client->RemoveGroupBatch(ids, RemoveOptions{.force = force});
  }
  ThrowIfError(done.at(0));
}

void PyStore::RegisterBuffer(py::handle buffer) {
  auto view = std::make_unique<PyBufferView>(
      buffer, PyBufferView::Access::kRead, "buffer");
  std::shared_ptr<Client> client = Acquire();
  Status status;
  {
    py::gil_scoped_release unlocked;
    status = client->RegisterBuffer(view->bytes());
  }
  ThrowIfError(status);
  if (client_ == client) {
    registered_.push_back(std::move(view));
  } else {
    // Closed meanwhile: the registration went with the client.
    ThrowInvalidArgument("the store is closed");
  }
}

void PyStore::UnregisterBuffer(py::handle buffer) {
  PyBufferView probe(buffer, PyBufferView::Access::kRead, "buffer");
  const std::span<std::byte> bytes = probe.bytes();
  const auto same = [&](const std::unique_ptr<PyBufferView>& v) {
    return v->bytes().data() == bytes.data() &&
           v->bytes().size() == bytes.size();
  };
  std::shared_ptr<Client> client = Acquire();
  if (std::find_if(registered_.begin(), registered_.end(), same) ==
      registered_.end()) {
    ThrowInvalidArgument("buffer is not registered with this store");
  }
  Status status;
  {
    py::gil_scoped_release unlocked;
    status = client->UnregisterBuffer(bytes);
  }
  ThrowIfError(status);
  // Another thread may have changed the list while the GIL was released.
  auto it = std::find_if(registered_.begin(), registered_.end(), same);
  if (it != registered_.end()) registered_.erase(it);
}

py::list PyStore::RegisteredBuffers() const {
  py::list out;
  for (const auto& view : registered_) {
    out.append(py::reinterpret_borrow<py::object>(view->object()));
  }
  return out;
}

py::list PyStore::PutFromAddresses(py::handle keys, py::handle addresses,
                                   py::handle sizes, py::handle groups,
                                   bool hard_pin) {
  PreparedPuts puts = PreparePutsFromAddresses(keys, addresses, sizes, groups);
  for (PutItem& item : puts.items) item.options.hard_pin = hard_pin;
  std::shared_ptr<Client> client = Acquire();
  std::vector<Status> done;
  {
    py::gil_scoped_release unlocked;
    done = client->PutBatch(puts.items);
  }
  return ToStatusList(done);
}

py::list PyStore::GetIntoAddresses(py::handle keys, py::handle addresses,
                                   py::handle sizes) {
  PreparedGets gets = PrepareGetsFromAddresses(keys, addresses, sizes);
  std::shared_ptr<Client> client = Acquire();
  std::vector<Result<uint64_t>> got;
  {
    py::gil_scoped_release unlocked;
    got = client->GetIntoBatch(gets.items);
  }
  return ToResultList(got, [](uint64_t n) { return py::int_(n); });
}

void PyStore::RegisterMemory(py::handle address, py::handle size) {
  const std::span<std::byte> memory = ToMemory(address, size);
  std::shared_ptr<Client> client = Acquire();
  Status status;
  {
    py::gil_scoped_release unlocked;
    status = client->RegisterBuffer(memory);
  }
  ThrowIfError(status);
  if (client_ != client) ThrowInvalidArgument("the store is closed");
  registered_memory_.push_back(memory);
}

void PyStore::UnregisterMemory(py::handle address) {
  const auto start = reinterpret_cast<std::byte*>(
      static_cast<uintptr_t>(py::cast<uint64_t>(address)));
  const auto same = [&](std::span<std::byte> m) { return m.data() == start; };
  std::shared_ptr<Client> client = Acquire();
  auto it =
      std::find_if(registered_memory_.begin(), registered_memory_.end(), same);
  if (it == registered_memory_.end()) {
    ThrowInvalidArgument("no memory registered with this store starts there");
  }
  const std::span<std::byte> memory = *it;
  Status status;
  {
    py::gil_scoped_release unlocked;
    status = client->UnregisterBuffer(memory);
  }
  ThrowIfError(status);
  // Another thread may have changed the list while the GIL was released.
  it = std::find_if(registered_memory_.begin(), registered_memory_.end(), same);
  if (it != registered_memory_.end()) registered_memory_.erase(it);
}

std::unique_ptr<PyBatchQueue> PyStore::NewBatchQueue(int workers,
                                                     size_t max_pending) {
  return std::make_unique<PyBatchQueue>(Acquire(), workers, max_pending);
}

double PyStore::HealthCheck() {
  std::shared_ptr<Client> client = Acquire();
  Status status;
  double seconds = 0;
  {
    py::gil_scoped_release unlocked;
    const auto start = std::chrono::steady_clock::now();
    status = client->CheckHealth();
    seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  ThrowIfError(status);
  return seconds;
}

py::tuple PyStore::CppGetLoop(py::handle keys, py::handle buffer,
                              int64_t rounds) {
  std::vector<std::string> key_list = ToKeys(keys, "keys");
  PyBufferView view(buffer, PyBufferView::Access::kWrite, "buffer");
  if (rounds < 1) ThrowInvalidArgument("rounds must be >= 1");
  std::shared_ptr<Client> client = Acquire();
  uint64_t bytes = 0;
  Status failed;
  double seconds = 0;
  {
    py::gil_scoped_release unlocked;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t r = 0; r < rounds && failed.ok(); ++r) {
      for (const std::string& key : key_list) {
        // A batch of one, as Store.get_into issues it.
        Result<uint64_t> got = client->GetInto(key, view.bytes());
        if (!got.ok()) {
          failed = got.status();
          break;
        }
        bytes += *got;
      }
    }
    seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  ThrowIfError(failed);
  return py::make_tuple(seconds, bytes);
}

}  // namespace mooncake_tier::python
