#!/usr/bin/env bash
# Configures and builds mooncake-tier.
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Defaults: build/ with RelWithDebInfo. Uses 2 jobs (the project's machines
# have 2 cores); override with JOBS=N.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
jobs=${JOBS:-2}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build_dir" -j "$jobs"
