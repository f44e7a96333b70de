"""The worker half of a vLLM v1 KV connector on mooncake-tier.

Interface followed (read from the public sources in the stored index, not
copied): ``KVConnectorBase_V1`` in vllm-project/vllm
``vllm/distributed/kv_transfer/kv_connector/v1/base.py`` and the Mooncake
store connector's worker ``.../v1/mooncake/store/worker.py``, both at commit
003df296 (003df2961dd8830c317a61f9745ccd557da9fa06), with its key format
(``PoolKey`` in ``.../store/data.py``, 015cb3c6).

``MooncakeTierStoreWorker`` does what vLLM's store worker does, against this
store, without importing vLLM:

- ``register_kv_caches(kv_caches)``: registers each distinct KV buffer once
  and finds its block layout from the strides, as vLLM does: a dimension
  whose stride exceeds one block's bytes splits the buffer into segments
  (K and V of FlashAttention's ``(2, num_blocks, ...)``), else the buffer is
  one segment (FlashInfer / MLA, blocks outermost).
- a block is ONE store object whose parts are that block's page in every
  segment (all layers, K and V), gathered on save (``put_from_addresses``)
  and scattered on load (``get_into_addresses``): no staging copy;
- ``lookup(num_tokens, block_hashes)``: the longest cached prefix in tokens,
  with ONE prefix probe over the keys of every rank namespace a load needs
  (a block counts only when all of them are readable); a hit covering the
  whole prompt gives up its last block so the last token is recomputed;
- ``save``: one existence check, then one gathered put of the blocks not
  yet stored (a key stored meanwhile is a success: keys are write-once);
  ``load``: one scattered get; both run on a small thread pool
  (``workers``) and are reported by ``get_finished(finished_req_ids) ->
  (done_sending, done_recving)``; blocks that failed to load are reported
  by ``get_block_ids_with_load_errors()`` no later than their request.

Selecting it: vLLM loads a connector class by name from
``kv_connector_module_path``::

    vllm serve MODEL --kv-transfer-config '{
        "kv_connector": "MooncakeTierConnector",
        "kv_connector_module_path": "my_deployment.mt_connector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": {"master_server_address": "h:50051"}}'

where ``MooncakeTierConnector`` is a thin ``KVConnectorBase_V1`` subclass
(it needs vLLM, so it is not shipped here). Its scheduler side answers
``get_num_new_matched_tokens`` with ``worker.lookup`` (through vLLM's
lookup RPC to rank 0, or its own ``Store``) and marks loads async; its
worker side builds a ``MooncakeTierStoreWorker`` from the config
(``block_size``, ``num_gpu_blocks``, model name, TP rank) and, in
``get_finished``, calls ``worker.load`` / ``worker.save`` for each request
of the step's metadata (its block hashes and block ids), then returns
``worker.get_finished(finished_req_ids)``; ``start_load_kv`` and
``wait_for_save`` do nothing, as in vLLM's Mooncake store connector.

Keys, as vLLM's Mooncake store connector names them:
``[cache_prefix@]{model}@tp_rank:{r}@pcp0@dcp0@pp_rank:{p}@group:0@{hash}``
where ``r`` is ``tp_rank // replication`` (ranks holding the same bytes,
e.g. MLA, share a namespace). Not covered: several KV cache groups (hybrid
models), context parallelism, partial-block hits, KV events, and GPU
memory unless the store's transport can reach it (UCX with CUDA support).

Thread safety: the engine thread calls save/load/get_finished while the
pool's threads run transfers; the shared state is locked.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import mooncake_tier as mt

from . import address_and_size, release

__all__ = ["MooncakeTierStoreWorker"]

_log = logging.getLogger("mooncake_tier.integrations.vllm")


def _buffer_layout(cache: Any) -> tuple[int, int, tuple[int, ...],
                                        tuple[int, ...]]:
    """(storage address, storage bytes, shape, byte strides) of a KV cache
    tensor or numpy array."""
    if hasattr(cache, "untyped_storage"):  # torch.Tensor
        storage = cache.untyped_storage()
        item = cache.element_size()
        return (int(storage.data_ptr()), int(storage.nbytes()),
                tuple(cache.shape), tuple(s * item for s in cache.stride()))
    address, size = address_and_size(cache)
    return address, size, tuple(cache.shape), tuple(cache.strides)


def _hash_hex(block_hash: Any) -> str:
    if isinstance(block_hash, (bytes, bytearray, memoryview)):
        return bytes(block_hash).hex()
    if isinstance(block_hash, int):
        return format(block_hash, "x")
    return str(block_hash)


class MooncakeTierStoreWorker:
    """Saves, loads and looks up vLLM KV blocks in mooncake-tier."""

    def __init__(self, master: str | mt.Store, *, block_size: int,
                 num_blocks: int, model_name: str = "model",
                 tp_rank: int = 0, tp_size: int = 1, pp_rank: int = 0,
                 replication: int = 1, cache_prefix: str = "",
                 workers: int = 2) -> None:
        """``block_size``: tokens per block; ``num_blocks``: blocks in each
        KV cache buffer (vLLM's ``num_gpu_blocks``); ``replication``: TP
        ranks that hold the same bytes (1 for sharded KV heads, ``tp_size``
        for MLA). ``master`` is an address or an open ``Store``."""
        self._store = master if isinstance(master, mt.Store) \
            else mt.Store(master)
        self.block_size = block_size
        self.num_blocks = num_blocks
        head = f"{cache_prefix}@" if cache_prefix else ""
        tail = f"@pcp0@dcp0@pp_rank:{pp_rank}@group:0@"
        self._own_prefix = (f"{head}{model_name}@tp_rank:"
                            f"{tp_rank // replication}{tail}")
        # Every namespace a load needs: one per distinct shard.
        self._lookup_prefixes = [
            f"{head}{model_name}@tp_rank:{r}{tail}"
            for r in range(max(1, tp_size // replication))]
        self._segments: list[tuple[int, int]] = []  # (address, block bytes)
        self._registered: list[int] = []
        self._pool = ThreadPoolExecutor(workers,
                                        thread_name_prefix="mt-vllm")
        self._lock = threading.Lock()
        self._saves_left: dict[str, int] = defaultdict(int)
        self._loads_left: dict[str, int] = defaultdict(int)
        self._finished_reqs: set[str] = set()
        self._recv_done: set[str] = set()
        self._load_errors: set[int] = set()
        self.stats = {"saved_blocks": 0, "skipped_blocks": 0,
                      "loaded_blocks": 0, "failed_blocks": 0}

    # --- registration -------------------------------------------------------

    def register_kv_caches(self, kv_caches: dict[str, Any]) -> None:
        """Registers each distinct buffer and derives the block layout. A
        value may be a list of tensors sharing one buffer (Mamba state)."""
        seen: set[int] = set()
        segments = []
        for value in kv_caches.values():
            cache = value[0] if isinstance(value, (list, tuple)) else value
            base, nbytes, shape, strides = _buffer_layout(cache)
            if base in seen:
                continue
            seen.add(base)
            try:
                self._store.register_memory(base, nbytes)
                self._registered.append(base)
            except mt.StoreError as e:  # transfers work unregistered too
                _log.warning("register_memory(%#x, %d): %s", base, nbytes, e)
            block_bytes = nbytes // self.num_blocks
            outer = [d for d, s in enumerate(strides) if s > block_bytes]
            if not outer:
                segments.append((base, block_bytes))
                continue
            stride = strides[outer[0]]
            segments += [(base + i * stride, stride // self.num_blocks)
                          for i in range(shape[outer[0]])]
        self._segments = segments

    # --- lookup -------------------------------------------------------------

    def lookup(self, num_tokens: int, block_hashes: Sequence[Any]) -> int:
        """Leading tokens of a ``num_tokens`` prompt that can be loaded."""
        blocks = min(len(block_hashes), num_tokens // self.block_size)
        if blocks == 0:
            return 0
        keys = [prefix + _hash_hex(h) for h in block_hashes[:blocks]
                for prefix in self._lookup_prefixes]
        try:
            length = self._store.probe_prefix(keys)[0]
        except mt.StoreError as e:
            _log.error("lookup: %s", e)
            return 0
        hits = length // len(self._lookup_prefixes)
        if hits * self.block_size >= num_tokens:  # recompute the last token
            hits = (num_tokens - 1) // self.block_size
        return hits * self.block_size

    # --- save / load --------------------------------------------------------

    def save(self, req_id: str, block_hashes: Sequence[Any],
             block_ids: Sequence[int], ready: Any = None) -> None:
        """Queues the save of full blocks ``block_ids[i]`` under
        ``block_hashes[i]``. ``ready`` (e.g. a CUDA event) is
        ``synchronize()``d before the blocks are read."""
        keys, ids = self._keys_and_ids(block_hashes, block_ids)
        with self._lock:
            self._saves_left[req_id] += 1
        self._pool.submit(self._run_save, req_id, keys, ids, ready)

    def load(self, req_id: str, block_hashes: Sequence[Any],
             block_ids: Sequence[int]) -> None:
        """Queues the load of ``block_hashes[i]`` into ``block_ids[i]``."""
        keys, ids = self._keys_and_ids(block_hashes, block_ids)
        with self._lock:
            self._loads_left[req_id] += 1
        self._pool.submit(self._run_load, req_id, keys, ids)

    def get_finished(self, finished_req_ids: set[str]
                     ) -> tuple[set[str], set[str]]:
        """(requests whose saves are all done and that vLLM has named as
        finished, now or before; requests whose loads are all done)."""
        with self._lock:
            for req in finished_req_ids:
                if req in self._saves_left:
                    self._finished_reqs.add(req)
            sending = {r for r in self._finished_reqs
                       if self._saves_left[r] == 0}
            for r in sending:
                self._finished_reqs.discard(r)
                del self._saves_left[r]
            receiving, self._recv_done = self._recv_done, set()
        return sending, receiving

    def get_block_ids_with_load_errors(self) -> set[int]:
        """Block ids that failed to load since the last call."""
        with self._lock:
            errors, self._load_errors = self._load_errors, set()
        return errors

    def close(self) -> None:
        """Waits for queued transfers, unregisters, closes the store."""
        self._pool.shutdown(wait=True)
        release(self._store, self._registered)

    # --- internals ----------------------------------------------------------

    def _keys_and_ids(self, block_hashes: Sequence[Any],
                      block_ids: Sequence[int]) -> tuple[list[str], list[int]]:
        if len(block_hashes) != len(block_ids):
            raise ValueError(f"{len(block_hashes)} hashes for "
                             f"{len(block_ids)} blocks")
        if not self._segments:
            raise RuntimeError("register_kv_caches() first")
        return ([self._own_prefix + _hash_hex(h) for h in block_hashes],
                list(block_ids))

    def _block_memory(self, ids: Sequence[int]
                      ) -> tuple[list[list[int]], list[list[int]]]:
        addresses = [[base + i * size for base, size in self._segments]
                     for i in ids]
        sizes = [[size for _, size in self._segments]] * len(ids)
        return addresses, sizes

    def _run_save(self, req_id: str, keys: list[str], ids: list[int],
                  ready: Any) -> None:
        try:
            if ready is not None:
                ready.synchronize()
            infos = self._store.exists_batch(keys)
            todo = [i for i, info in enumerate(infos)
                    if isinstance(info, mt.StoreError) or not info.exists]
            failed = 0
            if todo:
                addresses, sizes = self._block_memory([ids[i] for i in todo])
                put = self._store.put_from_addresses(
                    [keys[i] for i in todo], addresses, sizes)
                bad = [r for r in put if r is not None
                       and not isinstance(r, mt.ObjectExistsError)]
                failed = len(bad)
                if bad:
                    _log.warning("save %s: %d of %d blocks failed (%s)",
                                 req_id, failed, len(todo), bad[0])
            with self._lock:
                self.stats["saved_blocks"] += len(todo) - failed
                self.stats["skipped_blocks"] += len(keys) - len(todo)
                self.stats["failed_blocks"] += failed
        except Exception:  # a failed save is a future miss, never a crash
            _log.exception("save %s", req_id)
        finally:
            with self._lock:
                self._saves_left[req_id] -= 1

    def _run_load(self, req_id: str, keys: list[str], ids: list[int]) -> None:
        failed: list[int] = list(ids)
        try:
            addresses, sizes = self._block_memory(ids)
            want = sum(sizes[0]) if sizes else 0
            got = self._store.get_into_addresses(keys, addresses, sizes)
            failed = [block for block, n in zip(ids, got) if n != want]
        except Exception:
            _log.exception("load %s", req_id)
        with self._lock:
            self.stats["loaded_blocks"] += len(ids) - len(failed)
            self.stats["failed_blocks"] += len(failed)
            self._load_errors.update(failed)  # before the request is done
            self._loads_left[req_id] -= 1
            if self._loads_left[req_id] == 0:
                del self._loads_left[req_id]
                self._recv_done.add(req_id)
