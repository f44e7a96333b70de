"""Python data-path benchmark: put and get throughput of 1 MiB objects from
Python, beside the C++ client's figure for the same gets in the same run.

    python3 -m mooncake_tier.bench --json              # spawns a standalone daemon
    python3 -m mooncake_tier.bench --master HOST:PORT  # against a running store
    python3 -m mooncake_tier.bench --compat --json     # compat class vs native
                                                       # (bench_compat.py)
    python3 -m mooncake_tier.bench --trace FILE --json # a trace through each
                                                       # engine backend
                                                       # (bench_trace.py)

--json prints one line:
    {"scenario":"python","object_bytes":N,"put_gbps":X,"get_gbps":X,
     "cpp_get_gbps":X, ...}
where get_gbps is Store.get_into into a registered numpy buffer (the
zero-copy path), get_bytes_gbps is Store.get returning bytes, and
cpp_get_gbps is the same get_into calls in a C++ loop with the GIL released
(Store._cpp_get_loop). get_into_vs_cpp is their ratio (target >= 0.9).
The Python and C++ get_into calls alternate object by object, so both see
the same machine load; each figure is the median of the trials.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid

import numpy as np

import mooncake_tier as mt

GB = 1e9


def _gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / GB if seconds > 0 else 0.0


def measure(store: mt.Store, object_bytes: int, objects: int, rounds: int,
            trials: int) -> dict:
    run = f"bench-py-{uuid.uuid4().hex[:8]}"
    keys = [f"{run}/{i}" for i in range(objects)]
    value = np.random.default_rng(0).integers(0, 255, object_bytes,
                                              dtype=np.uint8)
    buf = np.empty(object_bytes, dtype=np.uint8)
    store.register_buffer(value)
    store.register_buffer(buf)
    try:
        t = time.perf_counter()
        for k in keys:
            store.put(k, value)
        put_s = time.perf_counter() - t

        # Warm endpoints and caches once on both paths.
        store.get_into(keys[0], buf)
        store._cpp_get_loop(keys[:1], buf, 1)

        # get_into from Python and from C++, paired object by object (in
        # alternating order) so that both see the same machine load: on a
        # shared machine, load swings between whole passes dwarf the
        # difference being measured.
        py_into, cpp = [], []
        for trial in range(trials):
            py_s = cpp_s = 0.0
            nbytes = 0
            for _ in range(rounds):
                for i, k in enumerate(keys):
                    python_first = (i + trial) % 2 == 0
                    if not python_first:
                        s, _ = store._cpp_get_loop((k,), buf, 1)
                        cpp_s += s
                    t = time.perf_counter()
                    nbytes += store.get_into(k, buf)
                    py_s += time.perf_counter() - t
                    if python_first:
                        s, _ = store._cpp_get_loop((k,), buf, 1)
                        cpp_s += s
            py_into.append(_gbps(nbytes, py_s))
            cpp.append(_gbps(nbytes, cpp_s))

        py_bytes = []
        for _ in range(trials):
            t = time.perf_counter()
            for _ in range(rounds):
                for k in keys:
                    store.get(k)
            py_bytes.append(_gbps(object_bytes * objects * rounds,
                                  time.perf_counter() - t))
        if not np.array_equal(buf, value):
            raise RuntimeError("benchmark read back different bytes")
    finally:
        store.unregister_buffer(buf)
        store.unregister_buffer(value)
        for k in keys:
            try:
                store.remove(k, force=True)
            except mt.StoreError:
                pass

    get_gbps = statistics.median(py_into)
    cpp_gbps = statistics.median(cpp)
    return {
        "scenario": "python",
        "object_bytes": object_bytes,
        "put_gbps": round(_gbps(object_bytes * objects, put_s), 4),
        "get_gbps": round(get_gbps, 4),
        "cpp_get_gbps": round(cpp_gbps, 4),
        "get_bytes_gbps": round(statistics.median(py_bytes), 4),
        "get_into_vs_cpp": round(get_gbps / cpp_gbps, 3) if cpp_gbps else None,
        "objects": objects,
        "rounds": rounds,
        "trials": trials,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m mooncake_tier.bench",
                                description=__doc__.splitlines()[0])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--master", help="master address of a running store")
    where.add_argument("--spawn", action="store_true",
                       help="start a standalone daemon (the default)")
    p.add_argument("--daemon", help="mooncake-tierd to spawn "
                   "(default: $MOONCAKE_TIERD or the one in the build tree)")
    p.add_argument("--compat", action="store_true",
                   help="the compat class beside the native binding "
                   "(bench_compat.py)")
    p.add_argument("--trace", metavar="FILE",
                   help="replay this request trace through the engine "
                   "backends (bench_trace.py)")
    p.add_argument("--backend", default="sglang,vllm,lmcache",
                   help="--trace: comma list of sglang, vllm, lmcache "
                   "(default: all three)")
    p.add_argument("--requests", type=int, default=0,
                   help="--trace: replay the first N requests (0: all)")
    p.add_argument("--dram", default="64MiB",
                   help="--trace: DRAM of each spawned daemon")
    p.add_argument("--ssd-capacity", default="512MiB",
                   help="--trace: SSD capacity of each spawned daemon")
    p.add_argument("--object-bytes", type=int,
                   help="default: 1 MiB, or 64 KiB with --compat")
    p.add_argument("--objects", type=int, default=64)
    p.add_argument("--batch", type=int, default=16,
                   help="keys per batch read (--compat)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--trials", type=int, default=9)
    p.add_argument("--json", action="store_true", help="print one JSON line")
    args = p.parse_args(argv)
    if args.trace is not None:
        if args.compat:
            p.error("--trace and --compat are separate benchmarks")
        from .bench_trace import run as run_trace
        return run_trace(p, args)
    if args.object_bytes is None:
        args.object_bytes = 64 << 10 if args.compat else 1 << 20
    if args.object_bytes <= 0 or args.objects <= 0 or args.rounds <= 0 \
            or args.trials <= 0 or args.batch <= 0:
        p.error("sizes and counts must be positive")

    def run(master: str) -> dict:
        if args.compat:
            from .bench_compat import measure_compat
            return measure_compat(master, args.object_bytes, args.objects,
                                  args.batch, args.trials)
        with mt.Store(master) as store:
            return measure(store, args.object_bytes, args.objects,
                           args.rounds, args.trials)

    if args.master:
        result = run(args.master)
    else:
        from .standalone import StandaloneDaemon
        need = args.object_bytes * args.objects
        dram = f"{max(256, 2 * need >> 20)}MiB"
        with StandaloneDaemon(binary=args.daemon, dram=dram,
                              ssd_capacity="1GiB") as daemon:
            result = run(daemon.master_address)

    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>16}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
