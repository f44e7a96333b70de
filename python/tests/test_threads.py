"""One Store shared by many threads, and the GIL released while waiting."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import mooncake_tier as mt


def test_concurrent_use_from_many_threads(store, key):
    threads, per_thread = 8, 25

    def worker(t: int) -> int:
        out = np.empty(4096, dtype=np.uint8)
        for i in range(per_thread):
            k = key(f"t{t}/{i}")
            value = np.full(4096, (t * 31 + i) % 251, dtype=np.uint8)
            store.put(k, value, mt.Group(key(f"g{i}"), threads, t))
            assert store.exists(k).exists
            solo = key(f"solo{t}/{i}")
            store.put(solo, value)
            assert store.get_into(solo, out) == 4096
            assert (out == value).all()
        return t

    with ThreadPoolExecutor(threads) as pool:
        assert sorted(pool.map(worker, range(threads))) == list(range(threads))

    # Every group got one member per thread and is readable now.
    for i in range(per_thread):
        info = store.group(key(f"g{i}"))
        assert (info.state, info.present) == ("complete", threads)
    got = store.get_batch([key(f"t{t}/{i}") for t in range(threads)
                           for i in range(per_thread)])
    for t in range(threads):
        for i in range(per_thread):
            v = got[t * per_thread + i]
            assert v == bytes([(t * 31 + i) % 251]) * 4096


def test_gil_is_released_during_a_transfer(store, key):
    size = 32 << 20
    store.put(key(), np.ones(size, dtype=np.uint8))
    out = np.empty(size, dtype=np.uint8)
    span = {}

    def reader():
        span["start"] = time.monotonic()
        store.get_into(key(), out)
        span["end"] = time.monotonic()

    ticks = []
    t = threading.Thread(target=reader)
    # A short switch interval keeps the Python-level time around the call
    # (between the timestamps and the call itself) well inside the margin.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        t.start()
        while t.is_alive():
            ticks.append(time.monotonic())
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert (out == 1).all()
    start, end = span["start"], span["end"]
    margin = (end - start) * 0.1
    inside = [x for x in ticks if start + margin < x < end - margin]
    # A call holding the GIL would leave this thread no tick inside it.
    assert len(inside) > 100, (len(inside), end - start)
