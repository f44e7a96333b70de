#!/usr/bin/env bash
# Runs a fuzz harness once over every input of the given directories (those
# that exist; *.md files are notes, not inputs): what the harness's ctest
# does with its seed corpus and its regressions.
#   fuzz/replay.sh HARNESS DIR...
# libFuzzer runs inputs named on its command line once each and exits 0
# when none crashed; a crash, a sanitizer report, a timeout or running out
# of memory exits non-zero and names the input.
set -euo pipefail
harness=$1
shift
inputs=()
for dir in "$@"; do
  [[ -d $dir ]] || continue
  while IFS= read -r -d '' file; do
    inputs+=("$file")
  done < <(find "$dir" -type f ! -name '*.md' -print0 | sort -z)
done
if ((${#inputs[@]} == 0)); then
  # With no input named, libFuzzer would start fuzzing and never stop.
  echo "replay.sh: no inputs in $*" >&2
  exit 1
fi
exec "$harness" -rss_limit_mb=2048 -timeout=30 "${inputs[@]}"
