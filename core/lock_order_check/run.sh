#!/bin/bash
# Checks that clang's thread-safety analysis enforces the object index's
# lock order: against_order.cc must be rejected once per violation, and
# in_order.cc accepted. Usage: run.sh CLANGXX SOURCE_DIR
set -u
clangxx=$1
src=$2
flags=(-std=c++20 -fsyntax-only -I"$src" -I"$src/include"
       -Wthread-safety -Wthread-safety-beta -Werror=thread-safety)
here="$src/core/lock_order_check"

if ! "$clangxx" "${flags[@]}" "$here/in_order.cc"; then
  echo "FAIL: in_order.cc keeps the order but was rejected"
  exit 1
fi
out=$("$clangxx" "${flags[@]}" "$here/against_order.cc" 2>&1)
status=0
for expected in \
    "cannot call function 'UpdateGroup' while mutex 'object_stripe_role' is held" \
    "cannot call function 'Read' while mutex 'object_stripe_role' is held" \
    "cannot call function 'ReadGroup' while mutex 'group_stripe_role' is held"; do
  if ! grep -qF "$expected" <<<"$out"; then
    echo "FAIL: expected the analysis to say: $expected"
    status=1
  fi
done
if [ $status -ne 0 ]; then
  echo "--- clang said:"
  echo "$out"
  exit 1
fi
echo "lock order enforced: 3 violations rejected, the order accepted"
