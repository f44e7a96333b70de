#!/usr/bin/env bash
# What a grouped put costs against an ungrouped one, the figures behind
# docs/design/groups.md (Cost) and bench/results/groups.md, from one or more
# builds of mooncake-tier-bench (e.g. this tree's and an older commit's).
#
#   scripts/groups-cost.sh counts [--objects N] [--batch B] BENCH...
#     Callgrind over the groups bench's put phase, both variants: per
#     object, instructions (whole phase and PutStart + PutEnd), simulated
#     first-level instruction and data misses (32 KiB) and last-level data
#     misses (32 MiB, 16-way). Deterministic: two runs agree to 0.01%.
#     Needs valgrind (apt-get install -y valgrind). About 20 s per variant.
#
#   scripts/groups-cost.sh footprint [--objects N] [--batch B] BENCH...
#     The code a put runs: bytes of instruction-cache lines (64 B) executed
#     at least once per ten objects in the put phase, per variant, and the
#     functions holding most of them. Needs valgrind.
#
#   scripts/groups-cost.sh diff [--objects N] [--batch B] BENCH...
#     Where the grouped put's extra cost goes: per function, exclusive
#     instructions and simulated last-level data misses per object, grouped
#     minus ungrouped, the largest differences first (same cache model as
#     counts). Needs valgrind.
#
#   scripts/groups-cost.sh wall [--runs N] BENCH...
#     Wall clock: `groups --json --skip-pressure` N times per binary (default
#     8), the binaries alternating so that they share the machine's moods;
#     min / median / max of the grouped/ungrouped ratio per op and batch,
#     and the median ops/s.
set -euo pipefail

usage() {
  sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[[ $# -ge 2 ]] || usage
mode=$1
shift
objects=200000
batches=(1 8)
runs=8
# The cache callgrind simulates for counts and diff: 32 KiB first-level
# instruction and data caches, a 32 MiB 16-way last level.
cache_model=(--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64
  --LL=33554432,16,64)
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --objects) objects=$2; shift 2 ;;
    --batch) batches=("$2"); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ $# -ge 1 ]] || usage
benches=("$@")
for bench in "${benches[@]}"; do
  [[ -x $bench ]] || { echo "not an executable: $bench" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# For every bench, batch and variant: the put phase under callgrind, with
# the valgrind options given after `report`, then `report CG BENCH BATCH
# VARIANT` on its output file.
each_put_under_callgrind() {
  local report=$1
  shift
  command -v valgrind >/dev/null ||
    { echo "needs valgrind: apt-get install -y valgrind" >&2; exit 2; }
  local bench batch variant cg
  for bench in "${benches[@]}"; do
    for batch in "${batches[@]}"; do
      for variant in ungrouped grouped; do
        cg=$work/put.$variant.$batch
        echo "callgrind: $bench, $variant, batch $batch" >&2
        valgrind --tool=callgrind "$@" --callgrind-out-file="$cg" \
          --toggle-collect='*GroupsPutPhase*' "$bench" groups --json \
          --variant "$variant" --op put --batch "$batch" --repeats 1 \
          --objects "$objects" --skip-pressure >/dev/null 2>&1
        "$report" "$cg" "$bench" "$batch" "$variant"
      done
    done
  done
}

counts_row() {
  local cg=$1 bench=$2 batch=$3 variant=$4 totals calls ir i1 d1 ll
  # The totals in --show's order, shares in parentheses dropped.
  totals=$(callgrind_annotate --auto=no \
    --show=Ir,I1mr,D1mr,D1mw,DLmr,DLmw "$cg" |
    awk -v n="$objects" '/PROGRAM TOTALS/ {
      gsub(/\([^)]*\)/, ""); gsub(",", "")
      printf "%.0f %.1f %.2f %.2f", $1 / n, $2 / n, ($3 + $4) / n,
        ($5 + $6) / n }')
  calls=$(callgrind_annotate --auto=no --inclusive=yes --tree=calling \
    "$cg" | awk -v n="$objects" '/>   .*Master::Put(Start|End)\(/ {
      gsub(",", "", $1); ir += $1 } END { printf "%.0f", ir / n }')
  read -r ir i1 d1 ll <<<"$totals"
  printf '%-40s %5s %-9s %6s %16s %6s %6s %6s\n' "$bench" "$batch" \
    "$variant" "$ir" "$calls" "$i1" "$d1" "$ll"
}

counts() {
  printf '%-40s %5s %-9s %6s %16s %6s %6s %6s\n' binary batch variant Ir \
    "PutStart+PutEnd" I1m D1m LLm
  each_put_under_callgrind counts_row "${cache_model[@]}"
}

footprint_report() {
  local cg=$1 bench=$2 batch=$3 variant=$4
  echo "== $bench, batch $batch, $variant"
  python3 - "$cg" "$objects" <<'EOF'
import collections, re, sys
# Callgrind's format with --dump-instr=yes: "ob=", "fn=" name the object
# and function (a name once, then its number); a cost line is "address
# line Ir", the address absolute (0x...), relative (+n / -n) or "*"; the
# cost line after "calls=" is a call's inclusive cost, not this code's.
path, objects = sys.argv[1], int(sys.argv[2])
names, ob, fn, addr, after_call = {}, None, None, 0, False
executed = collections.Counter()
owner = {}
for line in open(path):
    m = re.match(r"^(c?)(ob|fn|fl|fi|fe)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        kind = m.group(2) if m.group(2) in ("ob", "fn") else "fl"
        if m.group(4):
            names[(kind, m.group(3))] = m.group(4)
        if not m.group(1) and m.group(2) == "ob":
            ob = names.get(("ob", m.group(3)))
        if not m.group(1) and m.group(2) == "fn":
            fn = names.get(("fn", m.group(3)))
        continue
    if line.startswith("calls="):
        after_call = True
        continue
    fields = line.split()
    if len(fields) < 3 or not re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)$", fields[0]):
        continue
    a = fields[0]
    if a.startswith("0x"):
        addr = int(a, 16)
    elif a != "*":
        addr += int(a)
    if after_call:
        after_call = False
        continue
    executed[(ob, addr)] += int(fields[2])
    owner.setdefault((ob, addr // 64), fn)
lines = collections.Counter()
for (o, a), n in executed.items():
    lines[(o, a // 64)] += n
hot = [l for l, n in lines.items() if n >= objects / 10]
print(f"{len(hot) * 64} bytes of code run at least once per ten objects "
      f"({len(hot)} lines of 64 B)")
by_function = collections.Counter(owner[l] for l in hot)
for name, n in by_function.most_common(15):
    print(f"  {n * 64:6d}  {str(name)[:100]}")
EOF
}

footprint() {
  each_put_under_callgrind footprint_report --dump-instr=yes
}

# The ungrouped variant runs first: its per-function table is kept for the
# grouped one to be compared with.
diff_report() {
  local cg=$1 bench=$2 batch=$3 variant=$4
  callgrind_annotate --auto=no --show=Ir,DLmr,DLmw --threshold=100 "$cg" \
    >"$work/functions.$variant"
  [[ $variant == grouped ]] || return 0
  echo "== $bench, batch $batch: grouped minus ungrouped, per object"
  python3 - "$work/functions.ungrouped" "$work/functions.grouped" \
    "$objects" <<'EOF'
import re, sys
# A row: one count per event shown ("1,234 (5.6%)", "0" or "." for none),
# then "file:function [object]". Rows of one function name are summed.
count = re.compile(r"^(?:[\d,]+|\.)$")
def load(path):
    table = {}
    for line in open(path):
        fields = re.sub(r"\(\s*[\d.]+%\)", "", line).split(None, 3)
        if (len(fields) < 4 or not all(count.match(f) for f in fields[:3])
                or "PROGRAM TOTALS" in line):
            continue
        values = [0 if f == "." else int(f.replace(",", "")) for f in fields[:3]]
        name = re.sub(r" \[[^]]*\]$", "", fields[3].strip()).split(":", 1)[-1]
        name = name.replace("(anonymous namespace)", "{anon}")
        for long, short in (("std::__cxx11::basic_string<char, std::char_traits"
                             "<char>, std::allocator<char> >", "string"),
                            ("absl::debian3::container_internal::", ""),
                            ("absl::debian3::", "absl::"),
                            ("mooncake_tier::", "")):
            name = name.replace(long, short)
        name = re.sub(r"\([^()]*\)$", "", name)  # the argument list
        if len(name) > 110:  # keep the map's type and the method's name
            name = name[:70] + " ... " + name[-35:]
        ir, llr, llw = table.get(name, (0, 0, 0))
        table[name] = (ir + values[0], llr + values[1], llw + values[2])
    return table
ungrouped, grouped, n = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
rows = []
for name in set(ungrouped) | set(grouped):
    u, g = ungrouped.get(name, (0, 0, 0)), grouped.get(name, (0, 0, 0))
    rows.append(((g[0] - u[0]) / n, (g[1] + g[2] - u[1] - u[2]) / n, name))
print(f"total: {sum(r[0] for r in rows):+.0f} instructions, "
      f"{sum(r[1] for r in rows):+.2f} LL misses")
for title, key in (("instructions", 0), ("LL misses", 1)):
    print(f"  by {title}:")
    for r in sorted(rows, key=lambda r: -abs(r[key]))[:12]:
        print(f"    {r[0]:+8.1f} Ir  {r[1]:+6.3f} LLm  {r[2]}")
EOF
}

per_function_diff() {
  each_put_under_callgrind diff_report "${cache_model[@]}"
}

wall() {
  local out=$work/wall.jsonl bench
  for ((run = 1; run <= runs; ++run)); do
    echo "run $run of $runs" >&2
    for bench in "${benches[@]}"; do
      "$bench" groups --json --skip-pressure 2>/dev/null |
        sed "s|^|$bench |" >>"$out"
    done
  done
  python3 - "$out" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    bench, record = line.split(" ", 1)
    r = json.loads(record)
    if "ratio" not in r:
        continue
    runs.setdefault((bench, r["op"], r["batch"]), []).append(r)
print(f"{'binary':40} {'op':6} {'batch':>5} {'runs':>4}  ratio min / median / max"
      "   grouped    ungrouped ops/s (median)")
for (bench, op, batch), rs in sorted(runs.items()):
    ratios = [r["ratio"] for r in rs]
    g = statistics.median(r["grouped_ops_per_s"] for r in rs)
    u = statistics.median(r["ungrouped_ops_per_s"] for r in rs)
    print(f"{bench:40} {op:6} {batch:5} {len(rs):4}  {min(ratios):.3f} / "
          f"{statistics.median(ratios):.3f} / {max(ratios):.3f}   "
          f"{g / 1e6:.2f}M      {u / 1e6:.2f}M")
EOF
}

case $mode in
  counts) counts ;;
  footprint) footprint ;;
  diff) per_function_diff ;;
  wall) wall ;;
  *) usage ;;
esac
