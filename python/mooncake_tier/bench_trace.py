"""The trace replay (``mooncake-tier-bench trace``) through each engine
backend of ``mooncake_tier.integrations``, driven the way its engine does.

    python3 -m mooncake_tier.bench --trace FILE --json  # sglang, vllm, lmcache
    python3 -m mooncake_tier.bench --trace FILE --backend vllm --requests 1500
    python3 -m mooncake_tier.bench --trace FILE --master HOST:PORT

A trace block (one hash id, 512 tokens) is one engine page of 64 KiB, the
C++ replay's default block (4 members x 16 KiB), shaped as each engine has
it in host memory:

- sglang (``MooncakeTierHiCacheStorage``): an MHA host pool, page_first,
  ``kv_buffer`` (2, tokens, 2 layers, 2 heads, 8 dims) float16; a page is a
  K and a V object of 32 KiB, ``{tag}_trace_{id}_0_k`` / ``_v``;
- vllm (``MooncakeTierStoreWorker``): two FlashAttention layer caches
  (2, blocks, 512, 2 heads, 8 dims) float16; a block is ONE object of four
  16 KiB parts (layer 0 K, V, layer 1 K, V), ``{tag}@trace@...@{id:x}``;
- lmcache (``MooncakeTierL2Adapter``): an L1 region of 64 KiB memory
  objects, one chunk object per block, ``trace-{tag}@00000000@0@{id:x}``.

A block's bytes are a function of (hash id, position): a fixed random
pattern XORed with a 64-bit mix of the id. Per request, in trace order, on
one thread, as fast as possible, the C++ replay's steps:

1. lookup, as the engine does (sglang ``batch_exists``; vllm ``lookup`` of
   ``blocks * 512 + 1`` tokens, so that its rule of recomputing the last
   token drops no block: the C++ replay counts every id as a full block;
   lmcache lookup-and-lock task, unlocked after the load) -> the prefix;
2. load the prefix into cleared host pages (sglang ``batch_get_v1``; vllm
   ``load`` + ``get_finished``; lmcache load task), every byte checked
   (``wrong_bytes``); a block that fails to load ends the prefix there;
3. store each block from the first miss on (sglang ``batch_set_v1``; vllm
   ``save`` + ``get_finished``; lmcache store task); ``put_failed`` counts
   blocks (lmcache's task result is all or nothing: there, the blocks of a
   failed task that are not readable afterwards).

The host pool holds the longest request, is registered once and reused.
Each backend replays on its own fresh ``StandaloneDaemon`` (``--dram`` and
``--ssd-capacity``, default 64 MiB and 512 MiB as the C++ replay, and the
daemon's default promotion policy "threshold": compare with that C++ row),
or on ``--master``, under keys unique to the run, removed afterwards.

Before the replays, offline caches are simulated once over the replayed
requests, under the trace's prefix rule as the C++ replay has it
(bench/trace_sim.h): a request's hits are the leading run of its blocks
found cached, and every one of its blocks is then referenced in order,
cached or not, evicting as needed; capacities in blocks of 64 KiB. LRU,
S3-FIFO and CLOCK with the SSD's bytes (an inclusive hierarchy: DRAM holds
a subset of SSD) and with DRAM plus SSD (``*_exclusive``), Belady's MIN
with DRAM plus SSD, LRU with the DRAM's bytes alone, and a cache that never
evicts. They say how far the store's hit ratio is from what its room
allows, and how much of that gap a policy could close.

One line per backend (``--json``), else a table of some of the fields:
    {"scenario":"trace","trace":NAME,"backend":B,"requests":N,"blocks":N,
     "hits":N,"misses":N,"put_failed":N,"stranded_blocks":N,"hit_ratio":X,
     "dram_lru_hit_ratio":X,"lru_hit_ratio":X,"lru_hit_ratio_exclusive":X,
     "s3fifo_hit_ratio":X,"s3fifo_hit_ratio_exclusive":X,
     "clock_hit_ratio":X,"clock_hit_ratio_exclusive":X,
     "opt_hit_ratio_exclusive":X,"infinite_hit_ratio":X,"wrong_bytes":N,
     "blocks_per_s":X,"seconds":X,"dram_bytes":N,"ssd_bytes":N,
     "block_bytes":N,"load_avg":X,"ssd_live_fraction":X,
     "dram_live_fraction":X,"ssd_write_amplification":X}
(dram_lru_hit_ratio to infinite_hit_ratio: the simulations above; the
last three: read from the spawned daemon's admin API after the replay, the
object bytes its tiers hold over their configured bytes and the bytes its
SSD stores wrote (records, removals, compaction's copies) per byte the
replay stored; null, and '-' in the table, with --master or when the admin
API cannot be read, which stderr says once). The simulations' figures and
time go to stderr once, progress every 5 s.
"""

from __future__ import annotations

import abc
import argparse
import heapq
import http.client
import json
import os
import re
import select
import sys
import time
import urllib.request
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

import mooncake_tier as mt

BACKENDS = ("sglang", "vllm", "lmcache")
BLOCK_TOKENS = 512
BLOCK_BYTES = 64 << 10
WORDS = BLOCK_BYTES // 8          # a block as uint64 words
PROGRESS_SECONDS = 5.0
WAIT_SECONDS = 60.0               # longest wait for one async transfer
ADMIN_TIMEOUT = 10.0              # seconds, GET /api/v1/nodes
# The simulated fields: name -> (policy, capacity: "ssd", "all" or "dram").
SIMULATED = {
    "dram_lru_hit_ratio": ("lru", "dram"),
    "lru_hit_ratio": ("lru", "ssd"),
    "lru_hit_ratio_exclusive": ("lru", "all"),
    "s3fifo_hit_ratio": ("s3fifo", "ssd"),
    "s3fifo_hit_ratio_exclusive": ("s3fifo", "all"),
    "clock_hit_ratio": ("clock", "ssd"),
    "clock_hit_ratio_exclusive": ("clock", "all"),
    "opt_hit_ratio_exclusive": ("opt", "all"),
}
FILL_FIELDS = ("ssd_live_fraction", "dram_live_fraction",
               "ssd_write_amplification")
FIELDS = ("scenario", "trace", "backend", "requests", "blocks", "hits",
          "misses", "put_failed", "stranded_blocks", "hit_ratio", *SIMULATED,
          "infinite_hit_ratio", "wrong_bytes", "blocks_per_s", "seconds",
          "dram_bytes", "ssd_bytes", "block_bytes", "load_avg", *FILL_FIELDS)
# The table: what differs between backends, and LRU and the never-evicting
# cache to set hit_ratio against (every simulated figure is on stderr).
TABLE = (("backend", "s"), ("requests", "d"), ("blocks", "d"),
         ("hit_ratio", ".4f"), ("lru_hit_ratio", ".4f"),
         ("infinite_hit_ratio", ".4f"), ("put_failed", "d"),
         ("wrong_bytes", "d"), ("ssd_live_fraction", ".3f"),
         ("ssd_write_amplification", ".2f"), ("blocks_per_s", ".0f"),
         ("seconds", ".1f"), ("load_avg", ".2f"))


class TraceError(ValueError):
    """A trace file that cannot be read or parsed."""


@dataclass(frozen=True)
class Request:
    timestamp_ms: int
    blocks: tuple[int, ...]  # hash ids of the prompt's 512-token blocks


def read_trace(path: str, limit: int = 0) -> list[Request]:
    """The first ``limit`` requests (0: all) of a JSON Lines trace; blank
    lines are skipped. TraceError names the line and what is wrong."""
    requests: list[Request] = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if limit and len(requests) >= limit:
                    break
                if line.strip():
                    requests.append(_request(line, f"{path}:{number}"))
    except OSError as e:
        raise TraceError(f"cannot read trace {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not a text file") from None
    if not requests:
        raise TraceError(f"{path}: no requests")
    return requests


def _request(line: str, where: str) -> Request:
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise TraceError(f"{where}: not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: not a JSON object")
    stamp, ids = obj.get("timestamp"), obj.get("hash_ids")
    if not isinstance(stamp, int) or isinstance(stamp, bool) or stamp < 0:
        raise TraceError(f"{where}: timestamp must be an integer >= 0")
    if not isinstance(ids, list) or not all(
            isinstance(h, int) and not isinstance(h, bool) and 0 <= h < 2**64
            for h in ids):
        raise TraceError(f"{where}: hash_ids must be a list of integers >= 0")
    return Request(stamp, tuple(ids))


def parse_size(text: str) -> int:
    """Bytes of "64MiB", "512MB", "16k" or "1048576" (units of 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:([kmgt])(?:i?b)?|b)?\s*", text.lower())
    if m is None:
        raise ValueError(f"not a size: {text!r} (e.g. 64MiB or 67108864)")
    return int(m.group(1)) << 10 * " kmgt".index(m.group(2) or " ")


def infinite_hit_ratio(requests: Sequence[Request]) -> float:
    """Hit ratio of a cache that never evicts, under the prefix rule: a
    block hits when it and every block before it were stored earlier."""
    stored: set[int] = set()
    hits = total = 0
    for r in requests:
        for h in r.blocks:
            if h not in stored:
                break
            hits += 1
        total += len(r.blocks)
        stored.update(r.blocks)
    return hits / total if total else 0.0


# --- Offline cache simulations, as bench/trace_sim.cc has them. Under the
# prefix rule every reference leaves its block cached, so a cache's
# contents evolve as plain demand paging over the flattened references;
# each policy below says, per reference, whether it found its block cached,
# and simulate() takes each request's leading run of those as its hits.

def _lru(refs: Sequence[int], capacity: int) -> list[bool]:
    """Least recently used: a reference makes its block the most recent;
    a full cache evicts the least recent."""
    cache: OrderedDict[int, None] = OrderedDict()  # least recent first
    found: list[bool] = []
    for h in refs:
        if h in cache:
            cache.move_to_end(h)
            found.append(True)
            continue
        if len(cache) == capacity:
            cache.popitem(last=False)
        cache[h] = None
        found.append(False)
    return found


def _clock(refs: Sequence[int], capacity: int) -> list[bool]:
    """CLOCK as a FIFO with reinsertion: a block enters at the tail with
    its bit clear, a hit sets the bit and moves nothing; a full cache looks
    at the head, sending a block with its bit set back to the tail with the
    bit cleared, and evicting the first one whose bit is clear."""
    fifo: deque[int] = deque()     # cached blocks, the hand first
    bit: dict[int, bool] = {}      # cached block -> referenced
    found: list[bool] = []
    for h in refs:
        if h in bit:
            bit[h] = True
            found.append(True)
            continue
        if len(bit) == capacity:
            while True:  # within one round: each pass clears a bit
                head = fifo.popleft()
                if not bit[head]:
                    del bit[head]
                    break
                bit[head] = False
                fifo.append(head)
        fifo.append(h)
        bit[h] = False
        found.append(False)
    return found


def _s3fifo(refs: Sequence[int], capacity: int) -> list[bool]:
    """S3-FIFO (Yang et al., SOSP'23) as trace_sim.h defines it: a small
    probation FIFO of 10% of the capacity (at least one block), a main FIFO
    of the rest, a ghost of the keys last evicted from the small one (as
    many as main's capacity, keys only) and a counter per cached block,
    bumped by each hit up to 3. A miss in the ghost enters main, any other
    the small FIFO; the ghost is asked before the miss's eviction, which
    could otherwise push the key out of it."""
    small_share = max(1, capacity // 10)
    ghost_size = capacity - small_share
    small: deque[int] = deque()    # oldest first
    main: deque[int] = deque()     # oldest first
    count: dict[int, int] = {}     # every cached block -> its counter
    ghost: OrderedDict[int, None] = OrderedDict()  # oldest first
    found: list[bool] = []
    for h in refs:
        c = count.get(h)
        if c is not None:
            if c < 3:
                count[h] = c + 1
            found.append(True)
            continue
        was_ghost = h in ghost
        if was_ghost:
            del ghost[h]
        while len(count) == capacity:  # steps until one block has left
            if len(small) >= small_share or not main:
                head = small.popleft()
                if count[head]:  # seen again on probation: to main
                    count[head] = 0
                    main.append(head)
                    continue
                del count[head]
                if ghost_size:
                    if len(ghost) == ghost_size:
                        ghost.popitem(last=False)
                    ghost[head] = None
            else:
                head = main.popleft()
                if count[head]:  # a hit paid for another round
                    count[head] -= 1
                    main.append(head)
                    continue
                del count[head]
        (main if was_ghost else small).append(h)
        count[h] = 0
        found.append(False)
    return found


def _opt(refs: Sequence[int], capacity: int) -> list[bool]:
    """Belady's MIN: a full cache evicts the cached block whose next
    reference is farthest (never again: farther than any, ties to the
    larger id); the referenced block is always cached. A max-heap of
    (next reference, block) with lazy deletion: an entry is live while its
    block is cached with that next reference (a block evicted for good
    never comes back, and one referenced again gets a new, larger one)."""
    never = len(refs)  # past every position
    next_use = [never] * len(refs)
    later: dict[int, int] = {}  # block -> its next position seen
    for i in range(len(refs) - 1, -1, -1):
        h = refs[i]
        next_use[i] = later.get(h, never)
        later[h] = i
    cached: dict[int, int] = {}   # cached block -> its next reference
    heap: list[tuple[int, int]] = []  # (-next reference, -block)
    found: list[bool] = []
    for h, nxt in zip(refs, next_use):
        hit = h in cached
        if not hit and len(cached) == capacity:
            while True:
                far, block = heapq.heappop(heap)
                if cached.get(-block) == -far:
                    del cached[-block]
                    break
        cached[h] = nxt
        heapq.heappush(heap, (-nxt, -h))
        found.append(hit)
    return found


POLICIES: dict[str, Callable[[Sequence[int], int], list[bool]]] = {
    "lru": _lru, "s3fifo": _s3fifo, "clock": _clock, "opt": _opt}


class CacheSim(NamedTuple):
    """What one simulated cache saw (trace_sim.h's CacheSimResult)."""

    references: int   # block references: every block of every request
    prefix_hits: int  # those that hit under the prefix rule
    resident: int     # those that found their block cached, rule or not

    @property
    def hit_ratio(self) -> float:
        return self.prefix_hits / self.references if self.references else 0.0


def simulate(requests: Sequence[Request], policy: str,
             capacity_blocks: int) -> CacheSim:
    """A cache of ``capacity_blocks`` blocks (0: caches nothing) run by
    ``policy`` (a key of POLICIES; "opt" is Belady's MIN) over
    ``requests`` in order, from empty, under the prefix rule: a block hits
    when it and every block before it in its request are found cached, and
    every block of the request is then referenced in order, evicting as
    needed."""
    refs = [h for r in requests for h in r.blocks]
    found = POLICIES[policy](refs, capacity_blocks) if capacity_blocks > 0 \
        else [False] * len(refs)
    hits = at = 0
    for r in requests:
        end = at + len(r.blocks)
        while at < end and found[at]:
            at += 1
            hits += 1
        at = end
    return CacheSim(len(refs), hits, sum(found))


def simulated_ratios(requests: Sequence[Request], dram_bytes: int,
                     ssd_bytes: int) -> dict[str, float]:
    """The SIMULATED fields over ``requests``, in blocks of BLOCK_BYTES:
    the SSD's capacity, DRAM plus SSD ("all") or the DRAM's alone."""
    blocks = {"ssd": ssd_bytes // BLOCK_BYTES,
              "all": (dram_bytes + ssd_bytes) // BLOCK_BYTES,
              "dram": dram_bytes // BLOCK_BYTES}
    return {field: simulate(requests, policy, blocks[room]).hit_ratio
            for field, (policy, room) in SIMULATED.items()}


def _mix(ids: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over uint64 ids."""
    z = ids + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class BlockPattern:
    """The expected words of blocks: base pattern XOR mix(hash id)."""

    def __init__(self, seed: int = 0x7261CE) -> None:
        rng = np.random.default_rng(seed)
        self._base = np.frombuffer(rng.bytes(BLOCK_BYTES), np.uint64)

    def words(self, ids: np.ndarray) -> np.ndarray:
        return self._base[None, :] ^ _mix(ids)[:, None]

    def wrong_bytes(self, got: np.ndarray, ids: np.ndarray) -> int:
        want = self.words(ids)
        if np.array_equal(got, want):
            return 0
        return int(np.count_nonzero(got.view(np.uint8) != want.view(np.uint8)))


class Replayer(abc.ABC):
    """One backend and a host pool of ``slots`` block slots, registered
    once. ``_view(lo, hi)``: a writable view of slots lo..hi whose rows,
    flattened in C order, are the blocks' bytes in key and part order.
    Not thread-safe."""

    @abc.abstractmethod
    def _view(self, lo: int, hi: int) -> np.ndarray: ...

    def read(self, lo: int, hi: int) -> np.ndarray:
        return self._view(lo, hi).reshape(hi - lo, WORDS)

    def write(self, lo: int, hi: int, words: np.ndarray | int) -> None:
        view = self._view(lo, hi)
        view[...] = words if isinstance(words, int) else \
            words.reshape(view.shape)

    @abc.abstractmethod
    def lookup(self, blocks: Sequence[int]) -> int:
        """The stored prefix, in blocks."""

    @abc.abstractmethod
    def load(self, blocks: Sequence[int]) -> list[bool]:
        """Loads blocks[i] into slot i; per block, whether it loaded."""

    @abc.abstractmethod
    def store(self, blocks: Sequence[int], slots: Sequence[int]) -> int:
        """Stores blocks[s] from slot s for each s; returns blocks failed."""

    @staticmethod
    @abc.abstractmethod
    def object_keys(tag: str, block: int) -> list[str]:
        """The store keys of ``block`` in a run tagged ``tag``."""

    @abc.abstractmethod
    def close(self) -> None: ...


class _SGLangPool:
    """Like SGLang's MHATokenToKVPoolHost, page_first layout."""

    layout = "page_first"
    token_bytes = 2 * 2 * 8 * 2  # layers x heads x dims x float16, K or V

    def __init__(self, pages: int) -> None:
        self.page_size = BLOCK_TOKENS
        self.size = pages * BLOCK_TOKENS
        self.kv_buffer = np.zeros((2, self.size, 2, 2, 8), np.float16)

    def get_page_buffer_meta(self, indices: Any
                             ) -> tuple[list[int], list[int]]:
        first = np.asarray(indices, np.int64)[::self.page_size]
        k = self.kv_buffer.ctypes.data + first * self.token_bytes
        ptrs = np.empty(2 * len(first), np.int64)
        ptrs[0::2], ptrs[1::2] = k, k + self.size * self.token_bytes
        return ptrs.tolist(), [self.page_size * self.token_bytes] * len(ptrs)


class SGLangReplayer(Replayer):
    def __init__(self, master: str, tag: str, slots: int) -> None:
        from .integrations.sglang import MooncakeTierHiCacheStorage
        config = SimpleNamespace(
            tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, is_mla_model=False,
            enable_storage_metrics=False, model_name="trace",
            should_split_heads=False, tp_lcm_size=None,
            extra_config={"interface_v1": 1, "extra_backend_tag": tag,
                          "master_server_address": master})
        self.backend = MooncakeTierHiCacheStorage(config, {})
        self.pool = _SGLangPool(slots)
        self.backend.register_mem_pool_host(self.pool)
        self._words = self.pool.kv_buffer.view(np.uint64).reshape(
            2, slots, WORDS // 2)

    def _view(self, lo: int, hi: int) -> np.ndarray:
        return self._words[:, lo:hi].transpose(1, 0, 2)

    @staticmethod
    def _indices(slots: Sequence[int]) -> np.ndarray:
        first = np.asarray(slots, np.int64)[:, None] * BLOCK_TOKENS
        return (first + np.arange(BLOCK_TOKENS)).ravel()

    def lookup(self, blocks: Sequence[int]) -> int:
        return self.backend.batch_exists([str(h) for h in blocks])

    def load(self, blocks: Sequence[int]) -> list[bool]:
        return self.backend.batch_get_v1(
            [str(h) for h in blocks], self._indices(range(len(blocks))))

    def store(self, blocks: Sequence[int], slots: Sequence[int]) -> int:
        done = self.backend.batch_set_v1([str(blocks[s]) for s in slots],
                                         self._indices(slots))
        return done.count(False)

    @staticmethod
    def object_keys(tag: str, block: int) -> list[str]:
        return [f"{tag}_trace_{block}_0_{kv}" for kv in "kv"]

    def close(self) -> None:
        self.backend.close()


class VLLMReplayer(Replayer):
    def __init__(self, master: str, tag: str, slots: int) -> None:
        from .integrations.vllm import MooncakeTierStoreWorker
        self.worker = MooncakeTierStoreWorker(
            master, block_size=BLOCK_TOKENS, num_blocks=slots,
            model_name="trace", cache_prefix=tag)
        # Two layers' (2, blocks, 512, 2, 8) caches, carved from one array.
        self._words = np.zeros((2, 2, slots, WORDS // 4), np.uint64)
        self.worker.register_kv_caches({
            f"model.layers.{i}.attn": self._words[i].view(np.float16).reshape(
                2, slots, BLOCK_TOKENS, 2, 8) for i in range(2)})
        self._requests = 0

    def _view(self, lo: int, hi: int) -> np.ndarray:
        return self._words[:, :, lo:hi].transpose(2, 0, 1, 3)

    def _wait(self, req: str, sending: bool) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:  # vLLM asks once per step
            done = self.worker.get_finished({req} if sending else set())
            if req in done[0 if sending else 1]:
                return
            time.sleep(0.0002)
        raise TimeoutError(f"vllm: {req} not finished in {WAIT_SECONDS} s")

    def lookup(self, blocks: Sequence[int]) -> int:
        tokens = len(blocks) * BLOCK_TOKENS + 1
        return self.worker.lookup(tokens, blocks) // BLOCK_TOKENS

    def load(self, blocks: Sequence[int]) -> list[bool]:
        self._requests += 1
        req = f"load-{self._requests}"
        self.worker.load(req, blocks, list(range(len(blocks))))
        self._wait(req, sending=False)
        failed = self.worker.get_block_ids_with_load_errors()
        return [i not in failed for i in range(len(blocks))]

    def store(self, blocks: Sequence[int], slots: Sequence[int]) -> int:
        self._requests += 1
        req = f"save-{self._requests}"
        before = self.worker.stats["failed_blocks"]
        self.worker.save(req, [blocks[s] for s in slots], list(slots))
        self._wait(req, sending=True)
        return self.worker.stats["failed_blocks"] - before

    @staticmethod
    def object_keys(tag: str, block: int) -> list[str]:
        return [f"{tag}@trace@tp_rank:0@pcp0@dcp0@pp_rank:0@group:0@"
                f"{block:x}"]

    def close(self) -> None:
        self.worker.close()


@dataclass(frozen=True)
class _ChunkKey:
    """The fields of LMCache's ObjectKey the adapter reads."""

    chunk_hash: int
    model_name: str
    kv_rank: int = 0


def _drive(fd: int, take: Callable[[int], Any], task: int) -> Any:
    """LMCache's controller loop for one task: poll the kind's event fd,
    read it, ask for the result; until it answers."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        result = take(task)
        if result is not None:
            return result
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            raise TimeoutError(f"lmcache: task {task} not done in "
                               f"{WAIT_SECONDS} s")
        try:
            os.eventfd_read(fd)
        except BlockingIOError:
            pass


class LMCacheReplayer(Replayer):
    def __init__(self, master: str, tag: str, slots: int) -> None:
        from .integrations.lmcache import MooncakeTierL2Adapter
        self.model = f"trace-{tag}"
        self.l1 = np.zeros((slots, WORDS), np.uint64)  # the L1 region
        self.adapter = MooncakeTierL2Adapter(
            {"master_server_address": master},
            l1_memory_desc=SimpleNamespace(ptr=self.l1.ctypes.data,
                                           size=self.l1.nbytes))
        self._locked: list[_ChunkKey] = []

    def _view(self, lo: int, hi: int) -> np.ndarray:
        return self.l1[lo:hi]

    def _keys(self, blocks: Sequence[int]) -> list[_ChunkKey]:
        return [_ChunkKey(h, self.model) for h in blocks]

    def _lock(self, keys: list[_ChunkKey]) -> Any:
        """Looks ``keys`` up and locks the found ones; returns the bitmap."""
        a = self.adapter
        task = a.submit_lookup_and_lock_task(keys)
        bitmap = _drive(a.get_lookup_and_lock_event_fd(),
                        a.query_lookup_and_lock_result, task)
        self._locked += [keys[i] for i in bitmap.get_indices_list()]
        return bitmap

    def _unlock(self) -> None:
        self.adapter.submit_unlock(self._locked)
        self._locked = []

    def lookup(self, blocks: Sequence[int]) -> int:
        return int(self._lock(self._keys(blocks)).count_leading_ones())

    def load(self, blocks: Sequence[int]) -> list[bool]:
        a = self.adapter
        task = a.submit_load_task(self._keys(blocks),
                                  list(self.l1[:len(blocks)]))
        bitmap = _drive(a.get_load_event_fd(), a.query_load_result, task)
        self._unlock()
        return [bool(bitmap.test(i)) for i in range(len(blocks))]

    def store(self, blocks: Sequence[int], slots: Sequence[int]) -> int:
        a = self.adapter
        self._unlock()  # a lookup without a load
        ids = [blocks[s] for s in slots]
        task = a.submit_store_task(self._keys(ids),
                                   [self.l1[s] for s in slots])
        result = _drive(a.get_store_event_fd(),
                        lambda t: a.pop_completed_store_tasks().get(t), task)
        if result.is_successful():
            return 0
        stored = int(self._lock(self._keys(ids)).popcount())  # which made it
        self._unlock()
        return len(ids) - stored

    @staticmethod
    def object_keys(tag: str, block: int) -> list[str]:
        from .integrations.lmcache import key_string
        return [str(key_string(_ChunkKey(block, f"trace-{tag}")))]

    def close(self) -> None:
        self.adapter.close()


REPLAYERS: dict[str, type[Replayer]] = {
    "sglang": SGLangReplayer, "vllm": VLLMReplayer, "lmcache": LMCacheReplayer}


def replay(backend: str, master: str, requests: Sequence[Request],
           tag: str, progress: bool = False) -> dict[str, Any]:
    """Replays ``requests`` through ``backend`` against ``master`` under
    keys tagged ``tag``; returns the row's counts and timings, and
    ``stored``: the blocks the replay had stored (those it passed to the
    store, once per request, less the failed ones), the bytes over which
    ssd_write_amplification is taken."""
    slots = max(len(r.blocks) for r in requests)
    pattern = BlockPattern()
    b = REPLAYERS[backend](master, tag, slots)
    # The backends report failures per block, as engines expect; a request
    # with failures asks the store whether it still answers, so that a
    # store that went away ends the replay instead of failing every call.
    health = mt.Store(master, probe_master=False)
    keys = REPLAYERS[backend].object_keys
    blocks = hits = put_failed = stored = stranded = wrong = done = 0
    start = last = time.perf_counter()
    try:
        for r in requests:
            ids = np.asarray(r.blocks, np.uint64)
            n = len(ids)
            prefix = b.lookup(r.blocks) if n else 0
            if prefix:
                b.write(0, prefix, 0)  # no stale bytes pass the check
                ok = np.asarray(b.load(r.blocks[:prefix]), bool)
                wrong += pattern.wrong_bytes(b.read(0, prefix)[ok],
                                             ids[:prefix][ok])
                if not ok.all():
                    prefix = int(np.argmin(ok))
            failed = 0
            if prefix < n:
                b.write(prefix, n, pattern.words(ids[prefix:]))
                first = {r.blocks[s]: s for s in range(n - 1, prefix - 1, -1)}
                # Stranded: blocks past the first miss the store still
                # holds (a probe, which moves no block in any order).
                found = health.exists_batch(
                    [keys(tag, h)[0] for h in first])
                stranded += sum(1 for e in found
                                if isinstance(e, mt.ExistsInfo) and e.exists)
                failed = b.store(r.blocks, sorted(first.values()))  # once
                put_failed += failed
                stored += len(first) - failed
            if failed:
                try:
                    health.health_check()
                except mt.StoreError as e:
                    raise RuntimeError(
                        f"the store stopped answering after {done} "
                        f"requests: {e}") from e
            blocks += n
            hits += prefix
            done += 1
            now = time.perf_counter()
            if progress and now - last >= PROGRESS_SECONDS:
                last = now
                print(f"trace {backend}: {done}/{len(requests)} requests, "
                      f"{blocks / (now - start):.0f} blocks/s, hit ratio "
                      f"{hits / max(blocks, 1):.3f}, put failed {put_failed}",
                      file=sys.stderr, flush=True)
        seconds = time.perf_counter() - start
    finally:
        b.close()
        health.close()
    return {"requests": done, "blocks": blocks, "hits": hits,
            "misses": blocks - hits, "put_failed": put_failed,
            "stranded_blocks": stranded,
            "stored": stored,
            "hit_ratio": hits / blocks if blocks else 0.0,
            "wrong_bytes": wrong,
            "blocks_per_s": blocks / seconds if seconds > 0 else 0.0,
            "seconds": seconds}


def read_nodes(admin_address: str) -> list[dict[str, Any]]:
    """``nodes`` of the admin API's ``GET /api/v1/nodes`` (one page: a
    standalone daemon has one node). OSError (or http.client's
    HTTPException) when it cannot be reached or answers other than 200,
    ValueError when the answer is not that JSON."""
    url = f"http://{admin_address}/api/v1/nodes"
    with urllib.request.urlopen(url, timeout=ADMIN_TIMEOUT) as reply:
        body = json.load(reply)
    nodes = body.get("nodes") if isinstance(body, dict) else None
    if not isinstance(nodes, list) or not all(
            isinstance(n, dict) for n in nodes):
        raise ValueError(f"{url}: no list of nodes in the answer")
    return nodes


def fill_fields(nodes: Sequence[dict[str, Any]], dram_bytes: int,
                ssd_bytes: int, stored_blocks: int) -> dict[str, float]:
    """The FILL_FIELDS of a store whose admin API lists ``nodes``, after a
    replay that stored ``stored_blocks``: the object bytes its tiers hold
    over their configured bytes, and the bytes its SSD stores wrote per
    byte stored (0 when nothing was; a node without an SSD store report
    counts 0 bytes written). Absent counts are 0, as in the C++ replay."""
    def count(node: Any, *path: str) -> int:
        for name in path:
            node = node.get(name) if isinstance(node, dict) else None
        return node if isinstance(node, int) else 0

    ssd_used = sum(count(n, "ssd", "used_bytes") for n in nodes)
    dram_used = sum(count(n, "dram", "used_bytes") for n in nodes)
    written = sum(count(n, "ssd", "store", "device_bytes_written")
                  for n in nodes)
    put = stored_blocks * BLOCK_BYTES
    return {"ssd_live_fraction": ssd_used / ssd_bytes if ssd_bytes else 0.0,
            "dram_live_fraction": dram_used / dram_bytes,
            "ssd_write_amplification": written / put if put else 0.0}


def remove_run(backend: str, master: str, requests: Sequence[Request],
               tag: str) -> None:
    """Removes the objects a run tagged ``tag`` may have put (best effort,
    as after a --master run)."""
    keys = REPLAYERS[backend].object_keys
    unique = dict.fromkeys(h for r in requests for h in r.blocks)
    names = [k for h in unique for k in keys(tag, h)]
    with mt.Store(master) as store:
        for at in range(0, len(names), 1024):
            store.remove_batch(names[at:at + 1024], force=True)


def run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``bench --trace``: checks the options (parser.error, exit 2), then
    replays the trace through each backend and prints a row for each."""
    backends = list(dict.fromkeys(
        b.strip() for b in args.backend.split(",") if b.strip()))
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown or not backends:
        parser.error(f"--backend: unknown {', '.join(unknown) or '(none)'}; "
                     f"choose from {','.join(BACKENDS)}")
    if args.requests < 0:
        parser.error("--requests must be >= 0")

    def size(flag: str, text: str) -> int:
        try:
            return parse_size(text)
        except ValueError as e:
            parser.error(f"{flag}: {e}")

    dram, ssd = size("--dram", args.dram), size("--ssd-capacity",
                                                 args.ssd_capacity)
    if dram <= 0:
        parser.error("--dram must be positive")
    try:
        requests = read_trace(args.trace, args.requests)
    except TraceError as e:
        parser.error(f"--trace: {e}")
    name = os.path.basename(args.trace)
    start = time.perf_counter()
    sim = simulated_ratios(requests, dram, ssd)
    sim["infinite_hit_ratio"] = infinite_hit_ratio(requests)
    print(f"trace: simulated {ssd // BLOCK_BYTES} (SSD), "
          f"{(dram + ssd) // BLOCK_BYTES} (exclusive) and "
          f"{dram // BLOCK_BYTES} (DRAM) blocks in "
          f"{time.perf_counter() - start:.1f} s: " + ", ".join(
              f"{k.replace('_hit_ratio', '')} {v:.3f}"
              for k, v in sim.items()), file=sys.stderr, flush=True)
    said: set[str] = set()  # why the fill fields are null, once each

    def no_fill(why: str) -> Mapping[str, float | None]:
        if why not in said:
            said.add(why)
            print(f"trace: {', '.join(FILL_FIELDS)} are null: {why}",
                  file=sys.stderr, flush=True)
        return dict.fromkeys(FILL_FIELDS)

    def daemon_fill(admin: str | None, stored: int
                    ) -> Mapping[str, float | None]:
        if admin is None:
            return no_fill("the daemon has no admin server")
        try:
            return fill_fields(read_nodes(admin), dram, ssd, stored)
        except (OSError, ValueError, http.client.HTTPException) as e:
            return no_fill(f"its admin API did not answer "
                           f"({type(e).__name__}: {e})")

    for i, backend in enumerate(backends):
        try:
            tag = uuid.uuid4().hex[:8]
            if args.master:
                got = replay(backend, args.master, requests, tag, True)
                remove_run(backend, args.master, requests, tag)
                fill = no_fill("--master: no daemon of ours to ask")
            else:
                from .standalone import StandaloneDaemon
                with StandaloneDaemon(binary=args.daemon, dram=str(dram),
                                      ssd_capacity=str(ssd)) as daemon:
                    got = replay(backend, daemon.master_address, requests,
                                 tag, True)
                    fill = daemon_fill(daemon.admin_address, got["stored"])
        except (mt.StoreError, OSError, RuntimeError, TimeoutError) as e:
            print(f"trace {backend}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return 1
        got.update(sim, **fill, scenario="trace", trace=name,
                   backend=backend, dram_bytes=dram, ssd_bytes=ssd,
                   block_bytes=BLOCK_BYTES,
                   load_avg=round(os.getloadavg()[0], 2))
        row = {k: got[k] for k in FIELDS}
        if not args.json and i == 0:
            print(" ".join(k for k, _ in TABLE))
        print(json.dumps(row) if args.json else " ".join(
            "-".rjust(len(k)) if row[k] is None else
            format(row[k], f">{len(k)}{f}") for k, f in TABLE), flush=True)
    return 0
