#pragma once

// PyStore: the object behind mooncake_tier.Store. It owns a remote client
// (ConnectRemote) and turns Python arguments into client batches:
//
// - Every call is a batch; the single-key methods are batches of one that
//   raise the item's error, the *_batch methods return one result per item
//   (the value, or a StoreError instance), so one bad key never hides the
//   others.
// - Arguments are checked and converted with the GIL held, before the store
//   sees anything: a bad argument raises and changes nothing. Buffers are
//   held through PyBufferView for the whole call.
// - The GIL is released around every client call (each waits on the network
//   or a disk), so other Python threads run meanwhile.
// - get() allocates the bytes object once, at the size an existence probe
//   reported, and reads straight into it: no intermediate buffer and no
//   second copy, at the cost of one more metadata round trip (see
//   python/README.md).
//
// Thread safety: the remote client is thread-safe, and PyStore's own state
// (the client pointer, the registered buffers and memory) is only touched with
// the GIL held, so one Store may be shared by any number of Python threads.
// close() waits for no one: calls already running keep the client alive (shared
// ownership) and finish; later calls raise StoreError.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mooncake_tier/client.h"
#include "mooncake_tier/remote_client.h"
#include "python/src/py_batch_queue.h"
#include "python/src/py_buffer.h"

namespace mooncake_tier::python {

class PyStore {
 public:
  // Connects with the GIL released; throws StatusError (UNAVAILABLE or
  // TIMEOUT naming the address when no master answers).
  explicit PyStore(const RemoteClientOptions& options);
  ~PyStore();  // closes

  PyStore(const PyStore&) = delete;
  PyStore& operator=(const PyStore&) = delete;

  const std::string& master() const { return master_; }
  bool closed() const { return client_ == nullptr; }
  // Unregisters every registered buffer and drops the client. Idempotent.
  void Close();

  void Put(pybind11::handle key, pybind11::handle data, pybind11::handle group,
           const std::string& preferred_node, bool hard_pin);
  pybind11::list PutBatch(pybind11::handle keys, pybind11::handle values,
                          pybind11::handle groups, bool hard_pin);

  pybind11::object Get(pybind11::handle key);
  pybind11::list GetBatch(pybind11::handle keys);

  uint64_t GetInto(pybind11::handle key, pybind11::handle buffer);
  pybind11::list GetIntoBatch(pybind11::handle keys, pybind11::handle buffers);

  // Raw memory (py_items.h): gathered puts from and scattered gets into
  // ranges the caller owns, one entry per key.
  pybind11::list PutFromAddresses(pybind11::handle keys,
                                  pybind11::handle addresses,
                                  pybind11::handle sizes,
                                  pybind11::handle groups, bool hard_pin);
  pybind11::list GetIntoAddresses(pybind11::handle keys,
                                  pybind11::handle addresses,
                                  pybind11::handle sizes);

  ExistsInfo Exists(pybind11::handle key);
  pybind11::list ExistsBatch(pybind11::handle keys);
  // Per key: whether a get would read it now (True / False), or the
  // StoreError instance. Exists without building an ExistsInfo per key.
  pybind11::list ReadableBatch(pybind11::handle keys);
  // The readable prefix of `keys` (Client::ProbePrefix).
  PrefixInfo ProbePrefix(pybind11::handle keys);

  GroupInfo Group(pybind11::handle group_id);
  void Remove(pybind11::handle key, bool force);
  pybind11::list RemoveBatch(pybind11::handle keys, bool force);
  void RemoveGroup(pybind11::handle group_id, bool force);

  void RegisterBuffer(pybind11::handle buffer);
  void UnregisterBuffer(pybind11::handle buffer);
  // Buffers currently registered, as the objects passed in.
  pybind11::list RegisteredBuffers() const;
  // Raw memory the caller owns and keeps valid until unregistered (or the
  // store is closed, which unregisters it).
  void RegisterMemory(pybind11::handle address, pybind11::handle size);
  // INVALID_ARGUMENT unless `address` starts registered memory.
  void UnregisterMemory(pybind11::handle address);

  // A non-blocking queue of batches over this store's client; it keeps
  // the client alive after close().
  std::unique_ptr<PyBatchQueue> NewBatchQueue(int workers, size_t max_pending);

  // Seconds one health-check round trip to the master took; raises what
  // Client::CheckHealth answered otherwise.
  double HealthCheck();

  // Benchmark reference: `rounds` passes of GetInto over `keys` into
  // `buffer`, in a C++ loop with the GIL released throughout. Returns
  // (seconds, bytes read); raises the first error.
  pybind11::tuple CppGetLoop(pybind11::handle keys, pybind11::handle buffer,
                             int64_t rounds);

 private:
  // The client, or StoreError (INVALID_ARGUMENT) once closed.
  // REQUIRES: GIL held.
  std::shared_ptr<Client> Acquire() const;

  std::vector<Status> PutAll(pybind11::handle keys, pybind11::handle values,
                             pybind11::handle groups,
                             const std::string& preferred_node, bool hard_pin);
  // One bytes object (or error) per key.
  std::vector<Result<pybind11::object>> GetAll(
      const std::vector<std::string>& keys);
  std::vector<Result<uint64_t>> GetIntoAll(pybind11::handle keys,
                                           pybind11::handle buffers);
  // Exists answers for a list of keys (GIL released for the call).
  std::vector<Result<ExistsInfo>> ExistsAll(pybind11::handle keys);
  std::vector<Status> RemoveAll(std::vector<std::string> keys, bool force);

  const std::string master_;
  // Guarded by the GIL.
  std::shared_ptr<Client> client_;
  std::vector<std::unique_ptr<PyBufferView>> registered_;
  std::vector<std::span<std::byte>> registered_memory_;
};

}  // namespace mooncake_tier::python
