#!/bin/bash
# Checks that the modules around the engine reach a master only through
# its interfaces: no source of rpc/, client/, node/, admin_server/,
# metrics/, daemon/, cli/, transport/, protocol/, base/ or python/
# includes core/master.h (tests of those modules may, to drive an engine
# directly). Hosts use core/master_host.h, the admin API and metrics
# core/master_admin.h, the gRPC service and nodes the protocol/ interfaces.
# Usage: master_private_check.sh SOURCE_DIR
set -u
src=$1
found=$(cd "$src" && grep -rln '#include "core/master.h"' \
    --include='*.cc' --include='*.h' \
    base protocol rpc client node admin_server metrics daemon cli transport \
    python 2>/dev/null |
  grep -vE '_test\.cc$|_test_util\.h$|/testing/')
if [ -n "$found" ]; then
  echo "FAIL: core/master.h included outside core/ (use core/master_host.h,"
  echo "core/master_admin.h or the protocol/ interfaces):"
  echo "$found"
  exit 1
fi
echo "core/master.h is included only by core/, tests and benchmarks"
