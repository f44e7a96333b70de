#!/usr/bin/env bash
# Installs what is needed, builds mooncake-tier (Release) and runs it:
# `mooncake-tierd standalone`, a master and one storage node in one
# process, serving clients on 127.0.0.1:50051 (gRPC) and over UCX, with
# DRAM (L1), an SSD directory (L2), offload on eviction and promotion on
# hit, and the admin API and Prometheus /metrics on
# http://127.0.0.1:9003. Ctrl-C (or SIGTERM) stops it cleanly.
#
# Extra arguments go to `mooncake-tierd standalone` (see --help), e.g.
#   bash scripts/run.sh --dram 4GiB --ssd-dir /mnt/nvme/mooncake-tier
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
cat <<'HINT'

mooncake-tierd standalone is starting.
  gRPC (clients):       127.0.0.1:50051
  admin API, /metrics:  http://127.0.0.1:9003   (curl http://127.0.0.1:9003/api/v1/help)
In another shell, try:
  build/cli/mooncake-tierctl status
  build/cli/mooncake-tierctl kv put demo --value hello
  build/cli/mooncake-tierctl kv get demo
  build/cli/mooncake-tierctl groups list
  build/cli/mooncake-tierctl metrics --match promotion
  build/cli/mooncake-tierctl kv put big --size 4194304 --group blk1 --group-size 2 --group-index 0
  build/cli/mooncake-tierctl kv exists big        # group blk1: filling, 1 of 2
  build/cli/mooncake-tierctl -o json kv exists big
  build/bench/mooncake-tier-bench datapath --master 127.0.0.1:50051
mooncake-tierctl talks to http://127.0.0.1:9003 by default (--endpoint or
MOONCAKE_TIER_ENDPOINT to change it). Benchmarks: bash scripts/bench.sh

HINT
exec build/daemon/mooncake-tierd standalone "$@"
