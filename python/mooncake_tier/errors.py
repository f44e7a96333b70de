"""Exceptions raised by mooncake_tier.

Every failure the store reports is a :class:`StoreError` carrying the
store's machine-readable ``reason`` (``"OBJECT_NOT_FOUND"``,
``"GROUP_INCOMPLETE"``, ...), its canonical ``code`` (``"NOT_FOUND"``, ...)
and a human-readable ``message``. Each reason has its own subclass, grouped
under one class per canonical code, so callers can catch as broadly or as
narrowly as they need::

    try:
        value = store.get(key)
    except mooncake_tier.GroupIncompleteError:
        ...  # the rest of the block is not there yet: retry later
    except mooncake_tier.NotFoundError:
        ...  # never stored, removed or evicted

Bad arguments caught by the binding itself (a read-only buffer for
``get_into``, lists of different lengths) raise :class:`InvalidArgumentError`,
which is also a :class:`ValueError`.
"""

from __future__ import annotations

__all__ = [
    "StoreError",
    "InvalidArgumentError", "InvalidKeyError", "InvalidSizeError",
    "InvalidGroupError", "BufferTooSmallError",
    "NotFoundError", "ObjectNotFoundError", "GroupNotFoundError",
    "NodeNotFoundError", "ReplicaNotFoundError", "TaskNotFoundError",
    "ObjectExistsError",
    "FailedPreconditionError", "ObjectBusyError", "ObjectLeasedError",
    "ObjectNotReadyError", "GroupIncompleteError", "GroupNotFillingError",
    "NodeNotAliveError", "NotApplicableError",
    "ResourceExhaustedError", "NoSpaceError", "QueueFullError",
    "FillingGroupsFullError",
    "UnavailableError", "NotLeaderError", "StoreTimeoutError",
    "AbortedError", "DataLossError", "ChecksumMismatchError", "TornRecordError",
    "InternalError", "StoreIOError", "UnauthenticatedError",
    "error_class",
]


class StoreError(Exception):
    """A failure reported by the store (or by the binding, for bad input).

    Attributes:
        reason: the store's reason, e.g. ``"OBJECT_NOT_FOUND"``.
        code: the canonical code the reason maps to, e.g. ``"NOT_FOUND"``.
        message: what happened, in words.
    """

    reason: str = "INTERNAL"
    code: str = "INTERNAL"

    def __init__(self, message: str = "", reason: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}" if self.message else self.reason

    def __reduce__(self):
        return (type(self), (self.message, self.reason, self.code))


# One class per canonical code ...
class InvalidArgumentError(StoreError, ValueError):
    """Bad input (INVALID_ARGUMENT and the reasons under it)."""
    reason, code = "INVALID_ARGUMENT", "INVALID_ARGUMENT"


class NotFoundError(StoreError, LookupError):
    """Something named does not exist (NOT_FOUND)."""
    code = "NOT_FOUND"


class FailedPreconditionError(StoreError):
    """The object or group is not in a state that allows the call."""
    code = "FAILED_PRECONDITION"


class ResourceExhaustedError(StoreError):
    """The store is out of space or a queue is full."""
    code = "RESOURCE_EXHAUSTED"


class DataLossError(StoreError):
    """A stored copy failed its checksum or is torn; it is never served."""
    code = "DATA_LOSS"


class InternalError(StoreError):
    """An internal or I/O failure in the store."""
    reason, code = "INTERNAL", "INTERNAL"


# ... and one per reason.
class InvalidKeyError(InvalidArgumentError):
    """Key empty, longer than 1024 bytes, or containing a NUL byte."""
    reason = "INVALID_KEY"


class InvalidSizeError(InvalidArgumentError):
    """Value of size 0."""
    reason = "INVALID_SIZE"


class InvalidGroupError(InvalidArgumentError):
    """Group spec inconsistent (size mismatch, index out of range, ...)."""
    reason = "INVALID_GROUP"


class BufferTooSmallError(InvalidArgumentError):
    """get_into's buffer is smaller than the value; nothing was written."""
    reason = "BUFFER_TOO_SMALL"


class ObjectNotFoundError(NotFoundError):
    """No object under this key."""
    reason = "OBJECT_NOT_FOUND"


class GroupNotFoundError(NotFoundError):
    """No group with this id."""
    reason = "GROUP_NOT_FOUND"


class NodeNotFoundError(NotFoundError):
    reason = "NODE_NOT_FOUND"


class ReplicaNotFoundError(NotFoundError):
    reason = "REPLICA_NOT_FOUND"


class TaskNotFoundError(NotFoundError):
    reason = "TASK_NOT_FOUND"


class ObjectExistsError(StoreError):
    """The key is already stored (keys are write-once; remove first)."""
    reason, code = "OBJECT_EXISTS", "ALREADY_EXISTS"


class ObjectBusyError(FailedPreconditionError):
    """A put of this object is in flight."""
    reason = "OBJECT_BUSY"


class ObjectLeasedError(FailedPreconditionError):
    """A reader holds a lease on the object (remove with force=True)."""
    reason = "OBJECT_LEASED"


class ObjectNotReadyError(FailedPreconditionError):
    """The object's put has not completed."""
    reason = "OBJECT_NOT_READY"


class GroupIncompleteError(FailedPreconditionError):
    """The object's group is not complete (all-or-nothing visibility)."""
    reason = "GROUP_INCOMPLETE"


class GroupNotFillingError(FailedPreconditionError):
    """The group no longer accepts members (complete, broken, expired)."""
    reason = "GROUP_NOT_FILLING"


class NodeNotAliveError(FailedPreconditionError):
    reason = "NODE_NOT_ALIVE"


class NotApplicableError(FailedPreconditionError):
    reason = "NOT_APPLICABLE"


class NoSpaceError(ResourceExhaustedError):
    """The store cannot make room for the value."""
    reason = "NO_SPACE"


class QueueFullError(ResourceExhaustedError):
    reason = "QUEUE_FULL"


class FillingGroupsFullError(ResourceExhaustedError):
    """Too many groups are filling at once; retry when some complete."""
    reason = "FILLING_GROUPS_FULL"


class UnavailableError(StoreError, ConnectionError):
    """The master or a node cannot be reached."""
    reason, code = "UNAVAILABLE", "UNAVAILABLE"


class NotLeaderError(UnavailableError):
    """Only standby masters answered within the deadline (a failover is
    under way, or the addresses given name no leader)."""
    reason, code = "NOT_LEADER", "UNAVAILABLE"


class StoreTimeoutError(StoreError, TimeoutError):
    """A call's deadline passed (the master or a node did not answer)."""
    reason, code = "TIMEOUT", "DEADLINE_EXCEEDED"


class AbortedError(StoreError):
    reason, code = "ABORTED", "ABORTED"


class ChecksumMismatchError(DataLossError):
    reason = "CHECKSUM_MISMATCH"


class TornRecordError(DataLossError):
    reason = "TORN_RECORD"


class StoreIOError(InternalError):
    """An I/O error in the store (the SSD tier)."""
    reason = "IO_ERROR"


class UnauthenticatedError(StoreError):
    reason, code = "UNAUTHENTICATED", "UNAUTHENTICATED"


_BY_REASON: dict[str, type[StoreError]] = {
    cls.reason: cls
    for cls in (
        InvalidArgumentError, InvalidKeyError, InvalidSizeError,
        InvalidGroupError, BufferTooSmallError, ObjectNotFoundError,
        GroupNotFoundError, NodeNotFoundError, ReplicaNotFoundError,
        TaskNotFoundError, ObjectExistsError, ObjectBusyError,
        ObjectLeasedError, ObjectNotReadyError, GroupIncompleteError,
        GroupNotFillingError, NodeNotAliveError, NotApplicableError,
        NoSpaceError, QueueFullError, FillingGroupsFullError,
        UnavailableError, NotLeaderError, StoreTimeoutError, AbortedError,
        ChecksumMismatchError, TornRecordError, StoreIOError, InternalError,
        UnauthenticatedError,
    )
}


def error_class(reason: str) -> type[StoreError]:
    """The exception class raised for a store reason (StoreError if unknown)."""
    return _BY_REASON.get(reason, StoreError)


def _from_status(reason: str, code: str, message: str) -> StoreError:
    # Called by the compiled module for every failed Status.
    return error_class(reason)(message, reason, code)
