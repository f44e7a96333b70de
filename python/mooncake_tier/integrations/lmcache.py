"""An LMCache multiprocess L2 adapter on mooncake-tier's batch queues.

Interface followed (read from the public sources in the stored index, not
copied): ``L2AdapterInterface`` in LMCache/LMCache
``lmcache/v1/distributed/l2_adapters/base.py`` (snapshot 000e8777), the
native-connector adapter ``native_connector_l2_adapter.py`` (0b43a455)
for the key format, the ``plugin`` loader ``plugin_l2_adapter.py``
(2b7c160f), and the store and prefetch controllers
(``storage_controllers/*_controller.py``, 00c5e646) for how the event fds
and results are consumed.

Load it as a plugin adapter (one ``--l2-adapter`` JSON)::

    {"type": "plugin",
     "module_path": "mooncake_tier.integrations.lmcache",
     "class_name": "MooncakeTierL2Adapter",
     "adapter_params": {"master_server_address": "10.0.0.1:50051",
                        "workers": 2, "max_pending": 256}}

LMCache builds it as ``MooncakeTierL2Adapter(adapter_params,
l1_memory_desc=...)``; the L1 region, when given, is registered with the
store. ``master_server_address`` defaults to ``$MOONCAKE_MASTER``;
``rpc_timeout`` / ``transfer_timeout`` (seconds) are optional.

How the interface is mapped:

- Each task kind has its own ``mooncake_tier.BatchQueue``; its
  ``fileno()`` is the kind's event fd (three distinct fds), readable while
  a completion of that kind waits to be taken. LMCache's controllers read
  an event fd after ``poll`` reports it (``os.eventfd_read``); that resets
  the queue's counter early, which is harmless because they then take
  every completion they wait for, and the queue makes the fd readable
  again when a completion arrives while none waits.
- store: one gathered ``submit_put_from_addresses`` per task; a key already
  stored counts as stored (keys are write-once); the task succeeds when
  every key does, and reports the bytes it newly wrote.
  ``pop_completed_store_tasks`` takes every finished store task.
- lookup and lock: ``submit_exists``; bit i is set when key i can be read
  now. The lock is a client-side count, as in LMCache's native connector
  adapter: the store does not pin on lookup, so a locked key may still be
  evicted and its load fail (a load may fail by the interface).
- load: one scattered ``submit_get_into_addresses``; bit i is set when the
  object filled its memory object exactly.
- ``query_*_result`` takes the one task's completion (``wait(task, 0)``), so
  it answers once, and never takes another task's result.
- When a queue is full (``max_pending`` tasks not yet taken), a submit
  first moves the finished ones aside (answered later by the query and pop
  calls) and, if all are still running, waits for one to finish.

Memory objects: anything with an address: an LMCache ``MemoryObj``
(``data_ptr`` and ``get_size()``, or a ``byte_array``), a tensor, a numpy
array or another buffer; the caller keeps them alive until the task is
taken, as the interface says. Keys: LMCache ``ObjectKey`` s become
``model@kv_rank(08x)@group(x)@chunk_hash(hex)[@salt]``, the native
connectors' form; a ``str`` or ``bytes`` key is used as it is. Bitmaps and
store results are LMCache's own when LMCache is installed, else the small
``Bitmap`` and ``L2StoreResult`` below with the same methods. Not mapped:
``delete`` (the store evicts by itself), ``list_l2_keys``, capacity-based
global eviction (``max_capacity_bytes`` 0).

Thread safety: LMCache's store and prefetch controllers call one adapter
from two threads; each queue's side state has its own lock.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections import defaultdict
from typing import Any, Callable, Iterable, Sequence

import mooncake_tier as mt

from . import address_and_size

class _OwnBitmap:
    """One bit per key of a task: the methods of LMCache's Bitmap that its
    controllers use, for when LMCache's native module is absent."""

    def __init__(self, size: int) -> None:
        self._bits = [False] * size

    def __len__(self) -> int:
        return len(self._bits)

    def set(self, i: int) -> None:
        self._bits[i] = True

    def test(self, i: int) -> bool:
        return self._bits[i]

    def popcount(self) -> int:
        return sum(self._bits)

    def count_leading_ones(self) -> int:
        return next((i for i, b in enumerate(self._bits) if not b),
                    len(self._bits))

    def get_indices_list(self) -> list[int]:
        return [i for i, b in enumerate(self._bits) if b]

    def get_indices_set(self) -> set[int]:
        return set(self.get_indices_list())

    def gather(self, items: Sequence[Any]) -> list[Any]:
        return [items[i] for i in self.get_indices_list()]


def _lmcache_bitmap() -> Any:
    for module in ("lmcache.lmcache_native", "lmcache.native_storage_ops"):
        try:
            return importlib.import_module(module).Bitmap
        except (ImportError, AttributeError):
            pass
    return None


Bitmap = _lmcache_bitmap() or _OwnBitmap

try:  # LMCache's plugin loader accepts only subclasses of its interface.
    from lmcache.v1.distributed.internal_api import L2StoreResult
    from lmcache.v1.distributed.l2_adapters.base import \
        L2AdapterInterface as _Base
except ImportError:  # LMCache absent: the same shapes, without the ABC.
    class _Base:  # type: ignore[no-redef]
        def __init__(self, max_capacity_bytes: int = 0) -> None:
            pass

        def _notify_keys_stored(self, keys: list, sizes: list) -> None:
            pass

        def _notify_keys_accessed(self, keys: list) -> None:
            pass

    class L2StoreResult(int):  # type: ignore[no-redef]
        """Bytes written (>= 0) on success, -1 on failure."""

        def __new__(cls, success: bool, bytes_transferred: int):
            return super().__new__(cls, bytes_transferred if success else -1)

        def is_successful(self) -> bool:
            return int(self) >= 0

        def bytes_transferred(self) -> int:
            return max(int(self), 0)

__all__ = ["MooncakeTierL2Adapter", "Bitmap", "L2StoreResult"]

_log = logging.getLogger("mooncake_tier.integrations.lmcache")


def key_string(key: Any) -> str | bytes:
    """The store key of an LMCache ObjectKey (str / bytes as they are)."""
    if isinstance(key, (str, bytes)):
        return key
    chunk = key.chunk_hash
    chunk = chunk.hex() if isinstance(chunk, (bytes, bytearray)) \
        else format(chunk, "x")
    text = (f"{key.model_name}@{key.kv_rank:08x}"
            f"@{getattr(key, 'object_group_id', 0):x}@{chunk}")
    salt = getattr(key, "cache_salt", "")
    return f"{text}@{salt}" if salt else text


class _Lane:
    """One batch queue (one task kind) and its tasks' side data: what each
    task needs when its result is taken, and results taken early."""

    def __init__(self, store: mt.Store, workers: int,
                 max_pending: int) -> None:
        self.queue = store.batch_queue(workers=workers,
                                       max_pending=max_pending)
        self._lock = threading.Lock()
        self._meta: dict[int, Any] = {}
        self._early: dict[int, list[Any]] = {}

    def submit(self, call: Callable[[mt.BatchQueue], int], meta: Any) -> int:
        while True:
            with self._lock:
                try:
                    task = call(self.queue)
                    self._meta[task] = meta
                    return task
                except mt.QueueFullError:
                    taken = self.queue.collect()
                    self._early.update(taken)
            if not taken:  # every place holds a running task
                time.sleep(0.001)

    def take(self, task: int) -> tuple[list[Any], Any] | None:
        """The task's results and side data, once; None until it is done."""
        with self._lock:
            results = self._early.pop(task, None)
            if results is None:
                try:
                    results = self.queue.wait(task, 0)
                except (mt.StoreTimeoutError, mt.TaskNotFoundError):
                    return None
            return results, self._meta.pop(task)

    def take_all(self) -> list[tuple[int, list[Any], Any]]:
        with self._lock:
            done = list(self._early.items()) + self.queue.collect()
            self._early.clear()
            return [(task, results, self._meta.pop(task))
                    for task, results in done]

    def close(self) -> None:
        self.queue.close()


class MooncakeTierL2Adapter(_Base):
    """LMCache L2 adapter backed by mooncake-tier (see the module doc)."""

    def __init__(self, config: Any = None, l1_memory_desc: Any = None, *,
                 store: mt.Store | None = None) -> None:
        super().__init__(max_capacity_bytes=0)
        params = dict(config or {}) if not hasattr(config, "__dict__") \
            else dict(vars(config))
        if store is None:
            master = params.get("master_server_address") or \
                os.environ.get("MOONCAKE_MASTER")
            if not master:
                raise ValueError("no master address: set adapter_params."
                                 "master_server_address or MOONCAKE_MASTER")
            store = mt.Store(str(master),
                             rpc_timeout=float(params.get("rpc_timeout", 5)),
                             transfer_timeout=float(
                                 params.get("transfer_timeout", 5)))
        self._store = store
        self._l1_address = 0  # the L1 region, registered for RDMA
        ptr = int(getattr(l1_memory_desc, "ptr", 0) or 0)
        size = int(getattr(l1_memory_desc, "size", 0) or 0)
        if ptr and size > 0:
            store.register_memory(ptr, size)
            self._l1_address = ptr
        workers = int(params.get("workers", 2))
        max_pending = int(params.get("max_pending", 256))
        self._stores = _Lane(store, workers, max_pending)
        self._lookups = _Lane(store, workers, max_pending)
        self._loads = _Lane(store, workers, max_pending)
        self._locks: dict[Any, int] = defaultdict(int)
        self._locks_mu = threading.Lock()
        self._closed = False

    # --- event fds ----------------------------------------------------------

    def get_store_event_fd(self) -> int:
        return self._stores.queue.fileno()

    def get_lookup_and_lock_event_fd(self) -> int:
        return self._lookups.queue.fileno()

    def get_load_event_fd(self) -> int:
        return self._loads.queue.fileno()

    # --- store --------------------------------------------------------------

    def submit_store_task(self, keys: Sequence[Any],
                          objects: Sequence[Any]) -> int:
        names = [key_string(k) for k in keys]
        addresses, sizes = _memory(objects, len(keys))
        return self._stores.submit(
            lambda q: q.submit_put_from_addresses(names, addresses, sizes),
            (list(keys), sizes, list(objects)))

    def pop_completed_store_tasks(self) -> dict[int, L2StoreResult]:
        """Every finished store task: success and bytes newly written."""
        done = {}
        for task, results, (keys, sizes, _objects) in self._stores.take_all():
            written = [r == 0 for r in results]
            ok = all(w or isinstance(r, mt.ObjectExistsError)
                     for w, r in zip(written, results))
            if not ok:
                _log.warning("store task %d: %s", task, next(
                    r for r in results if isinstance(r, mt.StoreError)
                    and not isinstance(r, mt.ObjectExistsError)))
            nbytes = sum(s for s, w in zip(sizes, written) if w)
            done[task] = L2StoreResult(ok, nbytes)
            if ok:
                self._notify_keys_stored(list(keys), [
                    s if w else 0 for s, w in zip(sizes, written)])
        return done

    # --- lookup and lock ----------------------------------------------------

    def submit_lookup_and_lock_task(self, keys: Sequence[Any],
                                    group_layout_descs: Any = None) -> int:
        """``group_layout_descs`` (newer LMCache) is accepted and unused."""
        names = [key_string(k) for k in keys]
        return self._lookups.submit(lambda q: q.submit_exists(names),
                                    list(keys))

    def query_lookup_and_lock_result(self, task_id: int) -> Bitmap | None:
        taken = self._lookups.take(task_id)
        if taken is None:
            return None
        results, keys = taken
        bitmap = Bitmap(len(keys))
        with self._locks_mu:
            for i, (key, result) in enumerate(zip(keys, results)):
                if isinstance(result, int):
                    bitmap.set(i)
                    self._locks[key] += 1
        return bitmap

    def submit_unlock(self, keys: Iterable[Any]) -> None:
        with self._locks_mu:
            for key in keys:
                if self._locks.get(key, 0) > 1:
                    self._locks[key] -= 1
                else:
                    self._locks.pop(key, None)

    def locked_count(self, key: Any) -> int:
        """Lookups holding ``key`` locked (client-side only)."""
        with self._locks_mu:
            return self._locks.get(key, 0)

    # --- load ---------------------------------------------------------------

    def submit_load_task(self, keys: Sequence[Any],
                         objects: Sequence[Any]) -> int:
        names = [key_string(k) for k in keys]
        addresses, sizes = _memory(objects, len(keys))
        return self._loads.submit(
            lambda q: q.submit_get_into_addresses(names, addresses, sizes),
            (list(keys), sizes, list(objects)))

    def query_load_result(self, task_id: int) -> Bitmap | None:
        taken = self._loads.take(task_id)
        if taken is None:
            return None
        results, (keys, sizes, _objects) = taken
        bitmap = Bitmap(len(keys))
        loaded = []
        for i, (result, size) in enumerate(zip(results, sizes)):
            if result == size:
                bitmap.set(i)
                loaded.append(keys[i])
        if loaded:
            self._notify_keys_accessed(loaded)
        return bitmap

    # --- status and cleanup -------------------------------------------------

    def report_status(self) -> dict[str, Any]:
        return {"is_healthy": not self._closed, "type": "mooncake_tier",
                "pending": {"store": self._stores.queue.pending,
                            "lookup": self._lookups.queue.pending,
                            "load": self._loads.queue.pending}}

    def close(self) -> None:
        """Stops the queues (results not taken are dropped), unregisters
        the L1 region and closes the store client. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for lane in (self._stores, self._lookups, self._loads):
            lane.close()
        if self._l1_address:
            try:
                self._store.unregister_memory(self._l1_address)
            except mt.StoreError:
                pass
        self._store.close()


def _memory(objects: Sequence[Any], count: int) -> tuple[list[int], list[int]]:
    if len(objects) != count:
        raise ValueError(f"{len(objects)} memory objects for {count} keys")
    pairs = [address_and_size(obj) for obj in objects]
    return [a for a, _ in pairs], [s for _, s in pairs]
