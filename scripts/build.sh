#!/usr/bin/env bash
# Configures and builds mooncake-tier.
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Defaults: build/ with RelWithDebInfo. Uses 2 jobs (the project's machines
# have 2 cores); override with JOBS=N. BUILD_TARGETS="a b" builds only
# those targets (and what they link). Generates for Ninja, which starts a
# target's compiles while the libraries it links are still being built
# (Make waits for them and leaves a core idle).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
jobs=${JOBS:-2}
cache=$build_dir/CMakeCache.txt
if [[ -f $cache ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$cache"; then
  # A tree configured by an older checkout for Make: CMake cannot switch a
  # tree's generator, so start it again.
  echo "[build] $build_dir was generated for another build tool; regenerating"
  rm -rf "$build_dir"
fi
began=$SECONDS
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
echo "[build] configure took $((SECONDS - began)) s"
began=$SECONDS
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
echo "[build] build took $((SECONDS - began)) s"
