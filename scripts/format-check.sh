#!/bin/bash
# Checks that every C++ source of the tree is as clang-format (with the
# tree's .clang-format) would write it: the same formatting for every
# author, checked in CI rather than by review. Prints the files and lines
# that differ; `clang-format -i FILE` fixes one, `git clang-format` the
# lines a commit changed.
# Usage: format-check.sh SOURCE_DIR
set -u
src=$1
cd "$src" || exit 2
if ! command -v clang-format >/dev/null; then
  echo "FAIL: clang-format not found (Debian package clang-format)"
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o \
    \( -name '*.cc' -o -name '*.h' \) -print | grep -v '/build')
fi
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "FAIL: the files above are not formatted (clang-format -i FILE)"
  exit 1
fi
echo "OK: ${#files[@]} files formatted"
