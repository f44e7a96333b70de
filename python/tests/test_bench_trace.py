"""bench --trace (bench_trace.py) on a tiny trace: every backend replays it
on the session daemon, which never evicts at this size, so each must find
exactly the hits of a never-evicting cache, with every byte right. And the
offline cache simulations beside the replay, on hand-checked sequences and
(when it is here) on the synthetic trace, against the C++ simulator's
figures; those need no daemon."""

from __future__ import annotations

import json
import os
import random
import uuid

import numpy as np
import pytest

from mooncake_tier import bench
from mooncake_tier.bench_trace import (BACKENDS, BLOCK_BYTES, FILL_FIELDS,
                                       POLICIES, SIMULATED, BlockPattern,
                                       CacheSim, Request, fill_fields,
                                       read_trace, remove_run, replay,
                                       simulate, simulated_ratios)

SYNTHETIC_TRACE = "/work/shared/traces/synthetic_trace.jsonl"


def tiny_trace() -> list[list[int]]:
    """30 requests: four conversations whose prompts grow turn by turn, a
    shared system prompt, and requests that diverge after it."""
    requests = []
    for turn in range(6):
        for conv in range(4):
            base = 1000 * (conv + 1)
            requests.append([0, 1] + [base + j for j in range(turn + 2)])
    for i in range(6):  # the system prompt, then something new
        requests.append([0, 1, 5000 + i] + ([1001] if i % 2 else []))
    return requests


def never_evicting_hit_ratio(requests: list[list[int]]) -> float:
    stored: set[int] = set()
    hits = total = 0
    for blocks in requests:
        for h in blocks:
            if h not in stored:
                break
            hits += 1
        total += len(blocks)
        stored.update(blocks)
    return hits / total


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(
        json.dumps({"timestamp": 10 * i, "input_length": 512 * len(b),
                    "output_length": 1, "hash_ids": b}) + "\n"
        for i, b in enumerate(tiny_trace())))
    return str(path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_backend_gets_the_never_evicting_hits(backend, daemon,
                                                   trace_file):
    requests = read_trace(trace_file)
    tag = uuid.uuid4().hex[:8]
    got = replay(backend, daemon.master_address, requests, tag)
    remove_run(backend, daemon.master_address, requests, tag)
    want = never_evicting_hit_ratio(tiny_trace())
    assert want > 0.5
    assert got["requests"] == 30
    assert got["blocks"] == sum(len(b) for b in tiny_trace())
    assert got["wrong_bytes"] == 0
    assert got["put_failed"] == 0
    assert got["hit_ratio"] == pytest.approx(want)
    # Each request stores its blocks from the first miss on, once each.
    # Blocks past the first miss that are stored already are stranded.
    stored: set[int] = set()
    want_stored = want_stranded = 0
    for blocks in tiny_trace():
        prefix = 0
        while prefix < len(blocks) and blocks[prefix] in stored:
            prefix += 1
        want_stored += len(set(blocks[prefix:]))
        want_stranded += len(set(blocks[prefix:]) & stored)
        stored.update(blocks)
    assert got["stored"] == want_stored
    assert want_stranded > 0
    assert got["stranded_blocks"] == want_stranded


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_store_that_goes_away_ends_the_replay(backend, trace_file):
    from mooncake_tier.standalone import StandaloneDaemon
    requests = read_trace(trace_file)
    with StandaloneDaemon(dram="16MiB", ssd_capacity="64MiB") as d:

        class StopsTheStore(list):
            """The trace, stopping the daemon after its fifth request in the
            replay's pass (the last one: a first sizes the host pool)."""
            passes = 0

            def __iter__(self):
                self.passes += 1
                for i, r in enumerate(list.__iter__(self)):
                    if i == 5 and self.passes > 1:
                        d.stop()
                    yield r

        with pytest.raises(RuntimeError, match="stopped answering after 5"):
            replay(backend, d.master_address, StopsTheStore(requests), "t")


def test_a_wrong_byte_is_counted():
    pattern = BlockPattern()
    ids = np.array([7, 8], np.uint64)
    blocks = pattern.words(ids)
    assert pattern.wrong_bytes(blocks, ids) == 0
    blocks.view(np.uint8)[1, 100] ^= 1
    assert pattern.wrong_bytes(blocks, ids) == 1
    assert pattern.wrong_bytes(blocks[::-1].copy(), ids) > 60000  # swapped


def test_cli_prints_a_row_per_backend(daemon, trace_file, capsys):
    assert bench.main(["--trace", trace_file, "--master",
                       daemon.master_address, "--backend", "vllm,lmcache",
                       "--requests", "8", "--json"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["backend"] for r in rows] == ["vllm", "lmcache"]
    for r in rows:
        assert r["scenario"] == "trace" and r["trace"] == "tiny.jsonl"
        assert r["requests"] == 8 and r["block_bytes"] == 64 << 10
        assert r["hit_ratio"] == pytest.approx(
            never_evicting_hit_ratio(tiny_trace()[:8]))
        assert r["infinite_hit_ratio"] == r["hit_ratio"]
        assert r["wrong_bytes"] == 0 and r["dram_bytes"] == 64 << 20
        # Nothing is evicted at this size (the DRAM's 1024 blocks too).
        for field in SIMULATED:
            assert r[field] == pytest.approx(r["infinite_hit_ratio"]), field
        for field in FILL_FIELDS:  # no daemon of ours to ask
            assert r[field] is None
    assert err.count("are null: --master") == 1


def test_cli_reads_the_fill_of_its_daemon(trace_file, capsys):
    assert bench.main(["--trace", trace_file, "--backend", "sglang",
                       "--requests", "8", "--dram", "16MiB",
                       "--ssd-capacity", "64MiB", "--json"]) == 0
    out, err = capsys.readouterr()
    (row,) = [json.loads(line) for line in out.splitlines()]
    if row["dram_live_fraction"] is None:  # a daemon without an admin server
        assert "no admin server" in err
        assert all(row[f] is None for f in FILL_FIELDS)
        return
    assert 0 < row["dram_live_fraction"] <= 1
    assert 0 <= row["ssd_live_fraction"] <= 1
    assert row["ssd_write_amplification"] >= 0


def test_the_table_shows_null_fields_as_a_dash(daemon, trace_file, capsys):
    assert bench.main(["--trace", trace_file, "--master",
                       daemon.master_address, "--backend", "vllm",
                       "--requests", "4"]) == 0
    head, line = capsys.readouterr().out.splitlines()
    cells = dict(zip(head.split(), line.split()))
    assert cells["ssd_live_fraction"] == "-"
    assert cells["ssd_write_amplification"] == "-"
    assert float(cells["lru_hit_ratio"]) == float(cells["infinite_hit_ratio"])


@pytest.mark.parametrize("args, message", [
    (["--trace", "/nonexistent/trace.jsonl"], "cannot read"),
    (["--backend", "sglang,trtllm"], "unknown trtllm"),
    (["--dram", "lots"], "not a size"),
    (["--requests", "-1"], "--requests"),
])
def test_bad_options_exit_2(args, message, trace_file, capsys):
    if "--trace" not in args:
        args = ["--trace", trace_file] + args
    with pytest.raises(SystemExit) as e:
        bench.main(args + ["--master", "127.0.0.1:1"])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_a_malformed_line_is_named(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"timestamp": 0, "hash_ids": [1, 2]}\n'
                    '{"timestamp": 5, "hash_ids": [1, "x"]}\n')
    with pytest.raises(SystemExit) as e:
        bench.main(["--trace", str(path), "--master", "127.0.0.1:1"])
    assert e.value.code == 2
    assert "bad.jsonl:2: hash_ids" in capsys.readouterr().err


# --- The offline simulations: pure functions, no daemon.

def requests_of(*blocks: list[int]) -> list[Request]:
    return [Request(0, tuple(b)) for b in blocks]


def one_per_request(*ids: int) -> list[Request]:
    """Requests of one block each: every reference is a prefix of its own,
    so the prefix rule does not come in."""
    return requests_of(*([h] for h in ids))


def test_lru_keeps_the_recently_used_block():
    # 1 2 1 3: the hit on 1 makes 2 the least recent, so 3 evicts 2 and
    # the last 1 hits (a FIFO would have evicted 1).
    assert simulate(one_per_request(1, 2, 1, 3, 1), "lru", 2) == \
        CacheSim(references=5, prefix_hits=2, resident=2)
    assert simulate(one_per_request(1, 2, 1, 3, 2), "lru", 2).prefix_hits == 1


def test_clock_spares_a_referenced_block_one_pass():
    # 3 finds 1 at the hand with its bit set (the hit): 1 goes round with
    # the bit cleared and 2 is evicted, so 1 hits again...
    assert simulate(one_per_request(1, 2, 1, 3, 1), "clock", 2) == \
        CacheSim(references=5, prefix_hits=2, resident=2)
    # ...but only once: with no hit in between, 4 evicts it.
    assert simulate(one_per_request(1, 2, 1, 3, 4, 1), "clock", 2) == \
        CacheSim(references=6, prefix_hits=1, resident=1)


def test_s3fifo_keeps_a_twice_seen_block_through_a_scan():
    # 10 blocks: a probation queue of 1, main of 9. Block 1 is seen twice,
    # so the first eviction moves it to main, and a scan of one-time
    # blocks only ever evicts from probation; LRU loses it to the scan.
    trace = one_per_request(1, 1, *range(100, 130), 1)
    assert simulate(trace, "s3fifo", 10).prefix_hits == 2
    assert simulate(trace, "lru", 10).prefix_hits == 1
    assert simulate(trace, "clock", 10).prefix_hits == 1  # one pass only


def test_s3fifo_sends_a_ghost_back_to_main():
    # Block 1, seen once, leaves probation for the ghost when 109 needs
    # its room; seen again it enters main, where the scan does not reach.
    trace = one_per_request(1, *range(100, 110), 1, *range(200, 230), 1)
    assert simulate(trace, "s3fifo", 10).prefix_hits == 1
    assert simulate(trace, "lru", 10).prefix_hits == 0


def test_opt_evicts_the_block_needed_last():
    # At 3, block 2 is never needed again and 1 is: MIN evicts 2, LRU 1.
    trace = one_per_request(1, 2, 3, 1)
    assert simulate(trace, "opt", 2).prefix_hits == 1
    assert simulate(trace, "lru", 2).prefix_hits == 0


@pytest.mark.parametrize("seed", range(20))
def test_opt_finds_the_most_blocks_cached(seed):
    """MIN has the fewest misses of any demand-paging policy: at least the
    resident hits of each other one (not necessarily the prefix hits)."""
    rng = random.Random(seed)
    universe = rng.randint(3, 60)
    trace = requests_of(*([rng.randrange(universe)
                           for _ in range(rng.randint(1, 8))]
                          for _ in range(200)))
    for capacity in (1, 2, 5, universe // 2, universe):
        best = simulate(trace, "opt", capacity).resident
        for policy in POLICIES:
            assert simulate(trace, policy, capacity).resident <= best, \
                (policy, capacity)


@pytest.mark.parametrize("policy", POLICIES)
def test_blocks_after_the_first_miss_are_misses(policy):
    # 2 is still cached, but 3 before it misses: 2 is no hit.
    assert simulate(requests_of([1, 2], [3, 2]), policy, 100) == \
        CacheSim(references=4, prefix_hits=0, resident=1)
    assert simulate(requests_of([1, 2], [1, 2]), policy, 100).prefix_hits == 2
    assert simulate(requests_of([1, 2], [1, 2]), policy, 0) == \
        CacheSim(references=4, prefix_hits=0, resident=0)


def test_a_cached_block_after_a_miss_is_still_referenced():
    # In [4, 1], 1 is no hit (4 missed) but the reference makes it the
    # most recent, so 5 evicts 2 instead and the last request hits 1.
    trace = requests_of([1], [2], [3], [4, 1], [5], [1])
    assert simulate(trace, "lru", 4) == \
        CacheSim(references=7, prefix_hits=1, resident=2)


@pytest.mark.skipif(not os.path.exists(SYNTHETIC_TRACE),
                    reason=f"{SYNTHETIC_TRACE} is not here")
def test_the_synthetic_trace_gives_the_cpp_simulators_figures():
    # 512 MiB of SSD is 8192 blocks, with 64 MiB of DRAM 9216.
    assert (512 << 20) // BLOCK_BYTES == 8192
    got = simulated_ratios(read_trace(SYNTHETIC_TRACE), 64 << 20, 512 << 20)
    assert got["lru_hit_ratio"] == pytest.approx(0.378, abs=0.001)
    assert got["clock_hit_ratio"] == pytest.approx(0.388, abs=0.002)
    assert got["s3fifo_hit_ratio"] == pytest.approx(0.384, abs=0.002)
    assert got["lru_hit_ratio_exclusive"] == pytest.approx(0.406, abs=0.001)
    assert got["dram_lru_hit_ratio"] < got["lru_hit_ratio"]
    assert got["opt_hit_ratio_exclusive"] <= 0.640  # the never-evicting one


def test_fill_fields_sum_the_nodes():
    nodes = [{"dram": {"used_bytes": 16 << 20},
              "ssd": {"used_bytes": 64 << 20,
                      "store": {"device_bytes_written": 3 * BLOCK_BYTES}}},
             {"dram": {"used_bytes": 16 << 20},
              "ssd": {"used_bytes": 0}}]  # no store report: wrote nothing
    assert fill_fields(nodes, 64 << 20, 512 << 20, stored_blocks=2) == {
        "ssd_live_fraction": 0.125, "dram_live_fraction": 0.5,
        "ssd_write_amplification": 1.5}
    assert fill_fields(nodes, 64 << 20, 512 << 20, stored_blocks=0)[
        "ssd_write_amplification"] == 0.0
