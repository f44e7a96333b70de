#!/usr/bin/env bash
# Installs what is needed, builds mooncake-tier (Release) and runs it:
# `mooncake-tierd standalone`, a master and one storage node in one
# process, serving clients on 127.0.0.1:50051 (gRPC) and over UCX, with
# DRAM (L1), an SSD directory (L2), offload on eviction and promotion on
# hit. Ctrl-C (or SIGTERM) stops it cleanly.
#
# Extra arguments go to `mooncake-tierd standalone` (see --help), e.g.
#   bash scripts/run.sh --dram 4GiB --ssd-dir /mnt/nvme/mooncake-tier
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
cat <<'HINT'

mooncake-tierd standalone is starting. In another shell, try:
  build/cli/mooncake-tierctl kv put hello --value world
  build/cli/mooncake-tierctl kv get hello
  build/cli/mooncake-tierctl kv put big --size 4194304 --group blk1 --group-size 2 --group-index 0
  build/cli/mooncake-tierctl kv exists big        # group blk1: filling, 1 of 2
  build/cli/mooncake-tierctl -o json kv exists big
  build/bench/mooncake-tier-bench datapath --master 127.0.0.1:50051
Benchmarks of every scenario: bash scripts/bench.sh

HINT
exec build/daemon/mooncake-tierd standalone "$@"
