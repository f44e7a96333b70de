"""Store.batch_queue(): non-blocking batches with an eventfd, against a live
daemon."""

from __future__ import annotations

import select
import threading

import numpy as np
import pytest

import mooncake_tier as mt


def readable(fd: int, timeout: float = 0.0) -> bool:
    return bool(select.select([fd], [], [], timeout)[0])


def test_submit_then_wait_overlaps_with_the_caller(store, key):
    with store.batch_queue() as q:
        values = [np.full(4096, i, np.uint8) for i in range(8)]
        keys = [key(str(i)) for i in range(8)]
        put = q.submit_put(keys, values)
        assert isinstance(put, int) and put > 0
        assert q.wait(put, timeout=10) == [0] * 8
        out = [np.zeros(4096, np.uint8) for _ in range(8)]
        get = q.submit_get_into(keys + [key("absent")], out + [bytearray(1)])
        got = q.wait(get, timeout=10)
        assert got[:8] == [4096] * 8
        assert isinstance(got[8], mt.ObjectNotFoundError)
        for o, v in zip(out, values):
            np.testing.assert_array_equal(o, v)
        assert q.pending == 0


def test_the_eventfd_wakes_an_event_loop(store, key):
    with store.batch_queue() as q:
        fd = q.fileno()
        assert not readable(fd)
        task = q.submit_put([key()], [b"v" * 100])
        assert readable(fd, timeout=10)
        done = q.collect()
        assert done == [(task, [0])]
        assert not readable(fd)
        assert q.collect() == []
        # Results are taken exactly once.
        with pytest.raises(mt.TaskNotFoundError):
            q.wait(task, timeout=0)


def test_exists_probes_and_parts(store, key):
    with store.batch_queue(workers=1) as q:
        pages = [np.full(1000, i, np.uint8) for i in range(3)]
        q.wait(q.submit_put([key("paged")], [pages]), timeout=10)
        g = key("g")
        q.wait(q.submit_put([key("m0")], [b"x"], [mt.Group(g, 2, 0)]),
               timeout=10)
        got = q.wait(q.submit_exists([key("paged"), key("m0"), key("no")]),
                     timeout=10)
        assert got[0] == 3000
        assert isinstance(got[1], mt.GroupIncompleteError)
        assert isinstance(got[2], mt.ObjectNotFoundError)
        out = [np.zeros(1500, np.uint8), np.zeros(1500, np.uint8)]
        assert q.wait(q.submit_get_into_addresses(
            [key("paged")], [[o.ctypes.data for o in out]], [[1500, 1500]]),
            timeout=10) == [3000]
        np.testing.assert_array_equal(np.concatenate(out),
                                      np.concatenate(pages))


def test_a_full_queue_refuses_until_results_are_taken(store, key):
    with store.batch_queue(workers=1, max_pending=2) as q:
        a = q.submit_exists([key("a")])
        b = q.submit_exists([key("b")])
        with pytest.raises(mt.QueueFullError):
            q.submit_exists([key("c")])
        q.wait(a, timeout=10)
        q.submit_exists([key("c")])
        q.wait(b, timeout=10)


def test_bad_arguments_raise_at_submit_and_queue_nothing(store, key):
    with store.batch_queue() as q:
        with pytest.raises(mt.InvalidArgumentError):
            q.submit_put([key("a"), key("b")], [b"1"])
        with pytest.raises(mt.InvalidArgumentError):
            q.submit_get_into([key()], [b"read-only"])
        with pytest.raises(mt.InvalidArgumentError, match="timeout"):
            q.wait(1, timeout=-1)
        with pytest.raises(mt.TaskNotFoundError):
            q.wait(12345, timeout=0.01)
        assert q.pending == 0
    with pytest.raises(mt.InvalidArgumentError):
        store.batch_queue(workers=0)


def test_close_drops_results_and_frees_buffers(store, key):
    q = store.batch_queue()
    buf = bytearray(b"x" * 1000)
    q.submit_put([key()], [buf])
    q.close()
    assert q.closed and q.pending == 0
    buf.extend(b"y")  # resizable again: the queue let go of it
    with pytest.raises(mt.InvalidArgumentError, match="closed"):
        q.submit_exists([key()])
    q.close()  # idempotent


def test_many_threads_submit_and_collect(store, key):
    results: dict[int, list] = {}
    lock = threading.Lock()
    with store.batch_queue(workers=3, max_pending=256) as q:
        def submitter(t: int) -> None:
            for i in range(20):
                task = q.submit_put([key(f"{t}-{i}")], [bytes([t, i]) * 64])
                with lock:
                    results.setdefault(task, None)

        threads = [threading.Thread(target=submitter, args=(t,))
                   for t in range(4)]
        for t in threads:
            t.start()
        taken = 0
        while taken < 80:
            if readable(q.fileno(), timeout=10):
                for task, r in q.collect():
                    with lock:
                        results[task] = r
                    taken += 1
        for t in threads:
            t.join()
    assert len(results) == 80
    assert all(r == [0] for r in results.values())
