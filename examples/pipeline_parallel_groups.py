#!/usr/bin/env python3
"""Pipeline-parallel KV blocks as groups.

Eight worker threads stand for eight pipeline ranks. For every KV block each
rank puts its own slice (its layers' K and V) as one member of the block's
group: {group_id: the block, group_size: 8, group_index: the rank}. A reader
thread, as an inference engine would, asks `exists` whether a block's group
is complete before fetching it, so it never reads half a block; fetching
earlier would raise GroupIncompleteError (the store's default all-or-nothing
visibility).

Run against a running store:
    PYTHONPATH=build/python /usr/bin/python3 examples/pipeline_parallel_groups.py --master 127.0.0.1:50051
or let it start a throwaway standalone daemon:
    PYTHONPATH=build/python /usr/bin/python3 examples/pipeline_parallel_groups.py --spawn
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import uuid

import numpy as np

import mooncake_tier as mt

RANKS = 8                   # pipeline stages, one thread each
LAYERS_PER_RANK = 4
TOKENS, HEADS, HEAD_DIM = 16, 8, 64  # one KV block


def slice_of(block: int, rank: int) -> np.ndarray:
    """Rank `rank`'s K and V for its layers of block `block` (fp16)."""
    rng = np.random.default_rng(block * RANKS + rank)
    shape = (LAYERS_PER_RANK, 2, TOKENS, HEADS, HEAD_DIM)
    return rng.standard_normal(shape).astype(np.float16)


def rank_worker(store: mt.Store, run: str, rank: int, blocks: int,
                start: threading.Barrier) -> None:
    start.wait()
    for block in range(blocks):
        # Ranks finish a block at different times, as pipeline stages do.
        time.sleep(0.002 * rank)
        store.put(f"{run}/block{block}/rank{rank}", slice_of(block, rank),
                  group=mt.Group(f"{run}/block{block}", RANKS, rank))


def reader(store: mt.Store, run: str, blocks: int, timeout: float,
           report: dict) -> None:
    partial_seen = 0
    for block in range(blocks):
        probe = f"{run}/block{block}/rank0"
        deadline = time.monotonic() + timeout
        while True:
            info = store.exists(probe)
            if info.exists and info.state == "complete":
                break
            if info.exists:
                partial_seen += 1  # filling: present < expected
                # An early read is refused as a whole, never half served.
                try:
                    store.get(probe)
                except mt.GroupIncompleteError:
                    pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"block {block} never completed: {info}")
            time.sleep(0.001)
        # Complete: fetch all slices at once into preallocated arrays.
        out = [np.empty_like(slice_of(0, 0)) for _ in range(RANKS)]
        keys = [f"{run}/block{block}/rank{r}" for r in range(RANKS)]
        for r, n in enumerate(store.get_into_batch(keys, out)):
            if isinstance(n, mt.StoreError):
                raise n
            np.testing.assert_array_equal(out[r], slice_of(block, r))
        kv = np.concatenate(out)  # all layers of the block, in rank order
        assert kv.shape[0] == RANKS * LAYERS_PER_RANK
    report["partial_probes"] = partial_seen


def run(master: str, blocks: int) -> None:
    run_id = f"pp-example-{uuid.uuid4().hex[:8]}"
    with mt.Store(master) as store:
        start = threading.Barrier(RANKS)
        workers = [threading.Thread(target=rank_worker,
                                    args=(store, run_id, r, blocks, start))
                   for r in range(RANKS)]
        report: dict = {}
        errors: list[BaseException] = []

        def read() -> None:
            try:
                reader(store, run_id, blocks, 30.0, report)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        reading = threading.Thread(target=read)
        t0 = time.monotonic()
        reading.start()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        reading.join()
        if errors:
            raise errors[0]
        elapsed = time.monotonic() - t0

        g = store.group(f"{run_id}/block0")
        print(f"{blocks} blocks x {RANKS} ranks put and read back complete in "
              f"{elapsed:.2f} s; reader saw {report['partial_probes']} "
              f"probes of filling groups; block0: {g}")
        # The reads above hold leases (10 s by default); force the cleanup.
        for block in range(blocks):
            store.remove_group(f"{run_id}/block{block}", force=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--master", default="127.0.0.1:50051",
                       help="master address (default %(default)s)")
    where.add_argument("--spawn", action="store_true",
                       help="start a standalone mooncake-tierd for the run")
    parser.add_argument("--blocks", type=int, default=16)
    args = parser.parse_args()
    if args.spawn:
        from mooncake_tier.standalone import StandaloneDaemon
        with StandaloneDaemon() as daemon:
            run(daemon.master_address, args.blocks)
    else:
        run(args.master, args.blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
