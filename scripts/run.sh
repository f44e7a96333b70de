#!/usr/bin/env bash
# Installs what is needed, builds mooncake-tier and runs it.
#
# Until the daemon lands, "running" the system means the in-process store
# under load: the benchmark scenarios (engine ops/s, SSD store against raw
# O_DIRECT, DRAM allocator, groups, promotion on hit), printed as they
# finish.
# SCALE (default 0.25) multiplies the work; SCRATCH_DIR (default /tmp)
# holds the SSD files.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
scale=${SCALE:-0.25}
scratch=${SCRATCH_DIR:-/tmp}
bench=build/bench/mooncake-tier-bench
for scenario in core ssd alloc groups promotion; do
  echo "== mooncake-tier-bench $scenario --scale $scale"
  "$bench" --scale "$scale" --scratch-dir "$scratch" "$scenario"
done
