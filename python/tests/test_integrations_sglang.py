"""The SGLang HiCache backend driven the way SGLang's cache controller
drives it: prefix lookup, backup of host pages, lookup again, prefetch into
other host pages. Numpy host pools stand in for SGLang's, with the same
attribute names (kv_buffer, page_size, get_page_buffer_meta, ...)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import numpy as np
import pytest

import mooncake_tier as mt
from mooncake_tier.integrations.sglang import MooncakeTierHiCacheStorage

LAYERS, HEADS, HEAD_DIM, PAGE = 2, 2, 8, 4


class MHAHostPool:
    """Like SGLang's MHATokenToKVPoolHost, page_first layout: kv_buffer is
    (2, tokens, layers, heads, head_dim); a page is one K and one V run."""

    layout = "page_first"

    def __init__(self, pages: int, page_size: int = PAGE) -> None:
        self.page_size = page_size
        self.size = pages * page_size
        self.kv_buffer = np.zeros((2, self.size, LAYERS, HEADS, HEAD_DIM),
                                  np.float16)

    def get_hybrid_pool_buffer(self) -> list[np.ndarray]:
        return [self.kv_buffer[0], self.kv_buffer[1]]

    def get_page_buffer_meta(self, indices):
        token = LAYERS * HEADS * HEAD_DIM * self.kv_buffer.itemsize
        base, v_offset = self.kv_buffer.ctypes.data, self.size * token
        ptrs = []
        indices = indices.tolist()
        for i in range(0, len(indices), self.page_size):
            ptrs += [base + indices[i] * token,
                     base + indices[i] * token + v_offset]
        return ptrs, [token * self.page_size] * len(ptrs)

    def page(self, first_token: int) -> np.ndarray:
        """K and V of the page starting at first_token."""
        run = slice(first_token, first_token + self.page_size)
        return self.kv_buffer[:, run].copy()


class MLAHostPool:
    """Like SGLang's MLATokenToKVPoolHost, layer_first layout: one buffer
    per layer per page, which the backend gathers into one object."""

    layout = "layer_first"

    def __init__(self, pages: int, page_size: int = PAGE) -> None:
        self.page_size = page_size
        self.size = pages * page_size
        self.kv_buffer = np.zeros((LAYERS, self.size, 1, HEAD_DIM), np.int32)

    def get_page_buffer_meta(self, indices):
        token = HEAD_DIM * self.kv_buffer.itemsize
        ptrs = []
        indices = indices.tolist()
        for i in range(0, len(indices), self.page_size):
            for layer in range(LAYERS):
                ptrs.append(self.kv_buffer[layer].ctypes.data
                            + indices[i] * token)
        return ptrs, [token * self.page_size] * len(ptrs)


def storage_config(master: str, **extra) -> SimpleNamespace:
    """The fields of SGLang's HiCacheStorageConfig the backend reads."""
    return SimpleNamespace(
        tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, attn_cp_rank=0,
        attn_cp_size=1, is_mla_model=extra.pop("is_mla", False),
        enable_storage_metrics=False, is_page_first_layout=True,
        model_name="org/model", should_split_heads=False, tp_lcm_size=None,
        extra_config={"backend_name": "mooncake_tier",
                      "module_path": "mooncake_tier.integrations.sglang",
                      "class_name": "MooncakeTierHiCacheStorage",
                      "interface_v1": 1, "master_server_address": master,
                      **extra})


@pytest.fixture
def tag():
    return uuid.uuid4().hex[:8]  # keeps tests apart on the shared daemon


@pytest.fixture
def backend(daemon, tag):
    # As SGLang's loader builds it: cls(storage_config, {}).
    b = MooncakeTierHiCacheStorage(
        storage_config(daemon.master_address, extra_backend_tag=tag), {})
    yield b
    b.close()


def fill(pool: MHAHostPool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool.kv_buffer[:] = rng.standard_normal(pool.kv_buffer.shape)


def slots(pages: list[int], page_size: int = PAGE) -> np.ndarray:
    """Host indices of whole pages, as SGLang passes them."""
    return np.concatenate([np.arange(p * page_size, (p + 1) * page_size)
                           for p in pages]).astype(np.int64)


def test_controller_sequence_backup_then_prefetch(backend):
    pool = MHAHostPool(pages=8)
    fill(pool, 1)
    backend.register_mem_pool_host(pool)
    keys = [f"page{i}" for i in range(3)]

    assert backend.batch_exists(keys) == 0                 # nothing cached
    assert backend.batch_set_v1(keys, slots([0, 1, 2])) == [True] * 3
    assert backend.batch_exists(keys) == 3
    assert backend.batch_exists(keys + ["never-stored"]) == 3
    assert backend.exists("page1") and not backend.exists("never-stored")

    # Prefetch into other host pages, as after the host copy was evicted.
    assert backend.batch_get_v1(keys, slots([5, 6, 7])) == [True] * 3
    for src, dst in zip([0, 1, 2], [5, 6, 7]):
        np.testing.assert_array_equal(pool.page(dst * PAGE),
                                      pool.page(src * PAGE))


def test_objects_are_named_as_sglangs_mooncake_backend_names_them(
        backend, store, tag):
    pool = MHAHostPool(pages=2)
    fill(pool, 2)
    backend.register_mem_pool_host(pool)
    assert backend.batch_set_v1(["h0"], slots([0])) == [True]
    k, v = store.exists(f"{tag}_org-model_h0_0_k"), \
        store.exists(f"{tag}_org-model_h0_0_v")
    page_bytes = PAGE * LAYERS * HEADS * HEAD_DIM * 2
    assert k.size == v.size == page_bytes
    assert store.get(f"{tag}_org-model_h0_0_v") == pool.page(0)[1].tobytes()


def test_a_missing_middle_page_ends_the_prefix(backend, store, tag):
    pool = MHAHostPool(pages=8)
    fill(pool, 3)
    backend.register_mem_pool_host(pool)
    keys = [f"p{i}" for i in range(4)]
    assert backend.batch_set_v1(keys, slots([0, 1, 2, 3])) == [True] * 4
    # Half a page (its V object gone) is no page.
    store.remove(f"{tag}_org-model_p2_0_v")
    assert backend.batch_exists(keys) == 2
    assert backend.batch_exists(keys[3:]) == 1
    assert backend.batch_get_v1(keys, slots([4, 5, 6, 7])) == \
        [True, True, False, True]
    np.testing.assert_array_equal(pool.page(4 * PAGE), pool.page(0))
    np.testing.assert_array_equal(pool.page(7 * PAGE), pool.page(3 * PAGE))
    # Backing the page up again restores the prefix; present objects are
    # skipped.
    assert backend.batch_set_v1(keys, slots([0, 1, 2, 3])) == [True] * 4
    assert backend.batch_exists(keys) == 4


class CountingStore:
    """The backend's store, counting the puts it is asked for."""

    def __init__(self, store: mt.Store) -> None:
        self._store, self.put_keys = store, []

    def put_from_addresses(self, keys, *args, **kwargs):
        self.put_keys += list(keys)
        return self._store.put_from_addresses(keys, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._store, name)


def test_repeated_backup_skips_stored_pages_and_succeeds(backend):
    pool = MHAHostPool(pages=4)
    fill(pool, 4)
    backend.register_mem_pool_host(pool)
    counting = CountingStore(backend._store)
    backend._store = counting
    keys = ["a", "b"]
    assert backend.batch_set_v1(keys[:1], slots([0])) == [True]
    assert len(counting.put_keys) == 2                     # a's K and V
    first = pool.page(0)
    pool.kv_buffer[:] = 0                                  # new host data
    assert backend.batch_set_v1(keys, slots([0, 1])) == [True, True]
    assert len(counting.put_keys) == 4                     # only b's objects
    assert backend.batch_set_v1(keys, slots([0, 1])) == [True, True]
    assert len(counting.put_keys) == 4                     # nothing new
    # Keys are write-once: the first backup of "a" is what comes back.
    assert backend.batch_get_v1(["a"], slots([3])) == [True]
    np.testing.assert_array_equal(pool.page(3 * PAGE), first)


def test_a_page_whose_object_does_not_fit_fails_alone(backend, store, tag):
    pool = MHAHostPool(pages=6)
    fill(pool, 5)
    backend.register_mem_pool_host(pool)
    keys = ["x0", "x1", "x2"]
    # Someone stored a larger object under x1's K key.
    store.put(f"{tag}_org-model_x1_0_k", bytes(1 << 16))
    assert backend.batch_set_v1(keys, slots([0, 1, 2])) == [True] * 3
    assert backend.batch_exists(keys) == 3
    assert backend.batch_get_v1(keys, slots([3, 4, 5])) == \
        [True, False, True]
    np.testing.assert_array_equal(pool.page(3 * PAGE), pool.page(0))
    np.testing.assert_array_equal(pool.page(5 * PAGE), pool.page(2 * PAGE))


def test_mla_layer_pages_gather_into_one_object(daemon, store, tag):
    backend = MooncakeTierHiCacheStorage(
        storage_config(daemon.master_address, extra_backend_tag=tag,
                       is_mla=True), {})
    try:
        pool = MLAHostPool(pages=4)
        pool.kv_buffer[:] = np.arange(pool.kv_buffer.size).reshape(
            pool.kv_buffer.shape)
        backend.register_mem_pool_host(pool)
        assert backend.batch_set_v1(["m0", "m1"], slots([0, 1])) == [True] * 2
        info = store.exists(f"{tag}_org-model_m1__k")
        assert info.size == LAYERS * PAGE * HEAD_DIM * 4
        assert backend.batch_exists(["m0", "m1", "m2"]) == 2
        assert backend.batch_get_v1(["m0", "m1"], slots([2, 3])) == [True] * 2
        np.testing.assert_array_equal(pool.kv_buffer[:, 2 * PAGE:4 * PAGE],
                                      pool.kv_buffer[:, 0:2 * PAGE])
    finally:
        backend.close()


def test_legacy_zero_copy_forms(backend):
    src = np.arange(256, dtype=np.uint8)
    dst = np.zeros(256, np.uint8)
    assert backend.set("raw", target_location=src.ctypes.data,
                       target_sizes=src.nbytes)
    assert backend.set("raw", src)                          # stored: success
    assert backend.get("raw", dst.ctypes.data, dst.nbytes)
    np.testing.assert_array_equal(dst, src)
    out = [np.zeros(256, np.uint8), np.zeros(256, np.uint8)]
    got = backend.batch_get(["raw", "absent"], out)
    assert got[0] is out[0] and got[1] is None
    assert backend.batch_set(["r1", "r2"], [src[:10], src[10:20]])
    with pytest.raises(ValueError, match="zero-copy"):
        backend.get("raw")


def test_configuration_is_checked_at_construction(daemon, monkeypatch):
    with pytest.raises(ValueError, match="interface_v1"):
        MooncakeTierHiCacheStorage(
            storage_config(daemon.master_address, interface_v1=0), {})
    monkeypatch.delenv("MOONCAKE_MASTER", raising=False)
    monkeypatch.delenv("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", raising=False)
    with pytest.raises(ValueError, match="master"):
        MooncakeTierHiCacheStorage(
            storage_config(daemon.master_address, master_server_address=""),
            {})
    with pytest.raises(ValueError, match="tenant_id"):
        MooncakeTierHiCacheStorage(
            storage_config(daemon.master_address, tenant_id="team-a"), {})
    # MOONCAKE_MASTER, as for SGLang's Mooncake backend.
    monkeypatch.setenv("MOONCAKE_MASTER", daemon.master_address)
    b = MooncakeTierHiCacheStorage(
        storage_config(daemon.master_address, master_server_address=""), {})
    b.close()


def test_hybrid_pools_are_refused(backend):
    with pytest.raises(NotImplementedError, match="hybrid"):
        backend.register_mem_pool_host(SimpleNamespace(kv_buffer=None,
                                                       page_size=PAGE))
    with pytest.raises(NotImplementedError, match="hybrid"):
        backend.register_mem_host_pool_v2(object(), "mamba")
