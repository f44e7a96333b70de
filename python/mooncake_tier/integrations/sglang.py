"""SGLang HiCache L3 storage backend on mooncake-tier.

Interface followed (read from the public sources in the stored index, not
copied): ``HiCacheStorage`` in sgl-project/sglang
``python/sglang/srt/mem_cache/hicache_storage.py``, the dynamic loader in
``mem_cache/storage/backend_factory.py`` and the cache controller in
``srt/managers/cache_controller.py``, all at commit 001067ff
(001067fffe33427bee0ed2f007fb7551a1d76b44); key layout and host-pool calls
as in the built-in Mooncake backend
``mem_cache/storage/mooncake_store/mooncake_store.py`` at 00fe477f.

Load it with SGLang's dynamic backend loader::

    python -m sglang.launch_server --model-path ... \\
        --enable-hierarchical-cache --hicache-storage-backend dynamic \\
        --hicache-storage-backend-extra-config '{
            "backend_name": "mooncake_tier",
            "module_path": "mooncake_tier.integrations.sglang",
            "class_name": "MooncakeTierHiCacheStorage",
            "interface_v1": 1,
            "master_server_address": "10.0.0.1:50051"}'

``interface_v1: 1`` is required: only with it does the controller use the
zero-copy ``batch_get_v1``/``batch_set_v1`` for a dynamic backend (else it
copies pages through ``batch_get``/``batch_set``, which this backend
refuses at construction). The loader builds the class as
``cls(storage_config, {})`` and then calls ``register_mem_pool_host``.

What is mapped:

- Master: extra config ``master_server_address`` (a cluster may list its
  masters, comma-separated), else the JSON file named by
  ``SGLANG_HICACHE_MOONCAKE_CONFIG_PATH``, else ``$MOONCAKE_MASTER``, the
  order SGLang's Mooncake backend reads them in. Optional ``rpc_timeout``
  and ``transfer_timeout`` (seconds) are this backend's own keys.
- Keys, as SGLang's Mooncake backend names them: a prefix of
  ``extra_backend_tag`` and the model name ("/" turned to "-") joined by
  "_"; MHA pages are two objects ``{prefix}_{hash}_{tp}_k`` and ``..._v``
  (``{tp}_{pp}`` under pipeline parallelism, one pair per target rank when
  heads are split), MLA pages one object ``{prefix}_{hash}_{pp or ""}_k``.
  A page counts only when all its objects are readable.
- Host pool: addresses from ``mem_pool_host.get_page_buffer_meta(indices)``
  (``get_split_heads_page_buffer_meta`` when heads are split); several
  buffers per MLA page (layer-first layout) become the parts of one object.
  The pool's tensors (``get_hybrid_pool_buffer()``, else ``kv_buffer``) are
  registered once with the store.
- ``batch_exists``: one prefix probe; ``batch_set_v1``: one existence check,
  then one put of the objects not yet stored (a key stored meanwhile is a
  success: keys are write-once); ``batch_get_v1``: one scattered read.

Ignored: Mooncake's segment sizes, protocol, device and metadata-server
settings (the store's nodes bring the memory; the transport picks the
fabric), ``extra_info.prefix_keys``, ``enable_group_semantics``. Refused:
``client_server_address`` (standalone client mode), a non-default
``tenant_id``, hybrid pools and the v2 calls (``batch_*_v2``), and
``clear()`` clears nothing (a store-wide clear is an admin action).

Thread safety: SGLang's prefetch and backup threads call one instance at
once; the store client is thread-safe and the counters are locked.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Any, Sequence

import mooncake_tier as mt

from . import address_and_size, release

try:  # The loader accepts only subclasses of SGLang's base class.
    from sglang.srt.mem_cache.hicache_storage import HiCacheStorage as _Base
except ImportError:  # SGLang absent: the same methods, without the ABC.
    class _Base:  # type: ignore[no-redef]
        def register_mem_pool_host(self, mem_pool_host: Any) -> None:
            self.mem_pool_host = mem_pool_host

__all__ = ["MooncakeTierHiCacheStorage"]

_log = logging.getLogger("mooncake_tier.integrations.sglang")


def _put_ok(result: Any) -> bool:
    return result is None or isinstance(result, mt.ObjectExistsError)


def _master_address(extra: dict[str, Any]) -> str:
    if extra.get("client_server_address") and \
            not extra.get("master_server_address"):
        raise ValueError("client_server_address (standalone client mode) is "
                         "not supported: give master_server_address")
    tenant = extra.get("tenant_id")
    if tenant not in (None, "", "default"):
        raise ValueError(f"tenant_id {tenant!r} is refused: the store has "
                         "one key space (use extra_backend_tag)")
    if extra.get("master_server_address"):
        return str(extra["master_server_address"])
    path = os.environ.get("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH")
    if path:
        with open(path) as f:
            address = json.load(f).get("master_server_address")
        if address:
            return str(address)
    if os.environ.get("MOONCAKE_MASTER"):
        return os.environ["MOONCAKE_MASTER"]
    raise ValueError("no master address: set master_server_address in "
                     "--hicache-storage-backend-extra-config, or "
                     "MOONCAKE_MASTER")


class MooncakeTierHiCacheStorage(_Base):
    """HiCache storage whose pages live in mooncake-tier (see module doc)."""

    def __init__(self, storage_config: Any = None,
                 loader_kwargs: dict[str, Any] | None = None, *,
                 store: mt.Store | None = None) -> None:
        del loader_kwargs  # the dynamic loader passes {}
        extra = dict(getattr(storage_config, "extra_config", None) or {})
        if not extra.get("interface_v1"):
            raise ValueError(
                "MooncakeTierHiCacheStorage needs \"interface_v1\": 1 in "
                "--hicache-storage-backend-extra-config: it serves only the "
                "zero-copy batch_get_v1/batch_set_v1 path")
        if store is None:
            store = mt.Store(_master_address(extra),
                             rpc_timeout=float(extra.get("rpc_timeout", 5.0)),
                             transfer_timeout=float(
                                 extra.get("transfer_timeout", 5.0)))
        self._store = store
        cfg = storage_config
        tp_rank = int(getattr(cfg, "tp_rank", 0))
        tp_size = int(getattr(cfg, "tp_size", 1))
        pp_rank = int(getattr(cfg, "pp_rank", 0))
        pp_size = int(getattr(cfg, "pp_size", 1))
        self.is_mla = bool(getattr(cfg, "is_mla_model", False))
        self.metrics_enabled = bool(getattr(cfg, "enable_storage_metrics",
                                            False))

        parts = []
        if extra.get("extra_backend_tag") is not None:
            parts.append(str(extra["extra_backend_tag"]))
        model = getattr(cfg, "model_name", None)
        if model:
            parts.append("-".join(model.split("/")))
        self.key_prefix = "_".join(parts) + "_" if parts else ""

        self.split_factor = 0
        ranks = [tp_rank]
        if getattr(cfg, "should_split_heads", False):
            self.split_factor = int(cfg.tp_lcm_size) // tp_size
            ranks = [tp_rank * self.split_factor + i
                     for i in range(self.split_factor)]
        pp = f"_{pp_rank}" if pp_size > 1 else ""
        if self.is_mla:
            # MLA pages are the same on every TP rank: one object, no rank.
            self.suffixes = [f"_{pp_rank if pp_size > 1 else ''}_k"]
        else:
            self.suffixes = [f"_{r}{pp}_{kv}" for r in ranks
                             for kv in ("k", "v")]

        self._registered: list[int] = []
        self._lock = threading.Lock()
        self._stats: dict[str, list[float]] = {
            "prefetch_pgs": [], "backup_pgs": [], "prefetch_bandwidth": [],
            "backup_bandwidth": []}

    # --- host pool ----------------------------------------------------------

    def register_mem_pool_host(self, mem_pool_host: Any) -> None:
        """Keeps the host pool and registers its tensors with the store."""
        super().register_mem_pool_host(mem_pool_host)
        if getattr(mem_pool_host, "kv_buffer", None) is None:
            raise NotImplementedError(
                "hybrid host pools (the v2 interface) are not supported")
        get_buffers = getattr(mem_pool_host, "get_hybrid_pool_buffer",
                              lambda: [mem_pool_host.kv_buffer])
        for buffer in get_buffers():
            address, size = address_and_size(buffer)
            if size == 0 or address in self._registered:
                continue
            try:
                self._store.register_memory(address, size)
                self._registered.append(address)
            except mt.StoreError as e:  # transfers work unregistered too
                _log.warning("register_memory(%#x, %d): %s", address, size, e)

    def register_mem_host_pool_v2(self, host_pool: Any,
                                  host_pool_name: Any) -> None:
        if str(host_pool_name) != "kv":
            raise NotImplementedError(f"host pool {host_pool_name!s}: hybrid "
                                      "pools (the v2 interface) are refused")

    # --- the v1 zero-copy interface -----------------------------------------

    def batch_exists(self, keys: Sequence[str],
                     extra_info: Any = None) -> int:
        """How many pages, from the first, are fully readable: one probe."""
        if not keys:
            return 0
        try:
            length = self._store.probe_prefix(self._object_keys(keys))[0]
        except mt.StoreError as e:
            _log.warning("batch_exists: %s", e)
            return 0
        return length // len(self.suffixes)

    def exists(self, key: str) -> bool:
        """True when the page ``key`` is fully readable."""
        return self.batch_exists([key]) == 1

    def batch_get_v1(self, keys: Sequence[str], host_indices: Any,
                     extra_info: Any = None) -> list[bool]:
        """Reads each page straight into its host-pool slots."""
        if not keys:
            return []
        start = time.perf_counter()
        try:
            object_keys = self._object_keys(keys)
            addresses, sizes = self._page_buffers(len(keys), host_indices)
            got = self._store.get_into_addresses(object_keys, addresses,
                                                 sizes)
        except (mt.StoreError, TypeError, ValueError) as e:
            _log.warning("batch_get_v1: %s", e)
            return [False] * len(keys)
        done = [isinstance(n, int) and n == _total(size)
                for n, size in zip(got, sizes)]
        pages = self._per_page(done)
        self._record("prefetch", sum(pages), sizes, start)
        return pages

    def batch_set_v1(self, keys: Sequence[str], host_indices: Any,
                     extra_info: Any = None) -> list[bool]:
        """Writes the pages not yet stored from their host-pool slots."""
        if not keys:
            return []
        start = time.perf_counter()
        try:
            object_keys = self._object_keys(keys)
            addresses, sizes = self._page_buffers(len(keys), host_indices)
            done = [r is True
                    for r in self._store.readable_batch(object_keys)]
            missing = [i for i, present in enumerate(done) if not present]
            if missing:
                put = self._store.put_from_addresses(
                    [object_keys[i] for i in missing],
                    [addresses[i] for i in missing],
                    [sizes[i] for i in missing])
                for i, result in zip(missing, put):
                    done[i] = _put_ok(result)
                    if not done[i]:
                        _log.warning("batch_set_v1 %s: %s", object_keys[i],
                                     result)
        except (mt.StoreError, TypeError, ValueError) as e:
            _log.warning("batch_set_v1: %s", e)
            return [False] * len(keys)
        self._record("backup", len({i // len(self.suffixes) for i in missing}),
                     [sizes[i] for i in missing], start)
        return self._per_page(done)

    # --- legacy forms (abstract in HiCacheStorage): zero-copy only, on the
    # object named prefix + key, at addresses + sizes or a tensor's memory.

    def get(self, key: str, target_location: Any = None,
            target_sizes: Any = None) -> bool:
        return self.batch_get([key], [target_location],
                              None if target_sizes is None
                              else [target_sizes])[0] is not None

    def batch_get(self, keys: Sequence[str], target_locations: Any = None,
                  target_sizes: Any = None) -> list[Any]:
        """Per key: its target location once filled, else None."""
        addresses, sizes = _locations(target_locations, target_sizes,
                                      len(keys))
        try:
            got = self._store.get_into_addresses(
                [self.key_prefix + k for k in keys], addresses, sizes)
        except (mt.StoreError, TypeError) as e:
            _log.warning("batch_get: %s", e)
            return [None] * len(keys)
        return [loc if isinstance(n, int) else None
                for loc, n in zip(target_locations, got)]

    def set(self, key: str, value: Any = None, target_location: Any = None,
            target_sizes: Any = None) -> bool:
        return self.batch_set(
            [key], None if value is None else [value],
            None if target_location is None else [target_location],
            None if target_sizes is None else [target_sizes])

    def batch_set(self, keys: Sequence[str], values: Any = None,
                  target_locations: Any = None,
                  target_sizes: Any = None) -> bool:
        """True when every key is stored (already stored counts)."""
        addresses, sizes = _locations(
            values if target_locations is None else target_locations,
            target_sizes, len(keys))
        try:
            put = self._store.put_from_addresses(
                [self.key_prefix + k for k in keys], addresses, sizes)
        except (mt.StoreError, TypeError) as e:
            _log.warning("batch_set: %s", e)
            return False
        return all(_put_ok(r) for r in put)

    # --- housekeeping -------------------------------------------------------

    def clear(self) -> None:
        _log.warning("clear() removes nothing: the store is shared; remove "
                     "keys with mooncake-tierctl")

    def close(self) -> None:
        """Unregisters the host pool and closes the store client."""
        release(self._store, self._registered)

    def get_stats(self) -> Any:
        """SGLang's StorageMetrics since the last call (pages per batch and
        GB/s), when metrics are enabled and SGLang is installed; else None."""
        if not self.metrics_enabled:
            return None
        try:
            from sglang.srt.observability.metrics_collector import \
                StorageMetrics
        except ImportError:
            return None
        metrics = StorageMetrics()
        with self._lock:
            for name, values in self._stats.items():
                getattr(metrics, name).extend(values)
                values.clear()
        return metrics

    # --- internals ----------------------------------------------------------

    def _object_keys(self, keys: Sequence[str]) -> list[str]:
        return [f"{self.key_prefix}{key}{suffix}" for key in keys
                for suffix in self.suffixes]

    def _page_buffers(self, pages: int, host_indices: Any
                      ) -> tuple[list[Any], list[Any]]:
        """Address and size (or lists of them) of every object, in key
        order, from the host pool's page metadata."""
        pool = self.mem_pool_host
        if len(host_indices) != pages * pool.page_size:
            raise ValueError(f"{len(host_indices)} host indices for {pages} "
                             f"pages of {pool.page_size} tokens")
        if self.split_factor:
            ptrs, sizes = pool.get_split_heads_page_buffer_meta(
                host_indices, self.split_factor)
        else:
            ptrs, sizes = pool.get_page_buffer_meta(host_indices)
        objects = pages * len(self.suffixes)
        if len(ptrs) == objects:
            return list(ptrs), list(sizes)
        if self.is_mla and len(ptrs) % objects == 0:
            n = len(ptrs) // objects  # layer-first: one buffer per layer
            return ([list(ptrs[i:i + n]) for i in range(0, len(ptrs), n)],
                    [list(sizes[i:i + n]) for i in range(0, len(sizes), n)])
        raise ValueError(
            f"the host pool gives {len(ptrs)} buffers for {objects} objects; "
            "MHA pools need a page_first layout")

    def _per_page(self, done: list[bool]) -> list[bool]:
        n = len(self.suffixes)
        return [all(done[i:i + n]) for i in range(0, len(done), n)]

    def _record(self, kind: str, pages: int, sizes: list[Any],
                start: float) -> None:
        if not self.metrics_enabled or pages == 0:
            return
        seconds = max(time.perf_counter() - start, 1e-9)
        gbps = sum(_total(s) for s in sizes) / seconds / (1 << 30)
        with self._lock:
            self._stats[f"{kind}_pgs"].append(pages)
            self._stats[f"{kind}_bandwidth"].append(gbps)


def _total(size: Any) -> int:
    return sum(size) if isinstance(size, (list, tuple)) else int(size)


def _locations(locations: Any, sizes: Any, count: int
               ) -> tuple[list[Any], list[Any]]:
    """Addresses and sizes from raw addresses + sizes, or from objects."""
    if locations is None or len(locations) != count or \
            any(loc is None for loc in locations):
        raise ValueError("zero-copy only: pass one target location per key")
    if sizes is not None:
        return list(locations), list(sizes)
    pairs = [address_and_size(loc) for loc in locations]
    return [a for a, _ in pairs], [s for _, s in pairs]
