"""The LMCache L2 adapter driven as LMCache's store and prefetch
controllers drive it: submit, poll the kind's event fd, read the fd as
they do (os.eventfd_read), then take the results. Numpy arrays stand in for
LMCache's memory objects."""

from __future__ import annotations

import os
import select
import uuid
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

from mooncake_tier.integrations.lmcache import Bitmap, MooncakeTierL2Adapter

CHUNK = 4096


@dataclass(frozen=True)
class ObjectKey:
    """The fields of LMCache's ObjectKey the adapter reads."""

    chunk_hash: bytes
    model_name: str
    kv_rank: int
    object_group_id: int = 0
    cache_salt: str = ""


class MemoryObj:
    """Like LMCache's TensorMemoryObj: a data_ptr property and get_size()."""

    def __init__(self, size: int = CHUNK, fill: int | None = None) -> None:
        rng = np.random.default_rng()
        self.tensor = (rng.integers(0, 256, size, dtype=np.uint8)
                       if fill is None else np.full(size, fill, np.uint8))

    @property
    def data_ptr(self) -> int:
        return self.tensor.ctypes.data

    def get_size(self) -> int:
        return self.tensor.nbytes


@pytest.fixture
def model():
    return "mt-" + uuid.uuid4().hex[:8]


@pytest.fixture
def adapter(daemon):
    a = MooncakeTierL2Adapter({"master_server_address": daemon.master_address})
    yield a
    a.close()


def keys_for(model: str, n: int, start: int = 0) -> list[ObjectKey]:
    return [ObjectKey(bytes([i]) * 16, model, 3) for i in range(start,
                                                                start + n)]


def readable(fd: int, timeout: float = 0.0) -> bool:
    return bool(select.select([fd], [], [], timeout)[0])


def drive(fd: int, take, tasks: list[int], timeout: float = 10.0) -> dict:
    """LMCache's controller loop: poll the fd, read it, then ask for every
    task still in flight; until each has answered (exactly once)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    answers: dict = {}
    while len(answers) < len(tasks):
        assert poller.poll(timeout * 1000), f"no wake-up; have {answers}"
        try:
            os.eventfd_read(fd)
        except BlockingIOError:
            pass
        for task in tasks:
            if task not in answers:
                result = take(task)
                if result is not None:
                    answers[task] = result
    return answers


def store_all(adapter, keys, objects) -> object:
    task = adapter.submit_store_task(keys, objects)
    done = drive(adapter.get_store_event_fd(),
                 lambda t: adapter.pop_completed_store_tasks().get(t), [task])
    return done[task]


def lookup(adapter, keys) -> Bitmap:
    task = adapter.submit_lookup_and_lock_task(keys)
    return drive(adapter.get_lookup_and_lock_event_fd(),
                 adapter.query_lookup_and_lock_result, [task])[task]


def load(adapter, keys, objects) -> Bitmap:
    task = adapter.submit_load_task(keys, objects)
    return drive(adapter.get_load_event_fd(), adapter.query_load_result,
                 [task])[task]


def bits(bitmap: Bitmap, n: int) -> list[bool]:
    return [bool(bitmap.test(i)) for i in range(n)]


def test_three_distinct_event_fds_idle_at_start(adapter):
    fds = {adapter.get_store_event_fd(),
           adapter.get_lookup_and_lock_event_fd(), adapter.get_load_event_fd()}
    assert len(fds) == 3
    assert not any(readable(fd) for fd in fds)


def test_lookup_store_lookup_load(adapter, model):
    keys = keys_for(model, 4)
    chunks = [MemoryObj() for _ in keys]
    assert bits(lookup(adapter, keys), 4) == [False] * 4      # nothing cached

    task = adapter.submit_store_task(keys, chunks)
    assert readable(adapter.get_store_event_fd(), timeout=10)
    os.eventfd_read(adapter.get_store_event_fd())            # as LMCache does
    done = adapter.pop_completed_store_tasks()
    assert list(done) == [task]
    assert done[task].is_successful()
    assert done[task].bytes_transferred() == 4 * CHUNK
    assert adapter.pop_completed_store_tasks() == {}          # popped once
    assert not readable(adapter.get_store_event_fd())

    hit = lookup(adapter, keys)
    assert bits(hit, 4) == [True] * 4
    assert adapter.locked_count(keys[0]) == 1
    adapter.submit_unlock(keys)
    assert adapter.locked_count(keys[0]) == 0

    into = [MemoryObj(fill=0) for _ in keys]
    assert bits(load(adapter, keys, into), 4) == [True] * 4
    for a, b in zip(chunks, into):
        np.testing.assert_array_equal(a.tensor, b.tensor)


def test_keys_use_the_native_connectors_form(adapter, store, model):
    key = ObjectKey(b"\xab\xcd", model, 5, object_group_id=26,
                    cache_salt="user1")
    assert store_all(adapter, [key], [MemoryObj(100)]).is_successful()
    assert store.exists(f"{model}@00000005@1a@abcd@user1").size == 100


def test_a_missing_middle_chunk_ends_the_prefix(adapter, model):
    keys = keys_for(model, 5)
    stored = [k for i, k in enumerate(keys) if i != 2]
    assert store_all(adapter, stored, [MemoryObj() for _ in stored])\
        .is_successful()
    hit = lookup(adapter, keys)
    assert bits(hit, 5) == [True, True, False, True, True]
    assert hit.popcount() == 4
    assert hit.count_leading_ones() == 2         # what the controller loads
    assert hit.gather(keys) == stored


def test_storing_again_succeeds_and_writes_nothing(adapter, model):
    keys = keys_for(model, 2)
    first = [MemoryObj() for _ in keys]
    assert store_all(adapter, keys[:1], first[:1]).bytes_transferred() == CHUNK
    again = store_all(adapter, keys, [MemoryObj(), first[1]])
    assert again.is_successful()
    assert again.bytes_transferred() == CHUNK    # only the second key was new
    into = [MemoryObj(fill=0) for _ in keys]
    assert bits(load(adapter, keys, into), 2) == [True, True]
    np.testing.assert_array_equal(into[0].tensor, first[0].tensor)  # kept


def test_failures_are_per_key_for_loads_and_per_task_for_stores(adapter,
                                                               model):
    keys = keys_for(model, 3)
    assert store_all(adapter, keys, [MemoryObj() for _ in keys])\
        .is_successful()
    into = [MemoryObj(fill=0), MemoryObj(CHUNK // 2, fill=0),
            MemoryObj(fill=0)]
    assert bits(load(adapter, keys, into), 3) == [True, False, True]
    assert not into[1].tensor.any()              # nothing written into it
    missing = keys_for(model, 1, start=9)
    assert bits(load(adapter, missing, [MemoryObj()]), 1) == [False]
    # One bad key fails the whole store task; the good key is stored.
    bad = store_all(adapter, ["", keys_for(model, 1, start=7)[0]],
                    [MemoryObj(), MemoryObj()])
    assert not bad.is_successful()
    assert bits(lookup(adapter, keys_for(model, 1, start=7)), 1) == [True]


def test_each_fd_wakes_for_its_own_kind_and_results_come_once(adapter,
                                                              model):
    keys = keys_for(model, 2)
    store_all(adapter, keys, [MemoryObj() for _ in keys])
    fds = [adapter.get_store_event_fd(),
           adapter.get_lookup_and_lock_event_fd(), adapter.get_load_event_fd()]
    a = adapter.submit_lookup_and_lock_task(keys[:1])
    b = adapter.submit_lookup_and_lock_task(keys)
    ready, _, _ = select.select(fds, [], [], 10)
    assert ready == [fds[1]]
    got_b = None
    while got_b is None:                         # b may finish after a
        assert readable(fds[1], timeout=10)
        got_b = adapter.query_lookup_and_lock_result(b)
    assert got_b.popcount() == 2
    assert adapter.query_lookup_and_lock_result(b) is None    # once
    got_a = None
    while got_a is None:
        assert readable(fds[1], timeout=10)      # a's result still waits
        got_a = adapter.query_lookup_and_lock_result(a)
    assert got_a.popcount() == 1
    assert adapter.query_lookup_and_lock_result(a) is None
    assert not readable(fds[1])
    adapter.submit_unlock(keys)
    adapter.submit_unlock(keys[:1])


def test_a_full_queue_sets_finished_results_aside(daemon, model):
    adapter = MooncakeTierL2Adapter(
        {"master_server_address": daemon.master_address, "max_pending": 2,
         "workers": 1})
    try:
        keys = keys_for(model, 1)
        tasks = [adapter.submit_lookup_and_lock_task(keys) for _ in range(7)]
        answers = drive(adapter.get_lookup_and_lock_event_fd(),
                        adapter.query_lookup_and_lock_result, tasks)
        assert sorted(answers) == sorted(tasks)
        assert all(b.popcount() == 0 for b in answers.values())
        assert not readable(adapter.get_lookup_and_lock_event_fd())
    finally:
        adapter.close()


def test_built_as_lmcaches_plugin_loader_builds_it(daemon, monkeypatch,
                                                   model):
    l1 = np.zeros(1 << 16, np.uint8)
    desc = SimpleNamespace(ptr=l1.ctypes.data, size=l1.nbytes)
    monkeypatch.setenv("MOONCAKE_MASTER", daemon.master_address)
    adapter = MooncakeTierL2Adapter({}, l1_memory_desc=desc)
    try:
        chunk = l1[:CHUNK]                        # a chunk inside L1
        chunk[:] = 7
        key = keys_for(model, 1)[0]
        assert store_all(adapter, [key], [chunk]).is_successful()
        assert adapter.report_status()["is_healthy"]
    finally:
        adapter.close()
    adapter.close()                               # idempotent
    monkeypatch.delenv("MOONCAKE_MASTER")
    with pytest.raises(ValueError, match="master"):
        MooncakeTierL2Adapter({})
