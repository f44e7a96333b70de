"""mooncake_tier.compat against a live daemon: the Mooncake Store method
names, argument order and return codes engines rely on."""

from __future__ import annotations

import numpy as np
import pytest

import mooncake_tier as mt
from mooncake_tier import compat
from mooncake_tier.compat import MooncakeDistributedStore, ReplicateConfig


@pytest.fixture
def mc(daemon):
    s = MooncakeDistributedStore()
    # The seven positional arguments every engine passes.
    assert s.setup("localhost", "P2PHANDSHAKE", 1 << 30, 1 << 28, "rdma",
                   "mlx5_0", daemon.master_address) == 0
    yield s
    assert s.close() == 0


def test_setup_refuses_what_it_cannot_honour(daemon):
    s = MooncakeDistributedStore()
    # Newer engines pass extra keywords; unknown ones are ignored.
    assert s.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", daemon.master_address,
                   None, enable_ssd_offload=True, ssd_offload_path="/x") == 0
    s.close()
    assert s.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", daemon.master_address,
                   tenant_id="team-a") == compat.INVALID_PARAMS
    # Nothing listens on port 1.
    assert s.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "",
                   "127.0.0.1:1") == compat.RPC_FAIL
    with pytest.raises(NotImplementedError, match="setup()"):
        s.setup_dummy(1 << 20, 1 << 20, "127.0.0.1:50052")
    # Not set up: codes, not exceptions.
    assert s.put("k", b"v") == compat.RPC_FAIL
    assert s.get("k") == b""
    assert s.batch_is_exist(["a", "b"]) == [compat.RPC_FAIL] * 2


def test_put_get_and_existence_codes(mc, key):
    assert mc.is_exist(key()) == 0
    assert mc.put(key(), b"hello world") == 0
    assert mc.is_exist(key()) == 1
    assert mc.get_size(key()) == 11
    assert mc.get(key()) == b"hello world"
    # Write-once: a second put succeeds and keeps the first value.
    assert mc.put(key(), b"other") == 0
    assert mc.get(key()) == b"hello world"
    # Misses and errors read as empty bytes, sizes as negative codes.
    assert mc.get(key("absent")) == b""
    assert mc.get_size(key("absent")) == compat.OBJECT_NOT_FOUND
    assert mc.batch_is_exist([key(), key("absent"), ""]) == \
        [1, 0, compat.INVALID_KEY]
    assert mc.put("", b"v") == compat.INVALID_KEY
    assert mc.put(key("empty"), b"") == compat.INVALID_PARAMS
    assert mc.put(key("r"), b"v", ReplicateConfig(replica_num=2)) == \
        compat.INVALID_PARAMS
    assert mc.is_exist(key("r")) == 0


def test_put_parts_and_batches(mc, key):
    assert mc.put_parts(key("p"), b"ab", bytearray(b"cd"), b"e") == 0
    assert mc.get(key("p")) == b"abcde"
    assert mc.put_batch([key("a"), key("b")], [b"1", b"22"]) == 0
    assert mc.get_batch([key("a"), key("nope"), key("b")]) == [b"1", b"", b"22"]
    assert mc.put_batch([key("c"), ""], [b"1", b"2"]) == compat.INVALID_KEY


def test_zero_copy_from_registered_memory(mc, key):
    src = np.arange(4096, dtype=np.uint8)
    dst = np.zeros(4 * 4096, np.uint8)
    assert mc.register_buffer(src.ctypes.data, src.nbytes) == 0
    assert mc.register_buffer(dst.ctypes.data, dst.nbytes) == 0
    # Overlapping registration is refused.
    assert mc.register_buffer(dst.ctypes.data + 8, 64) == compat.INVALID_PARAMS
    try:
        base = src.ctypes.data
        assert mc.put_from(key("one"), base, 4096) == 0
        assert mc.batch_put_from([key("h1"), key("h2")], [base, base + 2048],
                                 [2048, 2048]) == [0, 0]
        out = dst.ctypes.data
        assert mc.get_into(key("one"), out, 4096) == 4096
        np.testing.assert_array_equal(dst[:4096], src)
        got = mc.batch_get_into([key("h1"), key("h2"), key("x"), key("one")],
                                [out, out + 4096, out + 8192, out + 12288],
                                [4096, 2048, 4096, 100])
        assert got == [2048, 2048, compat.OBJECT_NOT_FOUND,
                       compat.BUFFER_OVERFLOW]
        np.testing.assert_array_equal(dst[:2048], src[:2048])
        np.testing.assert_array_equal(dst[4096:6144], src[2048:])
    finally:
        assert mc.unregister_buffer(src.ctypes.data) == 0
        assert mc.unregister_buffer(dst.ctypes.data) == 0
    assert mc.unregister_buffer(dst.ctypes.data) == compat.INVALID_PARAMS


def test_multi_buffer_forms_gather_and_scatter(mc, key):
    # A KV block as K and V pages per layer, as vLLM and SGLang hand it over.
    layers = [np.full(1024, i, np.uint8) for i in range(6)]
    ptrs = [[p.ctypes.data for p in layers[:3]], [p.ctypes.data for p in layers[3:]]]
    sizes = [[1024] * 3, [1024] * 3]
    keys = [key("k"), key("v")]
    assert mc.batch_put_from_multi_buffers(keys, ptrs, sizes) == [0, 0]
    assert mc.batch_put_from_multi_buffers(keys, ptrs, sizes) == [0, 0]
    assert mc.get(keys[1]) == b"".join(p.tobytes() for p in layers[3:])
    out = [np.zeros(1024, np.uint8) for _ in range(6)]
    got = mc.batch_get_into_multi_buffers(
        keys + [key("none")],
        [[p.ctypes.data for p in out[:3]], [p.ctypes.data for p in out[3:]],
         [out[0].ctypes.data]],
        [[1024] * 3, [1024] * 3, [1024]])
    assert got == [3072, 3072, compat.OBJECT_NOT_FOUND]
    for o, want in zip(out, layers):
        np.testing.assert_array_equal(o, want)


def test_groups_are_an_optional_extra(mc, key):
    g = key("g")
    assert mc.put(key("m0"), b"x", group=mt.Group(g, 2, 0)) == 0
    # A member of an incomplete group is not readable yet.
    assert mc.is_exist(key("m0")) == 0
    assert mc.get(key("m0")) == b""
    assert mc.batch_put_from(
        [key("m1")], [np.frombuffer(b"y", np.uint8).ctypes.data], [1],
        groups=[mt.Group(g, 2, 1)]) == [0]
    assert mc.batch_is_exist([key("m0"), key("m1")]) == [1, 1]


def test_remove_codes(mc, key):
    assert mc.put(key(), b"v") == 0
    assert mc.remove(key()) == 0
    assert mc.remove(key()) == compat.OBJECT_NOT_FOUND
    assert mc.batch_remove([key("a"), ""]) == [compat.OBJECT_NOT_FOUND,
                                                compat.INVALID_KEY]
    with pytest.raises(NotImplementedError, match="batch_remove"):
        mc.remove_all()


def test_health_check(mc):
    assert mc.health_check() == 0


def test_prefix_probe_is_an_optional_extra(mc, key):
    keys = [key(str(i)) for i in range(4)]
    assert mc.batch_put_from(keys[:2] + keys[3:],
                             [np.zeros(8, np.uint8).ctypes.data] * 3,
                             [8] * 3) == [0, 0, 0]
    assert mc.batch_is_exist(keys) == [1, 1, 0, 1]
    assert mc.probe_prefix(keys) == 2  # stops at the first miss
    assert mc.probe_prefix([keys[0], ""]) == compat.INVALID_KEY


def test_every_mapped_reason_is_a_known_reason():
    known = {cls.reason for cls in vars(mt).values()
             if isinstance(cls, type) and issubclass(cls, mt.StoreError)}
    assert set(compat.ERROR_CODES) <= known
    assert all(code < 0 for code in compat.ERROR_CODES.values())
