#!/usr/bin/env bash
# Installs what is needed, builds mooncake-tier (Release) and runs every
# benchmark scenario, printing figures as they finish: the in-process
# engine (core, ssd, alloc, groups, promotion, admin) and the distributed
# store from a client (datapath, metadata, groups_remote, sustained, and
# trace when TRACE names a request trace file) against a mooncake-tierd
# standalone the benchmark starts itself, and failover (three masters on
# an etcd it starts, kill -9 of the leader, HA against a lone master).
# SCALE (default 0.25) multiplies the work; SCRATCH_DIR (default /tmp)
# holds the SSD files; JSON=1 prints one JSON object per line; TRACE is a
# trace in the Mooncake FAST'25 format (bench/README.md, trace).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
scale=${SCALE:-0.25}
scratch=${SCRATCH_DIR:-/tmp}
json=()
[[ ${JSON:-0} != 0 ]] && json=(--json)
bench=build/bench/mooncake-tier-bench
for scenario in core ssd alloc groups promotion admin; do
  echo "== mooncake-tier-bench $scenario --scale $scale" >&2
  "$bench" "${json[@]}" --scale "$scale" --scratch-dir "$scratch" "$scenario"
done
for scenario in datapath metadata groups_remote sustained; do
  echo "== mooncake-tier-bench $scenario --spawn --scale $scale" >&2
  "$bench" "${json[@]}" --scale "$scale" --scratch-dir "$scratch" \
    "$scenario" --spawn
done
echo "== mooncake-tier-bench failover --spawn --rounds 3" >&2
"$bench" "${json[@]}" --scratch-dir "$scratch" failover --spawn --rounds 3
if [[ -n ${TRACE:-} ]]; then
  echo "== mooncake-tier-bench trace --trace $TRACE --spawn" >&2
  "$bench" "${json[@]}" --scratch-dir "$scratch" trace --trace "$TRACE" --spawn
else
  echo "== trace skipped: set TRACE=FILE (a Mooncake FAST'25 trace) to run it" >&2
fi
