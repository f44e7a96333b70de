#!/usr/bin/env python3
"""Medians of paired ratios from the runs scripts/bench-ab.sh records.

Each input line is "SIDE PAIR JSON", SIDE being A or B. Lines with the
same string and integer fields (the scenario's parameters) describe one
figure; for every numeric figure in them, the ratio of B to A is taken
within each pair and the median over pairs printed, with the lowest and
highest pair and the medians of each side. Latencies (names ending in
_us, _ms or holding p50/p99) are compared as A/B, so above 1 always means
B is better.
"""

import collections
import json
import statistics
import sys

SKIPPED = {"seconds", "ops", "errors", "rounds"}
LOWER_IS_BETTER = ("_us", "_ms", "p50", "p99", "p999", "latency")


def lower_is_better(name):
    return any(token in name for token in LOWER_IS_BETTER)


def main(paths):
    # (parameters, figure) -> pair -> side -> value
    figures = collections.defaultdict(lambda: collections.defaultdict(dict))
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split(" ", 2)
                if len(parts) != 3 or parts[0] not in ("A", "B"):
                    continue
                side, pair, text = parts
                try:
                    record = json.loads(text)
                except json.JSONDecodeError:
                    continue
                params = tuple(
                    (k, v) for k, v in record.items()
                    if not isinstance(v, float) and k not in SKIPPED)
                for name, value in record.items():
                    if isinstance(value, float) and name not in SKIPPED:
                        figures[(params, name)][pair][side] = value
    if not figures:
        print("bench-ab-compare: no runs found", file=sys.stderr)
        return 1
    for (params, name), pairs in figures.items():
        both = [p for p in pairs.values() if p.get("A") and p.get("B")]
        if not both:
            continue
        flip = lower_is_better(name)
        ratios = [(p["A"] / p["B"]) if flip else (p["B"] / p["A"])
                  for p in both]
        label = " ".join(f"{k}={v}" for k, v in params if k != "scenario")
        print(f"{label} {name}: median ratio {statistics.median(ratios):.3f} "
              f"over {len(ratios)} pairs (lowest {min(ratios):.2f}, highest "
              f"{max(ratios):.2f}); median A {statistics.median(p['A'] for p in both):.6g}, "
              f"B {statistics.median(p['B'] for p in both):.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
