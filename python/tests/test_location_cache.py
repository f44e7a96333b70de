"""The client's location cache against a real daemon: repeated reads are
served without the master, and no read ever returns bytes that are not the
key's own, while another client removes, rewrites and crowds the keys."""

from __future__ import annotations

import threading
import time
import urllib.request

import numpy as np

import mooncake_tier as mt

SIZE = 64 * 1024


def metric(daemon, name: str) -> float:
    with urllib.request.urlopen(f"http://{daemon.admin_address}/metrics",
                                timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not exported")


def value(k: int, version: int) -> np.ndarray:
    """64 KiB of 8-byte words naming the key, the version and the word."""
    words = np.arange(SIZE // 8, dtype=np.uint64)
    return (np.uint64(k) << np.uint64(48) | np.uint64(version) << np.uint64(24)
            | words).view(np.uint8)


def check(k: int, got: np.ndarray) -> str:
    words = got.view(np.uint64)
    first = int(words[0])
    if first >> 48 != k:
        return f"another object's bytes (key {first >> 48})"
    expected = value(k, (first >> 24) & 0xFFFFFF).view(np.uint64)
    if not np.array_equal(words, expected):
        return "a torn or mixed value"
    return ""


def test_repeated_reads_skip_the_master(daemon, key):
    with mt.Store(daemon.master_address) as cached, \
            mt.Store(daemon.master_address, location_cache=False) as direct:
        cached.put(key(), value(1, 0))
        out = np.empty(SIZE, dtype=np.uint8)
        grants = metric(daemon, "mooncake_location_grants_total")
        for _ in range(50):
            assert cached.get_into(key(), out) == SIZE
        # One read asked the master (or a few, when a grant ran out).
        assert metric(daemon, "mooncake_location_grants_total") - grants < 10
        grants = metric(daemon, "mooncake_location_grants_total")
        for _ in range(50):
            assert direct.get_into(key(), out) == SIZE
        assert metric(daemon, "mooncake_location_grants_total") - grants == 50
        assert check(1, out) == ""
        # The master hears of the cached reads afterwards (batched, a hot
        # key at most every 100 ms).
        reported = metric(daemon, "mooncake_cached_reads_reported_total")
        time.sleep(0.15)
        for _ in range(5):
            assert cached.get_into(key(), out) == SIZE
        deadline = time.monotonic() + 5
        while (metric(daemon, "mooncake_cached_reads_reported_total")
               <= reported):
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_own_removal_and_rewrite_are_seen_at_once(daemon, key):
    with mt.Store(daemon.master_address) as store:
        store.put(key(), value(2, 0))
        out = np.empty(SIZE, dtype=np.uint8)
        store.get_into(key(), out)
        store.get_into(key(), out)  # from the cache now
        store.remove(key(), force=True)
        try:
            store.get_into(key(), out)
            raise AssertionError("a removed key was read from the cache")
        except mt.ObjectNotFoundError:
            pass
        store.put(key(), value(2, 1))
        assert store.get_into(key(), out) == SIZE
        assert int(out.view(np.uint64)[0]) >> 24 & 0xFFFFFF == 1


def test_cached_reads_never_return_other_bytes(daemon, key):
    keys = 8
    with mt.Store(daemon.master_address) as writer:
        for k in range(keys):
            writer.put(key(f"hot{k}"), value(k, 0))
        stop = threading.Event()
        bad: list[str] = []
        reads = [0, 0]

        def reader(r: int) -> None:
            with mt.Store(daemon.master_address) as store:
                out = np.empty(SIZE, dtype=np.uint8)
                rng = np.random.default_rng(r)
                while not stop.is_set():
                    k = int(rng.integers(keys))
                    try:
                        n = store.get_into(key(f"hot{k}"), out)
                    except mt.StoreError:
                        continue  # removed meanwhile, or not ready
                    wrong = check(k, out[:n]) if n == SIZE else "wrong size"
                    if wrong:
                        bad.append(f"hot{k}: {wrong}")
                    reads[r] += 1

        threads = [threading.Thread(target=reader, args=(r,)) for r in (0, 1)]
        for t in threads:
            t.start()
        rng = np.random.default_rng(7)
        version, filler = 1, 0
        end = time.monotonic() + 3
        try:
            while time.monotonic() < end:
                k = int(rng.integers(keys))
                try:
                    writer.remove(key(f"hot{k}"), force=version % 2 == 0)
                    writer.put(key(f"hot{k}"), value(k, version))
                    version += 1
                except mt.StoreError:
                    pass
                # Other objects into whatever DRAM is handed out now.
                for _ in range(4):
                    writer.put(key(f"fill{filler}"),
                               value(1000 + filler % 50000, 0))
                    if filler >= 64:
                        writer.remove(key(f"fill{filler - 64}"), force=True)
                    filler += 1
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert not bad, bad[:5]
        assert min(reads) > 50, reads
        assert version > 10
