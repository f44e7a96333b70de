"""Store against a live standalone daemon: values, zero-copy reads, groups,
batches, buffers and lifecycle."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import mooncake_tier as mt


# --- values -----------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda b: b,
    bytearray,
    memoryview,
    lambda b: np.frombuffer(b, dtype=np.uint8),
], ids=["bytes", "bytearray", "memoryview", "numpy"])
def test_round_trip_of_buffer_types(store, key, make):
    payload = bytes(range(256)) * 37
    store.put(key(), make(payload))
    got = store.get(key())
    assert type(got) is bytes
    assert got == payload


def test_round_trip_of_numpy_arrays(store, key):
    a = np.random.default_rng(7).standard_normal((64, 128)).astype(np.float16)
    store.put(key("a"), a)
    back = np.frombuffer(store.get(key("a")), dtype=np.float16).reshape(a.shape)
    np.testing.assert_array_equal(back, a)

    out = np.empty_like(a)
    assert store.get_into(key("a"), out) == a.nbytes
    np.testing.assert_array_equal(out, a)


def test_bytes_keys_and_str_keys_name_the_same_object(store, key):
    store.put(key().encode(), b"v")
    assert store.get(key()) == b"v"


def test_non_contiguous_data_is_refused_and_nothing_stored(store, key):
    a = np.arange(100, dtype=np.int64)[::2]
    with pytest.raises(mt.InvalidArgumentError, match="contiguous"):
        store.put(key(), a)
    assert not store.exists(key()).exists


def test_data_without_buffer_protocol_is_refused(store, key):
    with pytest.raises(mt.InvalidArgumentError, match="buffer protocol"):
        store.put(key(), "a str is not bytes")
    with pytest.raises(TypeError):
        store.put(123, b"v")


# --- get_into: zero copy ------------------------------------------------------

def test_get_into_writes_the_callers_array_without_copies(store, key):
    size = 4 << 20
    value = np.random.default_rng(1).integers(0, 255, size, dtype=np.uint8)
    store.put(key(), value)
    out = np.zeros(size + 100, dtype=np.uint8)
    address = out.ctypes.data

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        n = store.get_into(key(), out)
        _, into_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        got = store.get(key())
        _, get_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert n == size
    assert out.ctypes.data == address
    np.testing.assert_array_equal(out[:size], value)
    assert not out[size:].any(), "bytes past the value were written"
    # get_into allocates nothing of the value's size on the Python heap;
    # get() allocates the result once.
    assert into_peak < 64 << 10
    assert size <= get_peak < 1.5 * size
    assert got == value.tobytes()


def test_get_into_a_registered_buffer(store, key):
    buf = np.zeros(1 << 20, dtype=np.uint8)
    store.register_buffer(buf)
    assert any(b is buf for b in store.registered_buffers)
    buf[:] = 7
    store.put(key("from"), buf)  # put from registered memory
    view = np.zeros(1 << 20, dtype=np.uint8)
    assert store.get_into(key("from"), view) == 1 << 20
    assert (view == 7).all()
    buf[:] = 0
    assert store.get_into(key("from"), buf) == 1 << 20
    assert (buf == 7).all()
    store.unregister_buffer(buf)
    assert store.registered_buffers == []


def test_register_buffer_rejects_overlap_and_unknown_unregister(store):
    buf = bytearray(1 << 16)
    store.register_buffer(buf)
    with pytest.raises(mt.InvalidArgumentError):
        store.register_buffer(memoryview(buf)[100:200])
    with pytest.raises(mt.InvalidArgumentError, match="not registered"):
        store.unregister_buffer(bytearray(10))
    store.unregister_buffer(buf)


def test_get_into_checks_the_buffer(store, key):
    store.put(key(), b"x" * 1000)
    with pytest.raises(mt.InvalidArgumentError, match="read-only") as e:
        store.get_into(key(), b"\0" * 1000)
    assert isinstance(e.value, ValueError)
    with pytest.raises(mt.InvalidArgumentError, match="contiguous"):
        store.get_into(key(), np.zeros(2000, dtype=np.uint8)[::2])
    small = bytearray(999)
    with pytest.raises(mt.BufferTooSmallError, match="1000"):
        store.get_into(key(), small)
    assert small == bytearray(999), "nothing may be written on failure"


# --- groups -----------------------------------------------------------------

def test_exists_reports_group_completeness(store, key):
    gid = key("group")
    assert store.exists(key("m0")).group is None
    for i in range(3):
        store.put(key(f"m{i}"), b"part%d" % i, mt.Group(gid, 3, i))
        info = store.exists(key("m0"))
        assert info.exists and info.group_id == gid
        assert info.expected == 3 and info.present == i + 1
        assert info.state == ("complete" if i == 2 else "filling")
        assert info.group.complete == (i == 2)
    g = store.group(gid)
    assert (g.state, g.expected, g.present) == ("complete", 3, 3)
    assert [m.key for m in g.members] == [key(f"m{i}") for i in range(3)]
    assert all(m.present and m.tiers == ["memory"] for m in g.members)


def test_probe_prefix_counts_readable_blocks_in_order(store, key):
    keys = [key(f"blk{b}/{i}") for b in range(3) for i in range(2)]
    for n, k in enumerate(keys[:3]):  # block 1 lacks its second member
        store.put(k, b"x" * 100, mt.Group(key(f"blk{n // 2}"), 2, n % 2))
    store.put(keys[5], b"y" * 100)  # after the gap: not counted
    assert store.probe_prefix(keys) == (2, 200)
    info = store.probe_prefix(keys)
    length, nbytes = info
    assert (length, nbytes) == (info.length, info.bytes) == (2, 200)
    assert info.memory_bytes == 200  # nothing has left DRAM
    assert "memory_bytes=200" in repr(info)
    assert store.probe_prefix([]) == (0, 0)
    with pytest.raises(mt.InvalidKeyError, match="key 1"):
        store.probe_prefix([keys[0], ""])


def test_incomplete_group_is_all_or_nothing(store, key):
    gid = key("group")
    store.put(key("a"), b"A", (gid, 2, 0))
    with pytest.raises(mt.GroupIncompleteError) as e:
        store.get(key("a"))
    assert e.value.reason == "GROUP_INCOMPLETE"
    assert e.value.code == "FAILED_PRECONDITION"
    with pytest.raises(mt.GroupIncompleteError):
        store.get_into(key("a"), bytearray(10))
    store.put(key("b"), b"B", (gid, 2, 1))
    assert store.get_batch([key("a"), key("b")]) == [b"A", b"B"]


def test_remove_group_and_remove(store, key):
    gid = key("group")
    store.put_batch([key("a"), key("b")], [b"1", b"2"],
                    [(gid, 2, 0), (gid, 2, 1)])
    store.remove_group(gid)
    assert not store.exists(key("a")).exists
    with pytest.raises(mt.GroupNotFoundError):
        store.group(gid)
    store.put(key("c"), b"3")
    store.remove(key("c"), force=True)
    with pytest.raises(mt.ObjectNotFoundError):
        store.remove(key("c"))


def test_bad_group_arguments(store, key):
    with pytest.raises(mt.InvalidGroupError):
        store.put(key(), b"v", (key("g"), 2, 5))
    with pytest.raises(mt.InvalidArgumentError, match="3 items|got 2"):
        store.put(key(), b"v", (key("g"), 2))
    with pytest.raises(mt.InvalidArgumentError):
        store.put(key(), b"v", (key("g"), -1, 0))
    with pytest.raises(TypeError):
        store.put(key(), b"v", 42)
    assert not store.exists(key()).exists


# --- batches ----------------------------------------------------------------

def test_batches_report_each_key(store, key):
    store.put(key("dup"), b"old")
    gid = key("g")
    results = store.put_batch(
        [key("ok"), "", key("empty"), key("dup"), key("bad-group"), key("ok2")],
        [b"1", b"2", b"", b"4", b"5", np.arange(4, dtype=np.int32)],
        [None, None, None, None, (gid, 1, 3), None])
    assert results[0] is None and results[5] is None
    assert [type(r) for r in results[1:5]] == [
        mt.InvalidKeyError, mt.InvalidSizeError, mt.ObjectExistsError,
        mt.InvalidGroupError]

    got = store.get_batch([key("ok"), key("missing"), "", key("ok2")])
    assert got[0] == b"1"
    assert isinstance(got[1], mt.ObjectNotFoundError)
    assert isinstance(got[2], mt.InvalidKeyError)
    assert got[3] == np.arange(4, dtype=np.int32).tobytes()

    bufs = [bytearray(8), bytearray(8), bytearray(1)]
    n = store.get_into_batch([key("ok2"), key("missing"), key("ok")], bufs)
    assert isinstance(n[0], mt.BufferTooSmallError)  # 16 bytes into 8
    assert isinstance(n[1], mt.ObjectNotFoundError)
    assert n[2] == 1 and bufs[2] == b"1"

    infos = store.exists_batch([key("ok"), key("missing"), ""])
    assert infos[0].exists and infos[0].size == 1
    assert not infos[1].exists
    assert isinstance(infos[2], mt.InvalidKeyError)


def test_remove_batch_removes_present_keys(store, key):
    keys = [key("a"), key("b").encode(), key("c")]
    assert store.put_batch(keys, [b"1", b"2", b"3"]) == [None] * 3
    assert store.remove_batch(keys) == [None] * 3
    assert not any(i.exists for i in store.exists_batch(keys))
    # Removed means gone: a second removal reports each key missing.
    again = store.remove_batch(keys)
    assert all(isinstance(r, mt.ObjectNotFoundError) for r in again)


def test_remove_batch_reports_each_key(store, key):
    store.put_batch([key("a"), key("b")], [b"1", b"2"])
    got = store.remove_batch([key("a"), key("missing"), "", key("b")])
    assert got[0] is None and got[3] is None
    assert isinstance(got[1], mt.ObjectNotFoundError)
    assert got[1].reason == "OBJECT_NOT_FOUND"
    assert isinstance(got[1], LookupError)
    assert isinstance(got[2], mt.InvalidKeyError)
    assert not store.exists(key("a")).exists
    assert not store.exists(key("b")).exists


def test_remove_batch_of_a_member_removes_its_group(store, key):
    # The standalone daemon runs the default group_remove_policy, "group".
    gid = key("group")
    members = [key(f"m{i}") for i in range(3)]
    store.put_batch(members, [b"x", b"y", b"z"],
                    [(gid, 3, i) for i in range(3)])
    store.put(key("plain"), b"p")
    assert store.exists(members[2]).state == "complete"
    assert store.remove_batch([members[1], key("plain")]) == [None, None]
    assert not any(i.exists for i in store.exists_batch(members))
    assert not store.exists(key("plain")).exists
    with pytest.raises(mt.GroupNotFoundError):
        store.group(gid)
    # Keys are removed in order: the group went with its first member.
    store.put_batch(members[:2], [b"x", b"y"], [(gid, 2, 0), (gid, 2, 1)])
    got = store.remove_batch(members[:2])
    assert got[0] is None and isinstance(got[1], mt.ObjectNotFoundError)


def test_remove_batch_bad_input_raises_and_removes_nothing(store, key):
    store.put(key("a"), b"1")
    with pytest.raises(TypeError, match="key must be str or bytes"):
        store.remove_batch([key("a"), 7])
    with pytest.raises(TypeError, match="list or tuple"):
        store.remove_batch(key("a"))
    with pytest.raises(TypeError):
        store.remove_batch(None)
    assert store.exists(key("a")).exists
    assert store.remove_batch([]) == []
    assert store.remove_batch(()) == []


def test_malformed_batch_arguments_raise_and_store_nothing(store, key):
    with pytest.raises(mt.InvalidArgumentError, match="2 keys but 1 values"):
        store.put_batch([key("a"), key("b")], [b"1"])
    with pytest.raises(mt.InvalidArgumentError, match="contiguous"):
        store.put_batch([key("a"), key("b")],
                        [b"1", np.zeros(8, dtype=np.uint8)[::2]])
    assert not store.exists(key("a")).exists
    with pytest.raises(TypeError, match="list or tuple"):
        store.get_batch("abc")
    with pytest.raises(mt.InvalidArgumentError, match="buffers"):
        store.get_into_batch([key("a")], [])


# --- lifecycle and docs -------------------------------------------------------

def test_context_manager_closes(daemon, key):
    with mt.Store(daemon.master_address) as s:
        s.put(key(), b"v")
        assert not s.closed
    assert s.closed
    with pytest.raises(mt.StoreError, match="closed"):
        s.get(key())
    s.close()  # idempotent
    assert "closed" in repr(s)


def test_api_is_documented():
    for name in ["put", "get", "get_into", "exists", "group", "remove",
                 "remove_group", "put_batch", "get_batch", "get_into_batch",
                 "exists_batch", "remove_batch", "register_buffer"]:
        doc = getattr(mt.Store, name).__doc__
        assert doc and len(doc) > 60, name
    assert "GIL" in mt.Store.__doc__
    import pathlib
    pkg = pathlib.Path(mt.__file__).parent
    assert (pkg / "__init__.pyi").exists() and (pkg / "py.typed").exists()
