#!/usr/bin/env bash
# Fuzzes every harness of fuzz/ for a while (fuzz/README.md):
#   scripts/fuzz.sh BUILD_DIR [SECONDS]
# BUILD_DIR is a tree configured with -DMOONCAKE_TIER_FUZZ=ON (clang,
# -fsanitize=fuzzer-no-link, MOONCAKE_TIER_ASAN=ON) with the harnesses
# built. Each harness runs SECONDS (default: $FUZZ_SECONDS, else 20) over a
# copy of its seed corpus and regressions in a temp dir, so the corpus in
# the repository never grows here; two harnesses at a time ($FUZZ_JOBS).
# Prints one line per harness (runs, coverage, result) and a summary. On a
# finding it copies the input into fuzz/regressions/<harness>/, prints the
# sanitizer's report, the input's path and the command that reproduces it,
# and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
if (($# < 1)); then
  echo "usage: scripts/fuzz.sh BUILD_DIR [SECONDS]" >&2
  exit 2
fi
build=$1
seconds=${2:-${FUZZ_SECONDS:-20}}
parallel=${FUZZ_JOBS:-2}
harnesses=(ssd_record_fuzz shm_locator_fuzz admin_request_fuzz
  proto_convert_fuzz config_fuzz)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

work=$(mktemp -d "${TMPDIR:-/tmp}/mt-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Last libFuzzer status line's field: `field cov` of "#123 DONE cov: 45 ...".
status_field() {  # log, name
  grep -E '^#[0-9]+' "$1" | tail -n 1 | sed -nE "s/.*[ ]$2: ([0-9]+).*/\1/p"
}

run_one() {  # harness
  local name=$1 dir=$work/$1
  local bin=$build/fuzz/$name
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/tmp"
  if [[ ! -x $bin ]]; then
    echo "missing $bin (configure with -DMOONCAKE_TIER_FUZZ=ON and build it)" \
      >"$dir/log"
    echo 127 >"$dir/rc"
  else
    for src in "fuzz/corpus/$name" "fuzz/regressions/$name"; do
      [[ -d $src ]] || continue
      find "$src" -type f ! -name '*.md' -exec cp {} "$dir/corpus/" \;
    done
    # TMPDIR: what a harness makes there (config_fuzz's file) goes too.
    TMPDIR=$dir/tmp "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
      "$dir/corpus" >"$dir/log" 2>&1
    echo $? >"$dir/rc"
  fi
  local rc runs cov ft speed result=ok
  rc=$(cat "$dir/rc")
  runs=$(sed -nE 's/^stat::number_of_executed_units:[[:space:]]+([0-9]+)/\1/p' "$dir/log")
  cov=$(status_field "$dir/log" cov)
  ft=$(status_field "$dir/log" ft)
  speed=$(sed -nE 's/^stat::average_exec_per_sec:[[:space:]]+([0-9]+)/\1/p' "$dir/log")
  ((rc == 0)) || result="FAILED (exit $rc)"
  printf '[fuzz] %-20s runs %-9s exec/s %-7s cov %-6s ft %-7s %s\n' "$name" \
    "${runs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$result"
}

for name in "${harnesses[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n; done
  run_one "$name" &
done
wait

failed=0
for name in "${harnesses[@]}"; do
  dir=$work/$name
  (($(cat "$dir/rc") == 0)) && continue
  failed=$((failed + 1))
  echo "== $name failed; the end of its log:"
  tail -n 60 "$dir/log"
  found=0
  for input in "$dir"/artifacts/{crash,leak,timeout,oom}-*; do
    [[ -f $input ]] || continue
    found=1
    mkdir -p "fuzz/regressions/$name"
    kept=fuzz/regressions/$name/$(basename "$input")
    cp "$input" "$kept"
    echo "== input kept in $kept; reproduce with:"
    echo "   $build/fuzz/$name $kept"
  done
  ((found)) || echo "== no input saved (the harness failed before fuzzing)"
done
echo "[fuzz] ${#harnesses[@]} harnesses, ${seconds}s each, $parallel at a" \
  "time: $((${#harnesses[@]} - failed)) passed, $failed failed;" \
  "wall time ${SECONDS}s"
((failed == 0))
