#!/usr/bin/env bash
# Installs what is needed, builds mooncake-tier and runs every test:
#   1. the whole suite on a RelWithDebInfo build (gcc);
#   2. one clang tree that does three jobs: it fails on any thread-safety
#      analysis warning, runs the whole suite again under AddressSanitizer +
#      UndefinedBehaviorSanitizer, and runs each libFuzzer harness of fuzz/
#      for a bounded time (FUZZ_SECONDS, default 20);
#   3. under ThreadSanitizer (gcc), every test that runs the project's code
#      on more than one thread (mt_add_test's NO_TSAN marks the others; the
#      CLI and the dashboards' checks are left out of that tree).
# SANITIZERS=0 skips 2 and 3 (a quick local run).
# Every tree is a unity build (MOONCAKE_TIER_UNITY_BUILD, the default):
# about 40% less compile time; bench/results/ci.md has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

stage() {  # prints a stage's title with the time spent so far
  printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"
}

run_suite() {  # build_dir, ctest args...
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure --timeout 600 -j 2 "$@")
}

# Line tables (-g1) rather than full debug info, in every tree: failures,
# crashes and sanitizer reports still name file and line, and a build takes
# about a third less time.
line_tables=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

stage "build and test (RelWithDebInfo)"
# Every warning of gcc and clang in the project's own code fails CI.
bash scripts/build.sh build -DMOONCAKE_TIER_WERROR=ON "${line_tables[@]}"
run_suite build

if [[ ${SANITIZERS:-1} != 0 ]]; then
  stage "clang: thread-safety analysis, ASAN+UBSAN build"
  # clang builds this tree in about two thirds of gcc's time at the same
  # -O1, which pays for the fuzzers. -fsanitize=fuzzer-no-link gives every
  # library the coverage counters libFuzzer steers by; only the harnesses
  # link libFuzzer itself.
  CC=clang CXX=clang++ bash scripts/build.sh build-clang-asan \
    -DMOONCAKE_TIER_ASAN=ON -DMOONCAKE_TIER_FUZZ=ON -DMOONCAKE_TIER_WERROR=ON \
    -DMOONCAKE_TIER_BUILD_BENCH=OFF \
    "-DCMAKE_CXX_FLAGS=-Werror=thread-safety -fsanitize=fuzzer-no-link" \
    "${line_tables[@]}"
  stage "tests under ASAN+UBSAN"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite build-clang-asan
  stage "fuzzing"
  bash scripts/fuzz.sh build-clang-asan "${FUZZ_SECONDS:-20}"

  stage "build and test under TSAN"
  bash scripts/build.sh build-tsan -DMOONCAKE_TIER_TSAN=ON \
    -DMOONCAKE_TIER_BUILD_BENCH=OFF -DMOONCAKE_TIER_BUILD_CLI=OFF \
    "${line_tables[@]}"
  # UCX patches mmap/madvise in memory, which crashes under TSAN at thread
  # exit; UCX reads this switch when it loads, so it has to come from here.
  # gRPC and abseil are not TSAN-built: reports from inside them are noise
  # (ignore_noninstrumented_modules; rpc/tsan.supp names the rest).
  UCX_MEM_MMAP_HOOK_MODE=none \
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1 suppressions=$PWD/rpc/tsan.supp" \
    run_suite build-tsan
fi
stage "all tests passed"
