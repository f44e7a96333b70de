#!/usr/bin/env bash
# Installs the Debian 12 packages mooncake-tier builds, tests and runs with.
# Run as root on a fresh machine; safe to run again.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang make pkg-config git ca-certificates
  libabsl-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  liburing-dev libxxhash-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  prometheus-cpp-dev libcpp-httplib-dev libboost-dev libucx-dev ucx-utils
  libgtest-dev libgmock-dev libbenchmark-dev
  prometheus  # server and promtool, for the dashboard tests (they run their own)
  etcd-server etcd-client  # for the HA tests (they run their own, on loopback)
  python3 python3-dev pybind11-dev python3-pybind11 python3-pytest python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "[deps] all ${#packages[@]} packages present"
  exit 0
fi
echo "[deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

# The tests start their own servers. Packages this run installed do not
# leave a system service of theirs running or enabled (one the machine had
# before is left alone).
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
