"""The vLLM store-connector worker driven as vLLM's connector drives it:
lookup for the scheduler, async saves and loads issued per step, their
completion reported by get_finished, load failures by block id. Numpy
arrays stand in for the paged KV caches."""

from __future__ import annotations

import time
import uuid

import numpy as np
import pytest

from mooncake_tier.integrations.vllm import MooncakeTierStoreWorker

BLOCKS, BS, HEADS, DIM, LAYERS = 8, 4, 2, 8, 2


def flash_attn_caches(seed: int) -> dict[str, np.ndarray]:
    """Per layer (2, num_blocks, block_size, heads, head_dim): K and V are
    two segments of the buffer."""
    rng = np.random.default_rng(seed)
    return {f"model.layers.{i}.attn":
            rng.standard_normal((2, BLOCKS, BS, HEADS, DIM)).astype(np.float16)
            for i in range(LAYERS)}


def block_of(caches: dict[str, np.ndarray], block: int) -> list[np.ndarray]:
    return [c[:, block].copy() for c in caches.values()]


def wait_finished(worker, finished=(), sending=(), receiving=(),
                  timeout=10.0):
    """Calls get_finished as vLLM does every step until the wanted ids
    were reported; returns everything reported."""
    sent, received = set(), set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s, r = worker.get_finished(set(finished))
        sent |= s
        received |= r
        if set(sending) <= sent and set(receiving) <= received:
            return sent, received
        time.sleep(0.01)
    raise AssertionError(f"not reported: {sending} {receiving}")


@pytest.fixture
def model():
    return "m-" + uuid.uuid4().hex[:8]


@pytest.fixture
def worker(daemon, model):
    w = MooncakeTierStoreWorker(daemon.master_address, block_size=BS,
                                num_blocks=BLOCKS, model_name=model)
    yield w
    w.close()


def hashes(n: int, salt: str = "") -> list[bytes]:
    return [f"{salt}block{i}".encode().ljust(32, b".") for i in range(n)]


def test_save_lookup_load_round_trip(worker):
    caches = flash_attn_caches(1)
    worker.register_kv_caches(caches)
    h = hashes(3)
    assert worker.lookup(3 * BS + 1, h) == 0                 # nothing cached

    worker.save("req-a", h, [0, 1, 2])
    wait_finished(worker, finished={"req-a"}, sending={"req-a"})
    assert worker.lookup(3 * BS + 1, h) == 3 * BS
    # A hit over the whole prompt leaves its last token to recompute.
    assert worker.lookup(3 * BS, h) == 2 * BS
    assert worker.lookup(2 * BS + 3, h) == 2 * BS            # full blocks only

    worker.load("req-b", h, [5, 6, 7])
    _, received = wait_finished(worker, receiving={"req-b"})
    assert received == {"req-b"}
    assert worker.get_block_ids_with_load_errors() == set()
    for src, dst in zip([0, 1, 2], [5, 6, 7]):
        for a, b in zip(block_of(caches, src), block_of(caches, dst)):
            np.testing.assert_array_equal(a, b)


def test_one_object_per_block_with_every_layer_as_a_part(worker, store,
                                                         model):
    caches = flash_attn_caches(2)
    worker.register_kv_caches(caches)
    worker.save("r", [b"\x01\x02"], [3])
    wait_finished(worker, finished={"r"}, sending={"r"})
    key = f"{model}@tp_rank:0@pcp0@dcp0@pp_rank:0@group:0@0102"
    page = BS * HEADS * DIM * 2
    assert store.exists(key).size == LAYERS * 2 * page
    # Layer 0 K, layer 0 V, layer 1 K, layer 1 V.
    want = b"".join(c[kv, 3].tobytes() for c in caches.values()
                    for kv in (0, 1))
    assert store.get(key) == want


def test_a_missing_middle_block_ends_the_hit(worker, store, model):
    caches = flash_attn_caches(3)
    worker.register_kv_caches(caches)
    h = hashes(4, "mid")
    worker.save("s", h, [0, 1, 2, 3])
    wait_finished(worker, finished={"s"}, sending={"s"})
    store.remove(f"{model}@tp_rank:0@pcp0@dcp0@pp_rank:0@group:0@{h[1].hex()}")
    assert worker.lookup(10 * BS, h) == BS
    # Loading all four anyway: the missing block is reported, the request
    # still completes, the others arrive.
    worker.load("l", h, [4, 5, 6, 7])
    wait_finished(worker, receiving={"l"})
    assert worker.get_block_ids_with_load_errors() == {5}
    assert worker.get_block_ids_with_load_errors() == set()   # taken once
    for src, dst in [(0, 4), (2, 6), (3, 7)]:
        for a, b in zip(block_of(caches, src), block_of(caches, dst)):
            np.testing.assert_array_equal(a, b)


def test_saving_again_skips_stored_blocks(worker):
    caches = flash_attn_caches(4)
    worker.register_kv_caches(caches)
    h = hashes(2, "again")
    worker.save("one", h[:1], [0])
    wait_finished(worker, finished={"one"}, sending={"one"})
    first = block_of(caches, 0)
    for c in caches.values():
        c[:] = 0                                   # the GPU blocks were reused
    worker.save("two", h, [0, 1])
    wait_finished(worker, finished={"two"}, sending={"two"})
    assert worker.stats["saved_blocks"] == 2
    assert worker.stats["skipped_blocks"] == 1
    worker.load("back", h[:1], [7])
    wait_finished(worker, receiving={"back"})
    for a, b in zip(first, block_of(caches, 7)):   # write-once: first wins
        np.testing.assert_array_equal(a, b)


def test_a_block_of_the_wrong_size_fails_alone(worker, store, model):
    caches = flash_attn_caches(5)
    worker.register_kv_caches(caches)
    h = hashes(3, "size")
    store.put(f"{model}@tp_rank:0@pcp0@dcp0@pp_rank:0@group:0@{h[2].hex()}",
              b"short")
    worker.save("w", h, [0, 1, 2])                 # h[2] stored: skipped
    wait_finished(worker, finished={"w"}, sending={"w"})
    worker.load("r", h, [4, 5, 6])
    wait_finished(worker, receiving={"r"})
    assert worker.get_block_ids_with_load_errors() == {6}
    for a, b in zip(block_of(caches, 1), block_of(caches, 5)):
        np.testing.assert_array_equal(a, b)


def test_sends_are_reported_once_vllm_named_the_request(worker):
    worker.register_kv_caches(flash_attn_caches(6))
    worker.save("q", hashes(1, "named"), [0])
    deadline = time.monotonic() + 10
    while worker.stats["saved_blocks"] == 0 and time.monotonic() < deadline:
        assert worker.get_finished(set()) == (set(), set())  # not named yet
        time.sleep(0.01)
    sent, _ = wait_finished(worker, finished={"q", "other"}, sending={"q"})
    assert sent == {"q"}                                 # no saves: not sent
    assert worker.get_finished({"q"})[0] == set()        # reported once


def test_blocks_outermost_layout_is_one_segment(daemon, model):
    rng = np.random.default_rng(7)
    caches = {"l0": rng.integers(0, 255, (BLOCKS, 2, BS, HEADS, DIM),
                                 dtype=np.uint8)}
    w = MooncakeTierStoreWorker(daemon.master_address, block_size=BS,
                                num_blocks=BLOCKS, model_name=model)
    try:
        w.register_kv_caches(caches)
        w.save("f", hashes(1, "fi"), [2])
        wait_finished(w, finished={"f"}, sending={"f"})
        w.load("g", hashes(1, "fi"), [3])
        wait_finished(w, receiving={"g"})
        np.testing.assert_array_equal(caches["l0"][3], caches["l0"][2])
    finally:
        w.close()


def test_lookup_needs_every_tp_shard(daemon, model):
    h = hashes(2, "tp")
    ranks = [MooncakeTierStoreWorker(daemon.master_address, block_size=BS,
                                     num_blocks=BLOCKS, model_name=model,
                                     tp_rank=r, tp_size=2) for r in (0, 1)]
    try:
        for r, w in enumerate(ranks):
            w.register_kv_caches(flash_attn_caches(10 + r))
        ranks[0].save("t", h, [0, 1])
        wait_finished(ranks[0], finished={"t"}, sending={"t"})
        assert ranks[0].lookup(3 * BS, h) == 0       # rank 1's shards missing
        ranks[1].save("t", h[:1], [0])
        wait_finished(ranks[1], finished={"t"}, sending={"t"})
        assert ranks[0].lookup(3 * BS, h) == BS
    finally:
        for w in ranks:
            w.close()
