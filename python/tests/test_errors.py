"""Every store reason has its exception class; the reachable ones are
raised by a live store; no master is a clear, prompt error."""

from __future__ import annotations

import pickle
import socket
import time

import numpy as np
import pytest

import mooncake_tier as mt
from mooncake_tier import _native


@pytest.mark.parametrize("reason", sorted(set(_native.REASONS) - {"OK"}))
def test_every_reason_has_a_store_error_class(reason):
    cls = mt.error_class(reason)
    assert cls is not mt.StoreError, f"{reason} has no class of its own"
    assert issubclass(cls, mt.StoreError)
    assert cls.reason == reason
    assert cls.code == _native.REASONS[reason]
    assert cls.__name__ in mt.__all__
    err = cls("message", reason, cls.code)
    assert str(err) == f"{reason}: message"
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and back.reason == reason


def test_error_classes_group_by_code():
    assert issubclass(mt.ObjectNotFoundError, mt.NotFoundError)
    assert issubclass(mt.ObjectNotFoundError, LookupError)
    assert issubclass(mt.GroupIncompleteError, mt.FailedPreconditionError)
    assert issubclass(mt.NoSpaceError, mt.ResourceExhaustedError)
    assert issubclass(mt.InvalidKeyError, ValueError)
    assert issubclass(mt.UnavailableError, ConnectionError)
    assert issubclass(mt.StoreTimeoutError, TimeoutError)
    assert mt.error_class("SOMETHING_NEW") is mt.StoreError


def _raises(cls, fn, *args, **kwargs):
    with pytest.raises(cls) as e:
        fn(*args, **kwargs)
    assert type(e.value) is cls, type(e.value)
    assert e.value.reason == cls.reason and e.value.message
    return e.value


def test_store_raises_each_reachable_error(store, key):
    gid = key("g")
    store.put(key("v"), b"v")
    _raises(mt.ObjectNotFoundError, store.get, key("missing"))
    _raises(mt.ObjectExistsError, store.put, key("v"), b"again")
    _raises(mt.InvalidKeyError, store.put, "", b"v")
    _raises(mt.InvalidKeyError, store.get, "x" * 2000)
    _raises(mt.InvalidKeyError, store.exists, "a\0b")
    _raises(mt.InvalidSizeError, store.put, key("empty"), b"")
    _raises(mt.InvalidGroupError, store.put, key("bad"), b"v", (gid, 0, 0))
    _raises(mt.BufferTooSmallError, store.get_into, key("v"), bytearray(0))
    _raises(mt.GroupNotFoundError, store.group, key("no-group"))
    store.put(key("m"), b"m", (gid, 2, 0))
    _raises(mt.GroupIncompleteError, store.get, key("m"))
    # Larger than the daemon's whole DRAM segment (128 MiB).
    big = np.zeros(129 << 20, dtype=np.uint8)
    e = _raises(mt.NoSpaceError, store.put, key("big"), big)
    assert e.code == "RESOURCE_EXHAUSTED"


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_master_is_a_clear_prompt_error():
    address = f"127.0.0.1:{_unused_port()}"
    start = time.monotonic()
    with pytest.raises((mt.UnavailableError, mt.StoreTimeoutError)) as e:
        mt.Store(address, rpc_timeout=1.0)
    assert time.monotonic() - start < 10
    assert address in str(e.value)
    assert isinstance(e.value, mt.StoreError)


def test_bad_options_are_invalid_arguments():
    with pytest.raises(mt.InvalidArgumentError, match="rpc_timeout"):
        mt.Store("127.0.0.1:1", rpc_timeout=0)
    with pytest.raises(mt.InvalidArgumentError, match="empty"):
        mt.Store("")
