"""A drop-in for the Mooncake Store Python class that engines already call.

SGLang's HiCache, vLLM's store connector and LMCache each ship a backend
for ``mooncake.store.MooncakeDistributedStore``. This module offers a class
of that name whose methods take the same arguments in the same order and
answer with the same return conventions, so such a backend runs against
mooncake-tier by changing its import::

    from mooncake_tier.compat import MooncakeDistributedStore, ReplicateConfig

    store = MooncakeDistributedStore()
    rc = store.setup("host", "P2PHANDSHAKE", 0, 0, "tcp", "", "10.0.0.1:50051")
    store.register_buffer(pool_ptr, pool_bytes)
    codes = store.batch_put_from(keys, ptrs, sizes)      # 0 or negative each
    sizes_read = store.batch_get_into(keys, ptrs, sizes)  # bytes or negative

Conventions (those of the class it stands in for):

- status calls return ``0`` or a negative error code (``ERROR_CODES``);
- reads return the bytes read (``> 0``) or a negative code;
- ``is_exist`` / ``batch_is_exist`` return ``1`` (readable now), ``0``
  (absent, or a member of a group not yet complete) or a negative code;
- a put of a key already stored succeeds (``0``) and keeps the stored value
  (keys are write-once);
- ``get`` / ``get_batch`` return ``b""`` for a miss or an error.

python/README.md lists every method: what is mapped, what is accepted and
ignored (segment sizes, protocol, device names: the store's nodes bring
their own memory and the transport picks the fabric), and what is refused.
A refused call raises ``NotImplementedError`` saying what to use instead;
an argument this store cannot honour returns ``INVALID_PARAMS`` and logs
why on the ``mooncake_tier.compat`` logger.

Groups are this store's addition: the put methods take an optional
keyword ``groups`` (one ``mooncake_tier.Group`` or ``None`` per key) that
makes the objects members of groups the store completes, reports, evicts
and expires whole. Without it a call means exactly what it means for the
class it stands in for.

Thread safety: as for ``mooncake_tier.Store``, one instance may be used by
many threads; the calls release the GIL while they wait.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from . import _native
from .errors import StoreError

__all__ = ["MooncakeDistributedStore", "ReplicateConfig", "ERROR_CODES",
           "error_code"]

_log = logging.getLogger("mooncake_tier.compat")

# The codes of the Mooncake store's ErrorCode enum that this class returns.
OK = 0
INTERNAL_ERROR = -1
BUFFER_OVERFLOW = -10
SEGMENT_NOT_FOUND = -101
NO_AVAILABLE_HANDLE = -200
INVALID_KEY = -400
INVALID_PARAMS = -600
ILLEGAL_CLIENT = -601
INVALID_READ = -701
REPLICA_IS_NOT_READY = -703
OBJECT_NOT_FOUND = -704
OBJECT_ALREADY_EXISTS = -705
OBJECT_HAS_LEASE = -706
RPC_FAIL = -900

# mooncake-tier reason -> the code returned for it.
ERROR_CODES: dict[str, int] = {
    "INVALID_KEY": INVALID_KEY,
    "INVALID_SIZE": INVALID_PARAMS,
    "INVALID_ARGUMENT": INVALID_PARAMS,
    "INVALID_GROUP": INVALID_PARAMS,
    "BUFFER_TOO_SMALL": BUFFER_OVERFLOW,
    "OBJECT_NOT_FOUND": OBJECT_NOT_FOUND,
    "GROUP_NOT_FOUND": OBJECT_NOT_FOUND,
    "REPLICA_NOT_FOUND": OBJECT_NOT_FOUND,
    "NODE_NOT_FOUND": SEGMENT_NOT_FOUND,
    "NODE_NOT_ALIVE": SEGMENT_NOT_FOUND,
    "OBJECT_EXISTS": OBJECT_ALREADY_EXISTS,
    "OBJECT_BUSY": REPLICA_IS_NOT_READY,
    "OBJECT_NOT_READY": REPLICA_IS_NOT_READY,
    "GROUP_INCOMPLETE": REPLICA_IS_NOT_READY,
    "OBJECT_LEASED": OBJECT_HAS_LEASE,
    "NO_SPACE": NO_AVAILABLE_HANDLE,
    "QUEUE_FULL": NO_AVAILABLE_HANDLE,
    "FILLING_GROUPS_FULL": NO_AVAILABLE_HANDLE,
    "UNAVAILABLE": RPC_FAIL,
    "NOT_LEADER": RPC_FAIL,
    "TIMEOUT": RPC_FAIL,
    "UNAUTHENTICATED": ILLEGAL_CLIENT,
    "CHECKSUM_MISMATCH": INVALID_READ,
    "TORN_RECORD": INVALID_READ,
    "IO_ERROR": INVALID_READ,
}


def error_code(error: BaseException | None) -> int:
    """The Mooncake code for a mooncake-tier error (``0`` for ``None``)."""
    if error is None:
        return OK
    if isinstance(error, StoreError):
        return ERROR_CODES.get(error.reason, INTERNAL_ERROR)
    return INTERNAL_ERROR


class ReplicateConfig:
    """Placement options of a put, as engines build them.

    Mapped: ``with_hard_pin`` (never evicted). Accepted and ignored:
    ``with_soft_pin``, ``preferred_segment``, ``preferred_segments``,
    ``prefer_alloc_in_same_node`` and ``group_ids`` (placement is the
    master's; groups are the ``groups`` keyword, whose members the store
    completes and reports, which ``group_ids`` does not ask for). Refused
    (``INVALID_PARAMS``): ``replica_num`` other than 1, since the store
    keeps one DRAM copy and the SSD tier is its second.
    """

    def __init__(self, replica_num: int = 1, with_soft_pin: bool = False,
                 with_hard_pin: bool = False, preferred_segment: str = "",
                 preferred_segments: Sequence[str] = (),
                 prefer_alloc_in_same_node: bool = False,
                 group_ids: Sequence[str] = (), **ignored: Any) -> None:
        self.replica_num = replica_num
        self.with_soft_pin = with_soft_pin
        self.with_hard_pin = with_hard_pin
        self.preferred_segment = preferred_segment
        self.preferred_segments = list(preferred_segments)
        self.prefer_alloc_in_same_node = prefer_alloc_in_same_node
        self.group_ids = list(group_ids)
        for name, value in ignored.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return (f"ReplicateConfig(replica_num={self.replica_num}, "
                f"with_hard_pin={self.with_hard_pin})")


def _refused(name: str, instead: str) -> NotImplementedError:
    return NotImplementedError(
        f"MooncakeDistributedStore.{name} is not supported by mooncake-tier; "
        f"{instead}")


class MooncakeDistributedStore:
    """mooncake-tier behind the method names of the Mooncake Store class."""

    def __init__(self) -> None:
        self._store: _native.Store | None = None
        self._hostname = ""

    # --- lifecycle ----------------------------------------------------------

    def setup(self, local_hostname: str, metadata_server: str,
              global_segment_size: int = 16 << 20,
              local_buffer_size: int = 16 << 20, protocol: str = "tcp",
              rdma_devices: str = "",
              master_server_addr: str = "127.0.0.1:50051", engine: Any = None,
              **extra: Any) -> int:
        """Connects to the master at ``master_server_addr`` (a cluster's
        masters may be listed, comma-separated). The other arguments are
        accepted and ignored: the store's nodes bring the memory, the client
        lends none, and the transport chooses the fabric. Returns 0, or
        ``RPC_FAIL`` when no master answers."""
        del metadata_server, global_segment_size, local_buffer_size
        del protocol, rdma_devices, engine
        tenant = extra.pop("tenant_id", None)
        if tenant not in (None, "", "default"):
            _log.error("setup: tenant_id %r is refused: the store has one "
                       "key space", tenant)
            return INVALID_PARAMS
        if extra:
            _log.info("setup: ignoring %s", ", ".join(sorted(extra)))
        if self._store is not None:
            self.close()
        try:
            self._store = _native.Store(master_server_addr)
        except StoreError as e:
            _log.error("setup: %s", e)
            return error_code(e)
        self._hostname = local_hostname
        return OK

    def setup_dummy(self, mem_pool_size: int, local_buffer_size: int,
                    server_address: str) -> int:
        raise _refused("setup_dummy",
                       "call setup() with the master's address: clients "
                       "need no local store process")

    def init_all(self, protocol: str, device_name: str,
                 mount_segment_size: int = 16 << 20) -> int:
        raise _refused("init_all",
                       "call setup() with the master's address")

    def close(self) -> int:
        if self._store is not None:
            self._store.close()
            self._store = None
        return OK

    def get_hostname(self) -> str:
        """The ``local_hostname`` given to setup (placement ignores it)."""
        return self._hostname

    def health_check(self) -> int:
        """This store's addition: 0 when the master answers now, else a
        negative code (one round trip that reads nothing)."""
        return self._status("health_check", lambda s: s.health_check())

    # --- memory -------------------------------------------------------------

    def register_buffer(self, buffer_ptr: int, size: int) -> int:
        return self._status("register_buffer",
                            lambda s: s.register_memory(buffer_ptr, size))

    def unregister_buffer(self, buffer_ptr: int) -> int:
        return self._status("unregister_buffer",
                            lambda s: s.unregister_memory(buffer_ptr))

    # --- existence ----------------------------------------------------------

    def is_exist(self, key: str) -> int:
        return self.batch_is_exist([key])[0]

    def batch_is_exist(self, keys: Sequence[str]) -> list[int]:
        """1 when a get would read the key now, 0 when absent (or a member
        of a group not yet complete), negative on error. Unlike the class it
        stands in for, a probe extends no lease."""
        return self._per_key(
            len(keys), "batch_is_exist",
            lambda s: s.readable_batch(list(keys)),
            lambda r: 1 if r is True else 0 if r is False else error_code(r))

    def probe_prefix(self, keys: Sequence[str]) -> int:
        """This store's addition: how many of ``keys``, in order from the
        first, a get would read now, in one call (what engines compute from
        ``batch_is_exist`` by counting leading 1s, without a per-key
        answer); a negative code on error."""
        return self._one("probe_prefix",
                         lambda s: s.probe_prefix(list(keys)).length)

    def get_size(self, key: str) -> int:
        def size(store: _native.Store) -> int:
            info = store.exists(key)
            return info.size if info.exists else OBJECT_NOT_FOUND
        return self._one("get_size", size)

    # --- puts ---------------------------------------------------------------

    def put(self, key: str, value: Any, config: ReplicateConfig | None = None,
            *, group: Any = None) -> int:
        return self._put_batch([key], [value], config, [group])[0]

    def put_parts(self, key: str, *parts: Any,
                  config: ReplicateConfig | None = None,
                  group: Any = None) -> int:
        if not parts:
            return INVALID_PARAMS
        return self._put_batch([key], [list(parts)], config, [group])[0]

    def put_batch(self, keys: Sequence[str], values: Sequence[Any],
                  config: ReplicateConfig | None = None, *,
                  groups: Sequence[Any] | None = None) -> int:
        """One code for the whole batch: 0, or the first key's error."""
        for code in self._put_batch(keys, values, config, groups):
            if code != OK:
                return code
        return OK

    def put_from(self, key: str, buffer_ptr: int, size: int,
                 config: ReplicateConfig | None = None, *,
                 group: Any = None) -> int:
        return self.batch_put_from([key], [buffer_ptr], [size], config,
                                   groups=[group])[0]

    def batch_put_from(self, keys: Sequence[str], buffer_ptrs: Sequence[int],
                       sizes: Sequence[int],
                       config: ReplicateConfig | None = None, *,
                       groups: Sequence[Any] | None = None) -> list[int]:
        return self._put_from(keys, buffer_ptrs, sizes, config, groups)

    def batch_put_from_multi_buffers(
            self, keys: Sequence[str], all_buffer_ptrs: Sequence[Sequence[int]],
            all_sizes: Sequence[Sequence[int]],
            config: ReplicateConfig | None = None, *,
            groups: Sequence[Any] | None = None) -> list[int]:
        """keys[i] is the concatenation of its buffers, written from each
        straight into the store (no staging copy)."""
        return self._put_from(keys, [list(p) for p in all_buffer_ptrs],
                              [list(s) for s in all_sizes], config, groups)

    # --- gets ---------------------------------------------------------------

    def get(self, key: str) -> bytes:
        return self.get_batch([key])[0]

    def get_batch(self, keys: Sequence[str]) -> list[bytes]:
        store = self._live()
        if store is None:
            return [b""] * len(keys)
        try:
            got = store.get_batch(list(keys))
        except (StoreError, TypeError):
            return [b""] * len(keys)
        return [b"" if isinstance(v, StoreError) else v for v in got]

    def get_into(self, key: str, buffer_ptr: int, size: int) -> int:
        return self.batch_get_into([key], [buffer_ptr], [size])[0]

    def batch_get_into(self, keys: Sequence[str], buffer_ptrs: Sequence[int],
                       sizes: Sequence[int]) -> list[int]:
        return self._get_into(keys, buffer_ptrs, sizes)

    def batch_get_into_multi_buffers(
            self, keys: Sequence[str], all_buffer_ptrs: Sequence[Sequence[int]],
            all_sizes: Sequence[Sequence[int]],
            prefer_alloc_in_same_node: bool = False) -> list[int]:
        """Scatters keys[i] over its buffers in order; bytes read per key.
        ``prefer_alloc_in_same_node`` is accepted and ignored."""
        del prefer_alloc_in_same_node
        return self._get_into(keys, [list(p) for p in all_buffer_ptrs],
                              [list(s) for s in all_sizes])

    def get_buffer(self, key: str) -> Any:
        raise _refused("get_buffer",
                       "read into registered memory with get_into, or use "
                       "get() for bytes")

    def batch_get_buffer(self, keys: Sequence[str]) -> Any:
        raise _refused("batch_get_buffer",
                       "read into registered memory with batch_get_into")

    # --- removal ------------------------------------------------------------

    def remove(self, key: str, force: bool = False) -> int:
        return self.batch_remove([key], force)[0]

    def batch_remove(self, keys: Sequence[str], force: bool = False
                     ) -> list[int]:
        """OBJECT_HAS_LEASE while a reader copies the object (unless
        force). A group member removes its whole group under the store's
        default group remove policy."""
        return self._per_key(
            len(keys), "batch_remove",
            lambda s: s.remove_batch(list(keys), force=force), error_code)

    def remove_all(self, force: bool = False) -> int:
        raise _refused("remove_all",
                       "remove keys by name (batch_remove), or clear a node "
                       "with mooncake-tierctl")

    def remove_by_regex(self, regex_pattern: str) -> int:
        raise _refused("remove_by_regex",
                       "remove keys by name (batch_remove)")

    # --- internals ----------------------------------------------------------

    def _live(self) -> _native.Store | None:
        if self._store is None:
            _log.error("the store is not set up (call setup first)")
        return self._store

    def _one(self, what: str, call: Callable[[_native.Store], Any]) -> Any:
        """call(store)'s value, or the negative code of what it raised."""
        store = self._live()
        if store is None:
            return RPC_FAIL
        try:
            return call(store)
        except (StoreError, TypeError, OverflowError) as e:
            _log.warning("%s: %s", what, e)
            return _code_of(e)

    def _status(self, what: str,
                call: Callable[[_native.Store], Any]) -> int:
        """OK once call(store) returns, or the negative code it raised."""
        def status(store: _native.Store) -> int:
            call(store)
            return OK
        return self._one(what, status)

    def _per_key(self, n: int, what: str,
                 call: Callable[[_native.Store], Sequence[Any]],
                 convert: Callable[[Any], int]) -> list[int]:
        """One code per key from call(store)'s per-key results; the same
        negative code for every key when the call itself failed."""
        store = self._live()
        if store is None:
            return [RPC_FAIL] * n
        try:
            results = call(store)
        except (StoreError, TypeError, OverflowError) as e:
            _log.warning("%s: %s", what, e)
            return [_code_of(e)] * n
        return [convert(r) for r in results]

    @staticmethod
    def _config_error(config: ReplicateConfig | None) -> int:
        if config is not None and config.replica_num != 1:
            _log.error("replica_num %d is refused: the store keeps one DRAM "
                       "copy (and its SSD tier)", config.replica_num)
            return INVALID_PARAMS
        return OK

    @staticmethod
    def _put_code(e: StoreError | None) -> int:
        # Keys are write-once: a put of a stored key succeeds and keeps it.
        return OK if e is None or e.reason == "OBJECT_EXISTS" \
            else error_code(e)

    def _put_batch(self, keys: Sequence[str], values: Sequence[Any],
                   config: ReplicateConfig | None,
                   groups: Sequence[Any] | None) -> list[int]:
        bad = self._config_error(config)
        if bad:
            return [bad] * len(keys)
        return self._per_key(
            len(keys), "put",
            lambda s: s.put_batch(list(keys), list(values),
                                  _groups_or_none(groups),
                                  hard_pin=_hard_pin(config)),
            self._put_code)

    def _put_from(self, keys: Sequence[str], ptrs: Sequence[Any],
                  sizes: Sequence[Any], config: ReplicateConfig | None,
                  groups: Sequence[Any] | None) -> list[int]:
        bad = self._config_error(config)
        if bad:
            return [bad] * len(keys)
        return self._per_key(
            len(keys), "put_from",
            lambda s: s.put_from_addresses(list(keys), list(ptrs), list(sizes),
                                           _groups_or_none(groups),
                                           hard_pin=_hard_pin(config)),
            self._put_code)

    def _get_into(self, keys: Sequence[str], ptrs: Sequence[Any],
                  sizes: Sequence[Any]) -> list[int]:
        return self._per_key(
            len(keys), "get_into",
            lambda s: s.get_into_addresses(list(keys), list(ptrs), list(sizes)),
            lambda v: error_code(v) if isinstance(v, StoreError) else v)


def _groups_or_none(groups: Sequence[Any] | None) -> list[Any] | None:
    if groups is None or all(g is None for g in groups):
        return None
    return list(groups)


def _hard_pin(config: ReplicateConfig | None) -> bool:
    return config is not None and bool(config.with_hard_pin)


def _code_of(e: BaseException) -> int:
    """A raised error's code: the store's, or INVALID_PARAMS for arguments
    the binding refused by type."""
    return error_code(e) if isinstance(e, StoreError) else INVALID_PARAMS
