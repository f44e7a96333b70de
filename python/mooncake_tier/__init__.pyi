# Type stubs of mooncake_tier (the compiled Store and result classes live in
# mooncake_tier._native; this file is what type checkers and IDEs read).
from types import TracebackType
from typing import Any, Iterator, Literal, NamedTuple, Sequence, Tuple, Union

import sys

# Anything with the buffer protocol: bytes, bytearray, memoryview, numpy
# arrays (C-contiguous).
if sys.version_info >= (3, 12):
    from collections.abc import Buffer as _Buffer
else:
    _Buffer = Any

from .errors import (
    AbortedError as AbortedError,
    BufferTooSmallError as BufferTooSmallError,
    ChecksumMismatchError as ChecksumMismatchError,
    DataLossError as DataLossError,
    FailedPreconditionError as FailedPreconditionError,
    FillingGroupsFullError as FillingGroupsFullError,
    GroupIncompleteError as GroupIncompleteError,
    GroupNotFillingError as GroupNotFillingError,
    GroupNotFoundError as GroupNotFoundError,
    InternalError as InternalError,
    InvalidArgumentError as InvalidArgumentError,
    InvalidGroupError as InvalidGroupError,
    InvalidKeyError as InvalidKeyError,
    InvalidSizeError as InvalidSizeError,
    NodeNotAliveError as NodeNotAliveError,
    NodeNotFoundError as NodeNotFoundError,
    NoSpaceError as NoSpaceError,
    NotApplicableError as NotApplicableError,
    NotFoundError as NotFoundError,
    ObjectBusyError as ObjectBusyError,
    ObjectExistsError as ObjectExistsError,
    ObjectLeasedError as ObjectLeasedError,
    ObjectNotFoundError as ObjectNotFoundError,
    ObjectNotReadyError as ObjectNotReadyError,
    QueueFullError as QueueFullError,
    ReplicaNotFoundError as ReplicaNotFoundError,
    ResourceExhaustedError as ResourceExhaustedError,
    StoreError as StoreError,
    StoreIOError as StoreIOError,
    StoreTimeoutError as StoreTimeoutError,
    TaskNotFoundError as TaskNotFoundError,
    TornRecordError as TornRecordError,
    UnauthenticatedError as UnauthenticatedError,
    UnavailableError as UnavailableError,
    error_class as error_class,
)

__version__: str

Key = Union[str, bytes]
# A buffer, or a list / tuple of buffers: one object's parts, in order.
_Value = Union[_Buffer, Sequence[_Buffer]]
# An address (or size), or a list of them: one object's parts, in order.
_Addresses = Union[int, Sequence[int]]
GroupState = Literal["filling", "complete", "broken", "expired"]

class Group(NamedTuple):
    group_id: str
    group_size: int
    group_index: int

GroupArg = Union[Group, Tuple[str, int, int], None]

class GroupStatus:
    @property
    def group_id(self) -> str: ...
    @property
    def state(self) -> GroupState: ...
    @property
    def expected(self) -> int: ...
    @property
    def present(self) -> int: ...
    @property
    def complete(self) -> bool: ...

class ExistsInfo:
    @property
    def exists(self) -> bool: ...
    @property
    def size(self) -> int: ...
    @property
    def group(self) -> GroupStatus | None: ...
    @property
    def group_id(self) -> str | None: ...
    @property
    def state(self) -> GroupState | None: ...
    @property
    def expected(self) -> int | None: ...
    @property
    def present(self) -> int | None: ...
    def __bool__(self) -> bool: ...

class PrefixInfo:
    @property
    def length(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> int: ...
    def __iter__(self) -> Iterator[int]: ...

class GroupMember:
    @property
    def index(self) -> int: ...
    @property
    def key(self) -> str: ...
    @property
    def present(self) -> bool: ...
    @property
    def tiers(self) -> list[Literal["memory", "local_disk"]]: ...

class GroupInfo:
    @property
    def status(self) -> GroupStatus: ...
    @property
    def group_id(self) -> str: ...
    @property
    def state(self) -> GroupState: ...
    @property
    def expected(self) -> int: ...
    @property
    def present(self) -> int: ...
    @property
    def break_cause(self) -> str: ...
    @property
    def members(self) -> list[GroupMember]: ...

class BatchQueue:
    def submit_put(
        self,
        keys: Sequence[Key],
        values: Sequence[_Value],
        groups: Sequence[GroupArg] | None = None,
    ) -> int: ...
    def submit_get_into(
        self, keys: Sequence[Key], buffers: Sequence[_Value]
    ) -> int: ...
    def submit_put_from_addresses(
        self,
        keys: Sequence[Key],
        addresses: Sequence[_Addresses],
        sizes: Sequence[_Addresses],
        groups: Sequence[GroupArg] | None = None,
    ) -> int: ...
    def submit_get_into_addresses(
        self,
        keys: Sequence[Key],
        addresses: Sequence[_Addresses],
        sizes: Sequence[_Addresses],
    ) -> int: ...
    def submit_exists(self, keys: Sequence[Key]) -> int: ...
    def fileno(self) -> int: ...
    def collect(
        self, max: int | None = None
    ) -> list[tuple[int, list[int | StoreError]]]: ...
    def wait(
        self, task_id: int, timeout: float | None = None
    ) -> list[int | StoreError]: ...
    @property
    def pending(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> BatchQueue: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]: ...

class Store:
    def __init__(
        self,
        master: str = "127.0.0.1:50051",
        *,
        rpc_timeout: float = 5.0,
        transfer_timeout: float = 5.0,
        ucx_transports: str = "",
        probe_master: bool = True,
        location_cache: bool = True,
        control_lane: bool = True,
        token: str = "",
        token_file: str | None = None,
        tls_ca: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
        tls_server_name: str | None = None,
    ) -> None: ...
    @property
    def master(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Store: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]: ...
    def put(
        self,
        key: Key,
        data: _Value,
        group: GroupArg = None,
        *,
        preferred_node: str = "",
        hard_pin: bool = False,
    ) -> None: ...
    def put_batch(
        self,
        keys: Sequence[Key],
        values: Sequence[_Value],
        groups: Sequence[GroupArg] | None = None,
        *,
        hard_pin: bool = False,
    ) -> list[StoreError | None]: ...
    def get(self, key: Key) -> bytes: ...
    def get_batch(self, keys: Sequence[Key]) -> list[bytes | StoreError]: ...
    def get_into(self, key: Key, buffer: _Value) -> int: ...
    def get_into_batch(
        self, keys: Sequence[Key], buffers: Sequence[_Value]
    ) -> list[int | StoreError]: ...
    def put_from_addresses(
        self,
        keys: Sequence[Key],
        addresses: Sequence[_Addresses],
        sizes: Sequence[_Addresses],
        groups: Sequence[GroupArg] | None = None,
        *,
        hard_pin: bool = False,
    ) -> list[StoreError | None]: ...
    def get_into_addresses(
        self,
        keys: Sequence[Key],
        addresses: Sequence[_Addresses],
        sizes: Sequence[_Addresses],
    ) -> list[int | StoreError]: ...
    def exists(self, key: Key) -> ExistsInfo: ...
    def exists_batch(self, keys: Sequence[Key]) -> list[ExistsInfo | StoreError]: ...
    def readable_batch(self, keys: Sequence[Key]) -> list[bool | StoreError]: ...
    def probe_prefix(self, keys: Sequence[Key]) -> PrefixInfo: ...
    def group(self, group_id: Key) -> GroupInfo: ...
    def remove(self, key: Key, *, force: bool = False) -> None: ...
    def remove_batch(
        self, keys: Sequence[Key], *, force: bool = False
    ) -> list[StoreError | None]: ...
    def remove_group(self, group_id: Key, *, force: bool = False) -> None: ...
    def register_buffer(self, buffer: _Buffer) -> None: ...
    def unregister_buffer(self, buffer: _Buffer) -> None: ...
    @property
    def registered_buffers(self) -> list[Any]: ...
    def register_memory(self, address: int, size: int) -> None: ...
    def unregister_memory(self, address: int) -> None: ...
    def health_check(self) -> float: ...
    def batch_queue(
        self, *, workers: int = 2, max_pending: int = 64
    ) -> BatchQueue: ...
    def _cpp_get_loop(
        self, keys: Sequence[Key], buffer: _Buffer, rounds: int = 1
    ) -> tuple[float, int]: ...

__all__: list[str]
