#!/bin/bash
# Checks that the admin CLI binary ($1) links none of the heavy parts of the
# store: no shared library of UCX, io_uring, gRPC or protobuf (ldd), and no
# code of the client, the transport, the storage node or the metadata engine
# (their symbols, which static linking would hide from ldd).
set -euo pipefail
bin="$1"
fail=0
libs=$(ldd "$bin")
for lib in libucp libucs libuct liburing libgrpc libprotobuf; do
  if grep -q "$lib" <<<"$libs"; then
    echo "FAIL: $bin links $lib:"; grep "$lib" <<<"$libs"; fail=1
  fi
done
syms=$(nm -C "$bin" | grep -E ' [TtWw] ' || true)
for part in 'mooncake_tier::Master::' 'mooncake_tier::ObjectIndex' \
            'mooncake_tier::StorageNode' 'mooncake_tier::SsdStore' \
            'mooncake_tier::UcxTransport' 'mooncake_tier::RemoteClient' \
            'mooncake_tier::Client::' 'mooncake_tier::GrpcMasterApi'; do
  n=$(grep -c -F "$part" <<<"$syms" || true)
  if [ "$n" != 0 ]; then
    echo "FAIL: $bin holds $n symbols of $part"; fail=1
  fi
done
if [ $fail = 0 ]; then
  echo "ok: $bin links no client, transport, SSD or engine code"
  echo "$libs" | sed 's/^/  /'
fi
exit $fail
