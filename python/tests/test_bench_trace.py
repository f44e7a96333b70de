"""bench --trace (bench_trace.py) on a tiny trace: every backend replays it
on the session daemon, which never evicts at this size, so each must find
exactly the hits of a never-evicting cache, with every byte right."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest

from mooncake_tier import bench
from mooncake_tier.bench_trace import (BACKENDS, BlockPattern, read_trace,
                                       remove_run, replay)


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
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["backend"] for r in rows] == ["vllm", "lmcache"]
    for r in rows:
        assert r["scenario"] == "trace" and r["trace"] == "tiny.jsonl"
        assert r["requests"] == 8 and r["block_bytes"] == 64 << 10
        assert r["hit_ratio"] == pytest.approx(
            never_evicting_hit_ratio(tiny_trace()[:8]))
        assert r["infinite_hit_ratio"] == r["hit_ratio"]
        assert r["wrong_bytes"] == 0 and r["dram_bytes"] == 64 << 20


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
