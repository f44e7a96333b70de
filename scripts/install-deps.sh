#!/usr/bin/env bash
# Installs the Debian 12 packages mooncake-tier needs. Run as root on a
# fresh machine; safe to run again.
#   scripts/install-deps.sh run    what building and running the daemon,
#                                  mooncake-tierctl and the Python module
#                                  need (scripts/run.sh)
#   scripts/install-deps.sh [test] the above plus what the tests, the
#                                  sanitizer and fuzzing builds and the
#                                  benchmark need (scripts/test.sh)
set -euo pipefail

profile=${1:-test}
run_packages=(
  cmake ninja-build g++ pkg-config ca-certificates curl
  libabsl-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  liburing-dev libxxhash-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  prometheus-cpp-dev libcpp-httplib-dev libboost-dev libucx-dev
  python3 python3-dev pybind11-dev python3-pybind11 python3-numpy
)
test_packages=(
  clang clang-format make git ucx-utils
  libgtest-dev libgmock-dev libbenchmark-dev
  prometheus  # server and promtool, for the dashboard tests (they run their own)
  etcd-server etcd-client  # for the HA tests (they run their own, on loopback)
  python3-pytest
)
case $profile in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "usage: $0 [run|test]" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "[deps] all ${#packages[@]} packages for '$profile' present"
  exit 0
fi
echo "[deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive

# The tests start their own servers (prometheus, etcd on loopback ports):
# while these packages install, no service may start (policy-rc.d answering
# 101 is Debian's switch for that, honoured by invoke-rc.d and
# deb-systemd-invoke), unless the machine already has a policy of its own.
# A policy this script left behind when it was killed (SIGKILL runs no
# trap) carries its marker and is taken over, and removed at the end.
policy=/usr/sbin/policy-rc.d
marker="# mooncake-tier install-deps.sh: no service starts while it installs"
own_policy=0
if [[ ! -e $policy ]] || grep -qxF "$marker" "$policy"; then
  printf '#!/bin/sh\n%s\nexit 101\n' "$marker" >"$policy"
  chmod 755 "$policy"
  own_policy=1
fi
cleanup() { if ((own_policy)); then rm -f "$policy"; fi; }
trap cleanup EXIT

# An install interrupted earlier (Ctrl-C, a lost shell) leaves dpkg half
# done, and apt refuses to go on until this runs; on a clean machine it
# does nothing.
dpkg --configure -a
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

# ... and none stays enabled to start at the next boot (one the machine had
# before this run is left alone).
for p in "${missing[@]}"; do
  case $p in
    etcd-server) unit=etcd.service ;;
    prometheus) unit=prometheus.service ;;
    *) continue ;;
  esac
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    systemctl disable --now "$unit" >/dev/null 2>&1 || true
  fi
done
