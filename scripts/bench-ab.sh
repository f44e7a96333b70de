#!/usr/bin/env bash
# Compares two builds of mooncake-tier-bench on one scenario, in pairs:
#   scripts/bench-ab.sh PAIRS BENCH_A BENCH_B SCENARIO [scenario args...]
# e.g. (a build of the commit before a change as A, the change as B):
#   scripts/bench-ab.sh 12 /tmp/base/build/bench/mooncake-tier-bench \
#     build/bench/mooncake-tier-bench core --op put --threads 1
#
# Each pair runs A then B (B then A in every other pair, so that neither
# side always goes first), one after the other, so both see the same state
# of a shared machine; the ratio B/A is taken within each pair and the
# median over pairs is printed per figure (higher is better for B, except
# for latencies, where A/B is printed so that above 1 still means B is
# better). On the project's 2-core VM one run's throughput moves by up to
# 30% with what the host does, in spells of seconds; a median of paired
# ratios over short runs (core --op/--threads) stays within a few percent
# where a ratio of medians over long runs did not.
#
# SCALE (default 0.25) and SCRATCH_DIR (default /tmp) as in bench.sh. The
# JSON lines of every run go to OUT (default: a temp file, named at the
# end) for a second look.
set -euo pipefail
if (($# < 4)); then
  sed -n '2,4p' "$0" >&2
  exit 2
fi
pairs=$1 bench_a=$2 bench_b=$3
shift 3
for b in "$bench_a" "$bench_b"; do
  [[ -x $b ]] || { echo "bench-ab: $b is not an executable" >&2; exit 2; }
done
out=${OUT:-$(mktemp /tmp/bench-ab.XXXXXX)}
: >"$out"
run() {  # side binary pair
  if ! "$2" --json --scale "${SCALE:-0.25}" \
      --scratch-dir "${SCRATCH_DIR:-/tmp}" "${@:4}" 2>/dev/null |
      sed "s/^/$1 $3 /" >>"$out"; then
    echo "bench-ab: side $1 failed in pair $3" >&2
    exit 1
  fi
}
for ((i = 1; i <= pairs; ++i)); do
  if ((i % 2)); then
    run A "$bench_a" "$i" "$@"
    run B "$bench_b" "$i" "$@"
  else
    run B "$bench_b" "$i" "$@"
    run A "$bench_a" "$i" "$@"
  fi
  echo "[bench-ab] pair $i of $pairs done, load $(cut -d' ' -f1 /proc/loadavg)" >&2
done
python3 "$(dirname "$0")/bench-ab-compare.py" "$out"
echo "[bench-ab] runs: $out" >&2
