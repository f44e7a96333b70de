"""The calls inference engines make beyond plain put/get: objects gathered
from and scattered into several pages, raw memory by address, and the
health check."""

from __future__ import annotations

import numpy as np
import pytest

import mooncake_tier as mt
from mooncake_tier.standalone import StandaloneDaemon


def pages(n: int, size: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size, dtype=np.uint8) for _ in range(n)]


def test_a_block_spread_over_layer_pages_is_one_object(store, key):
    layers = pages(4, 3000, 1)
    store.put(key(), layers)
    assert store.exists(key()).size == 12000
    assert store.get(key()) == b"".join(p.tobytes() for p in layers)

    # Scattered back into other pages; a bigger last page is filled in part.
    out = [np.zeros(3000, np.uint8) for _ in range(3)] + [np.zeros(5000, np.uint8)]
    assert store.get_into(key(), out) == 12000
    for got, want in zip(out[:3], layers[:3]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out[3][:3000], layers[3])
    assert not out[3][3000:].any()


def test_batches_mix_whole_and_paged_values(store, key):
    a, b = pages(2, 1000, 2), pages(1, 500, 3)[0]
    assert store.put_batch([key("a"), key("b")], [a, b]) == [None, None]
    into_a = [np.zeros(1000, np.uint8), np.zeros(1000, np.uint8)]
    small = [np.zeros(100, np.uint8)]
    got = store.get_into_batch([key("a"), key("b"), key("b")],
                               [into_a, bytearray(500), small])
    assert got[:2] == [2000, 500]
    assert isinstance(got[2], mt.BufferTooSmallError)
    assert not small[0].any()
    np.testing.assert_array_equal(np.concatenate(into_a), np.concatenate(a))


def test_readable_batch_answers_what_a_get_would_find(store, key):
    store.put(key("a"), b"x")
    store.put(key("m0"), b"y", mt.Group(key("g"), 2, 0))
    got = store.readable_batch([key("a"), key("m0"), key("none"), ""])
    assert got[:3] == [True, False, False]  # m0's group is not complete
    assert isinstance(got[3], mt.InvalidKeyError)
    store.put(key("m1"), b"z", mt.Group(key("g"), 2, 1))
    assert store.readable_batch([key("m0"), key("m1")]) == [True, True]


def test_bad_parts_raise_and_store_nothing(store, key):
    with pytest.raises(mt.InvalidArgumentError, match="no parts"):
        store.put(key(), [])
    with pytest.raises(mt.InvalidArgumentError, match="buffer protocol"):
        store.put(key(), [b"ok", 7])
    with pytest.raises(mt.InvalidArgumentError):
        store.get_into(key(), [b"read-only"])
    assert not store.exists(key())


def test_raw_memory_by_address(store, key):
    src = pages(3, 4096, 4)
    dst = [np.zeros(4096, np.uint8) for _ in range(3)]
    whole = np.zeros(3 * 4096, np.uint8)
    for p in src + dst + [whole]:
        store.register_memory(p.ctypes.data, p.nbytes)
    try:
        # One object from three ranges, one from a single range.
        done = store.put_from_addresses(
            [key("paged"), key("flat")],
            [[p.ctypes.data for p in src], src[0].ctypes.data],
            [[p.nbytes for p in src], src[0].nbytes])
        assert done == [None, None]
        got = store.get_into_addresses(
            [key("paged"), key("flat"), key("paged")],
            [[p.ctypes.data for p in dst], whole.ctypes.data, whole.ctypes.data],
            [[p.nbytes for p in dst], whole.nbytes, 100])
        assert got[:2] == [3 * 4096, 4096]
        assert isinstance(got[2], mt.BufferTooSmallError)
        for d, s in zip(dst, src):
            np.testing.assert_array_equal(d, s)
        np.testing.assert_array_equal(whole[:4096], src[0])
    finally:
        for p in src + dst + [whole]:
            store.unregister_memory(p.ctypes.data)
    with pytest.raises(mt.InvalidArgumentError, match="no memory registered"):
        store.unregister_memory(whole.ctypes.data)


def test_bad_addresses_raise_and_store_nothing(store, key):
    buf = np.zeros(64, np.uint8)
    for addresses, sizes, match in [
            ([0], [64], "not a valid"),
            ([buf.ctypes.data], [0], "not a valid"),
            ([[buf.ctypes.data]], [64], "both be ints or both be lists"),
            ([[buf.ctypes.data, buf.ctypes.data]], [[32]], "same number"),
            ([buf.ctypes.data], [64, 64], "2 sizes"),
            ([-1], [64], r"\[0, 2\^64\)")]:
        with pytest.raises(mt.InvalidArgumentError, match=match):
            store.put_from_addresses([key()], addresses, sizes)
    with pytest.raises(TypeError):
        store.put_from_addresses([key()], ["0x10"], [64])
    assert not store.exists(key())


def test_health_check_answers_and_fails_when_the_store_is_gone():
    with StandaloneDaemon(dram="16MiB", ssd_capacity="64MiB") as d:
        s = mt.Store(d.master_address, rpc_timeout=1.0)
        seconds = s.health_check()
        assert 0 < seconds < 1.0
    # The daemon has stopped.
    with pytest.raises((mt.UnavailableError, mt.StoreTimeoutError)):
        s.health_check()
    s.close()
