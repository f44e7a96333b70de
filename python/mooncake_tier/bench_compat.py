"""The compat class beside the native binding, in the same run.

    python3 -m mooncake_tier.bench --compat --json

Each figure pairs two calls over the same keys, alternating which goes
first, so both see the same machine load; each is the median of the trials.

- ``get``: ``MooncakeDistributedStore.batch_get_into(keys, ptrs, sizes)``
  (what SGLang and LMCache call) beside the native
  ``Store.get_into_batch(keys, buffers)``, 16 objects of 64 KiB per call
  into registered memory; GB/s.
- ``probe``: the compat class's prefix probe (``probe_prefix``, this
  store's addition) beside the native ``Store.probe_prefix``, 64 keys;
  keys/s.
- ``exists``: ``batch_is_exist`` beside the native ``Store.readable_batch``
  it maps to, 64 keys; keys/s.

``*_vs_native`` is compat over native for each (target >= 0.95: the layer
costs under 5%). ``probe_vs_batch_is_exist`` says what an engine gains by
looking a prompt up with one prefix probe instead of ``batch_is_exist``
and counting the leading 1s, as engines do against the Mooncake API.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from typing import Callable

import numpy as np

import mooncake_tier as mt
from .compat import MooncakeDistributedStore

GB = 1e9
PROBE_KEYS = 64
PROBE_ROUNDS = 200


def _leading_ones(codes: list[int]) -> int:
    n = 0
    for c in codes:
        if c != 1:
            break
        n += 1
    return n


def _paired(a: Callable[[int], None], b: Callable[[int], None], calls: int,
            trials: int) -> tuple[list[float], list[float]]:
    """Seconds per trial of `calls` calls of a(i) and of b(i), the two
    interleaved call by call, the first alternating."""
    secs_a, secs_b = [], []
    for trial in range(trials):
        ta = tb = 0.0
        for i in range(calls):
            order = (a, b) if (i + trial) % 2 == 0 else (b, a)
            for f in order:
                t = time.perf_counter()
                f(i)
                dt = time.perf_counter() - t
                if f is a:
                    ta += dt
                else:
                    tb += dt
        secs_a.append(ta)
        secs_b.append(tb)
    return secs_a, secs_b


def _rate(amount: float, secs: list[float]) -> float:
    return statistics.median(amount / s for s in secs)


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise RuntimeError(f"benchmark check failed: {what}")


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
        _expect(mc.register_buffer(src.ctypes.data, src.nbytes) == 0 and
                mc.register_buffer(base, dst.nbytes) == 0, "register_buffer")
        done = native.put_from_addresses(
            keys, [src.ctypes.data + i * object_bytes for i in range(objects)],
            [object_bytes] * objects)
        _expect(all(e is None for e in done), f"puts: {done}")

        # Each trial moves at least 32 MiB each way, so that one call's
        # jitter does not decide it.
        batches = [list(range(i, min(i + batch, objects)))
                   for i in range(0, objects, batch)]
        batches *= max(1, (32 << 20) // (objects * object_bytes))
        args = []
        for idx in batches:
            args.append(([keys[i] for i in idx],
                         [base + i * object_bytes for i in idx],
                         [object_bytes] * len(idx), [pages[i] for i in idx]))

        def compat_get(i: int) -> None:
            ks, ptrs, sizes, _ = args[i]
            _expect(mc.batch_get_into(ks, ptrs, sizes) == sizes, "compat get")

        def native_get(i: int) -> None:
            ks, _, sizes, bufs = args[i]
            _expect(native.get_into_batch(ks, bufs) == sizes, "native get")

        get_c, get_n = _paired(compat_get, native_get, len(args), trials)
        _expect(np.array_equal(src, dst), "bytes read back")
        moved = sum(object_bytes * len(a[0]) for a in args)

        probe_keys = (keys * (PROBE_KEYS // objects + 1))[:PROBE_KEYS]
        probe_c, probe_n = _paired(
            lambda _: _expect(mc.probe_prefix(probe_keys) == PROBE_KEYS,
                              "compat probe"),
            lambda _: _expect(native.probe_prefix(probe_keys)[0] == PROBE_KEYS,
                              "native probe"),
            PROBE_ROUNDS, trials)
        exists_c, exists_n = _paired(
            lambda _: _expect(_leading_ones(mc.batch_is_exist(probe_keys)) ==
                              PROBE_KEYS, "batch_is_exist"),
            lambda _: _expect(all(r is True for r in
                                  native.readable_batch(probe_keys)),
                              "readable_batch"),
            PROBE_ROUNDS, trials)
    finally:
        native.remove_batch(keys, force=True)
        mc.close()
        native.close()

    probe_keys_total = PROBE_ROUNDS * PROBE_KEYS
    cg, ng = _rate(moved / GB, get_c), _rate(moved / GB, get_n)
    cp, np_ = _rate(probe_keys_total, probe_c), _rate(probe_keys_total, probe_n)
    ce, ne = _rate(probe_keys_total, exists_c), _rate(probe_keys_total,
                                                      exists_n)
    return {
        "scenario": "compat",
        "object_bytes": object_bytes,
        "objects": objects,
        "batch": batch,
        "compat_get_gbps": round(cg, 4),
        "native_get_gbps": round(ng, 4),
        "compat_get_vs_native": _ratio(cg, ng),
        "probe_keys": PROBE_KEYS,
        "compat_probe_keys_per_s": round(cp),
        "native_probe_keys_per_s": round(np_),
        "compat_probe_vs_native": _ratio(cp, np_),
        "compat_exists_keys_per_s": round(ce),
        "native_exists_keys_per_s": round(ne),
        "compat_exists_vs_native": _ratio(ce, ne),
        "probe_vs_batch_is_exist": _ratio(np_, ce),
        "trials": trials,
        "load_avg": round(os.getloadavg()[0], 2),
    }
