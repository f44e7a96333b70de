#!/usr/bin/env bash
# Installs what running needs, builds what running needs (Release, in its
# own tree build-run/, reused by later runs) and runs mooncake-tier:
# `mooncake-tierd standalone`, a master and one storage node in one
# process, serving clients on 127.0.0.1:50051 (gRPC) and over UCX, with
# DRAM (L1), an SSD directory (L2), offload on eviction and promotion on
# hit, and the admin API and Prometheus /metrics on
# http://127.0.0.1:9003. Ctrl-C (or SIGTERM) stops it cleanly.
#
# Extra arguments go to `mooncake-tierd standalone`, e.g.
#   bash scripts/run.sh --dram 4GiB --ssd-dir /mnt/nvme/mooncake-tier
# `bash scripts/run.sh --help` prints the options without installing or
# building anything.
#
# What it builds: mooncake-tierd, mooncake-tierctl and the Python module;
# no tests and no benchmark (scripts/test.sh builds everything, in build/).
# RUN_BUILD_DIR moves the tree; JOBS sets the parallel jobs (2).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RUN_BUILD_DIR:-build-run}
tierd=$build_dir/daemon/mooncake-tierd

for arg in "$@"; do
  if [[ $arg == -h || $arg == --help ]]; then
    if [[ -x $tierd ]]; then
      exec "$tierd" standalone --help
    fi
    cat <<'USAGE'
Usage: bash scripts/run.sh [mooncake-tierd standalone options]

Installs the Debian packages running needs, builds mooncake-tierd,
mooncake-tierctl and the Python module (Release, in build-run/) and runs
`mooncake-tierd standalone` in the foreground; Ctrl-C stops it.

Not built yet, so here is the outline from daemon/README.md; after the
first run, `bash scripts/run.sh --help` lists every option with its default.

USAGE
    sed -n '/^## Command line$/,/^## Admin HTTP/p' daemon/README.md |
      sed '1d;$d'
    exit 0
  fi
done

started=$SECONDS
stage() {  # a step's title with the time spent so far
  printf '[run %dm%02ds] %s\n' $(((SECONDS - started) / 60)) \
    $(((SECONDS - started) % 60)) "$*"
}

stage "packages"
bash scripts/install-deps.sh run
stage "configure and build (Release at -O2, $build_dir/)"
# Release at -O2 (the level Debian builds its packages at) rather than
# CMake's -O3, and without link-time optimization of the Python module
# (pybind11 turns it on for Release): on 2 cores this build took 8m13s with
# both and 7m53s without, and prints no warning (scripts/first-hour.sh
# measures the whole first run; docs/design/first-run.md).
BUILD_TARGETS="mooncake-tierd mooncake-tierctl mooncake-tierctl-kv _native" \
  bash scripts/build.sh "$build_dir" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF \
  -DMOONCAKE_TIER_BUILD_TESTS=OFF -DMOONCAKE_TIER_BUILD_BENCH=OFF
stage "starting mooncake-tierd standalone"

# The daemon replaces this script (exec: it gets Ctrl-C and SIGTERM itself,
# once, and its exit status is the script's); a watcher in the background
# prints where it actually serves (its ready file) once it does, and goes
# away with it.
ready=$(mktemp -u "${TMPDIR:-/tmp}/mooncake-tier-ready.XXXXXX")
tierctl=$build_dir/cli/mooncake-tierctl
banner() {
  local daemon=$1
  while [[ ! -f $ready ]]; do
    kill -0 "$daemon" 2>/dev/null || return 0
    sleep 0.1
  done
  field() { sed -n "s/^$1=//p" "$ready"; }
  local master admin m="" e="" admin_url=off took
  master=$(field master_address)
  admin=$(field admin_address)
  # The flags the examples need when the daemon is not where tierctl looks
  # by default (127.0.0.1:50051 and :9003).
  [[ $master != 127.0.0.1:50051 ]] && m=" --master $master"
  if [[ -n $admin ]]; then
    admin_url=http://$admin
    [[ $admin != 127.0.0.1:9003 ]] && e=" --endpoint $admin_url"
  fi
  took=$((SECONDS - started))
  cat <<BANNER

mooncake-tierd standalone is serving (pid $daemon, ready $((took / 60))m$((took % 60))s after this script started).
  gRPC (clients):       $master
  admin API, /metrics:  $admin_url
In another shell, try:
  $tierctl$e status
  $tierctl kv put hello --value world$m
  $tierctl kv get hello$m
  $tierctl kv put blk1/k --size 1MiB --group blk1 --group-size 2 --group-index 0$m
  $tierctl kv exists blk1/k$m          # group blk1: filling, 1 of 2
  $tierctl$e groups list --state filling
  $tierctl$e metrics --match promotion
  $tierctl$e top
  curl -s ${admin_url/off/http://127.0.0.1:9003}/api/v1/help | python3 -m json.tool   # every admin route
Python: PYTHONPATH=$build_dir/python python3 -c 'import mooncake_tier'
Ctrl-C stops it.

BANNER
}
banner $$ &
exec "$tierd" standalone --ready-file "$ready" "$@"
