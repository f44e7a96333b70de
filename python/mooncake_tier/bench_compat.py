"""The compat class beside the native binding, in the same run.

    python3 -m mooncake_tier.bench --compat --json

Two figures, each paired call by call in alternating order so that both
paths see the same machine load:

- batch reads into registered memory: ``MooncakeDistributedStore.
  batch_get_into(keys, ptrs, sizes)`` (what SGLang and LMCache call) beside
  the native ``Store.get_into_batch(keys, buffers)``;
- an engine's prefix lookup: the compat way, ``batch_is_exist`` and the
  count of leading 1s (what engines do against the Mooncake Store API),
  beside the native ``Store.probe_prefix``, both over 64 keys in one call.

One JSON line: ``{"scenario":"compat", "compat_get_gbps":X,
"native_get_gbps":X, "compat_get_vs_native":X, "compat_probe_keys_per_s":X,
"native_probe_keys_per_s":X, "compat_probe_vs_native":X, ...}`` (target for
both ratios: >= 0.95).
"""

from __future__ import annotations

import os
import statistics
import time
import uuid

import numpy as np

import mooncake_tier as mt
from .compat import MooncakeDistributedStore

GB = 1e9
PROBE_KEYS = 64


def _leading_ones(codes: list[int]) -> int:
    n = 0
    for c in codes:
        if c != 1:
            break
        n += 1
    return n


def measure_compat(master: str, object_bytes: int, objects: int, batch: int,
                   trials: int) -> dict:
    run = f"bench-compat-{uuid.uuid4().hex[:8]}"
    keys = [f"{run}/{i}" for i in range(objects)]
    src = np.random.default_rng(1).integers(0, 256, objects * object_bytes,
                                            dtype=np.uint8)
    dst = np.zeros_like(src)
    pages = [dst[i * object_bytes:(i + 1) * object_bytes]
             for i in range(objects)]
    base = dst.ctypes.data
    native = mt.Store(master)
    mc = MooncakeDistributedStore()
    if mc.setup("bench", "P2PHANDSHAKE", 0, 0, "tcp", "", master) != 0:
        raise RuntimeError(f"compat setup against {master} failed")
    try:
        native.register_buffer(src)
        native.register_buffer(dst)
        for code in (mc.register_buffer(src.ctypes.data, src.nbytes),
                     mc.register_buffer(base, dst.nbytes)):
            if code != 0:
                raise RuntimeError(f"compat register_buffer: {code}")
        done = native.put_from_addresses(
            keys, [src.ctypes.data + i * object_bytes for i in range(objects)],
            [object_bytes] * objects)
        if any(e is not None for e in done):
            raise RuntimeError(f"put failed: {done}")

        batches = [list(range(i, min(i + batch, objects)))
                   for i in range(0, objects, batch)]
        native_gbps, compat_gbps = [], []
        for trial in range(trials):
            n_s = c_s = 0.0
            nbytes = 0
            for b, idx in enumerate(batches):
                ks = [keys[i] for i in idx]
                ptrs = [base + i * object_bytes for i in idx]
                sizes = [object_bytes] * len(idx)
                bufs = [pages[i] for i in idx]
                compat_first = (b + trial) % 2 == 0
                for which in ((0, 1) if compat_first else (1, 0)):
                    t = time.perf_counter()
                    if which == 0:
                        got = mc.batch_get_into(ks, ptrs, sizes)
                        c_s += time.perf_counter() - t
                    else:
                        got = native.get_into_batch(ks, bufs)
                        n_s += time.perf_counter() - t
                    if got != sizes:
                        raise RuntimeError(f"a read failed: {got}")
                nbytes += object_bytes * len(idx)
            compat_gbps.append(nbytes / c_s / GB)
            native_gbps.append(nbytes / n_s / GB)
        if not np.array_equal(src, dst):
            raise RuntimeError("benchmark read back different bytes")

        probe_keys = (keys * (PROBE_KEYS // objects + 1))[:PROBE_KEYS]
        rounds = 200
        native_kps, compat_kps = [], []
        for trial in range(trials):
            n_s = c_s = 0.0
            for r in range(rounds):
                compat_first = (r + trial) % 2 == 0
                for which in ((0, 1) if compat_first else (1, 0)):
                    t = time.perf_counter()
                    if which == 0:
                        length = _leading_ones(mc.batch_is_exist(probe_keys))
                        c_s += time.perf_counter() - t
                    else:
                        length, _ = native.probe_prefix(probe_keys)
                        n_s += time.perf_counter() - t
                    if length != PROBE_KEYS:
                        raise RuntimeError(f"probe found {length} keys")
            compat_kps.append(rounds * PROBE_KEYS / c_s)
            native_kps.append(rounds * PROBE_KEYS / n_s)
    finally:
        native.remove_batch(keys, force=True)
        mc.close()
        native.close()

    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 3) if b else None

    cg, ng = statistics.median(compat_gbps), statistics.median(native_gbps)
    ck, nk = statistics.median(compat_kps), statistics.median(native_kps)
    return {
        "scenario": "compat",
        "object_bytes": object_bytes,
        "objects": objects,
        "batch": batch,
        "compat_get_gbps": round(cg, 4),
        "native_get_gbps": round(ng, 4),
        "compat_get_vs_native": ratio(cg, ng),
        "probe_keys": PROBE_KEYS,
        "compat_probe_keys_per_s": round(ck),
        "native_probe_keys_per_s": round(nk),
        "compat_probe_vs_native": ratio(ck, nk),
        "trials": trials,
        "load_avg": round(os.getloadavg()[0], 2),
    }
