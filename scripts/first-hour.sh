#!/usr/bin/env bash
# A newcomer's first hour, replayed: makes a fresh Debian 12 root with
# debootstrap (from this machine's own apt sources), puts a clone of this
# repository in it, runs the README's run command there, waits for the
# daemon to be ready, runs every command the README shows for a running
# store (its "While it runs" block and its Python example), stops the
# daemon with Ctrl-C and prints how long each stage took and every
# command's exit status. Exits 0 only if everything passed.
#
#   sudo bash scripts/first-hour.sh [--keep] [ROOT_DIR]
#
# ROOT_DIR (default: a new directory under /var/tmp) must not exist or be
# empty; it is removed afterwards unless --keep. Needs root (debootstrap,
# chroot, mounts), the network to Debian's archive, and 10 minutes or so on
# two cores (9m17s here, with a fast mirror). Not part of CI; run it by
# hand before a release (docs/design/first-run.md).
#
# The daemon in the root serves on this machine's loopback (a chroot
# shares the network), so 127.0.0.1:50051 and :9003 must be free.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keep=0
root=""
for arg in "$@"; do
  case $arg in
    --keep) keep=1 ;;
    -h | --help)
      sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "first-hour: unknown option $arg (see --help)" >&2
      exit 2
      ;;
    *) root=$arg ;;
  esac
done

die() {
  echo "first-hour: $*" >&2
  exit 1
}
((EUID == 0)) || die "needs root (debootstrap, chroot and mounts)"
for port in 50051 9003; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "127.0.0.1:$port is in use on this machine; the daemon in the root would not start (stop what serves there)"
  fi
done

# This machine's own archive: the first deb822 source for bookworm, or the
# first bookworm line of sources.list.
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] || continue
  mirror=$(awk '/^URIs:/{u=$2} /^Suites:/ && / bookworm( |$)/{print u; exit}' "$f")
  [[ -n $mirror ]] && break
done
if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
  mirror=$(awk '$1=="deb" && $3=="bookworm"{print $2; exit}' /etc/apt/sources.list)
fi
[[ -n $mirror ]] || die "found no bookworm source in /etc/apt (sources.list or sources.list.d/*.sources)"

if [[ -z $root ]]; then
  root=$(mktemp -d /var/tmp/mooncake-tier-first-hour.XXXXXX)
elif [[ -e $root && -n $(ls -A "$root") ]]; then
  die "$root exists and is not empty"
fi
mkdir -p "$root"
root=$(cd "$root" && pwd)
log=$root.log
: >"$log"

started=$SECONDS
declare -a report=()
failed=0
note() {  # a stage or command, its status and how long it took
  local what=$1 rc=$2 took=$3 verdict=ok
  ((rc == 0)) || {
    verdict="FAILED (exit $rc)"
    failed=1
  }
  report+=("$(printf '%-72s %6ds  %s' "$what" "$took" "$verdict")")
  printf '[first-hour %dm%02ds] %s: %s\n' $(((SECONDS - started) / 60)) \
    $(((SECONDS - started) % 60)) "$what" "$verdict"
}

mounted=()
daemon=""
cleanup() {
  if [[ -n $daemon ]] && kill -0 "$daemon" 2>/dev/null; then
    kill -INT "$daemon" 2>/dev/null || true
    sleep 2
    kill -KILL "$daemon" 2>/dev/null || true
  fi
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2>/dev/null || true
  done
  if ((keep)); then
    echo "first-hour: kept $root (log: $log)"
  elif grep -q " $root/" /proc/mounts; then
    echo "first-hour: something is still mounted under $root; left it in place" >&2
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT

echo "[first-hour] root $root, archive $mirror, log $log"
if ! command -v debootstrap >/dev/null; then
  echo "[first-hour] installing debootstrap on this machine"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; } >>"$log" 2>&1 ||
    die "could not install debootstrap (see $log)"
fi

t=$SECONDS
rc=0
debootstrap --variant=minbase bookworm "$root" "$mirror" >>"$log" 2>&1 || rc=$?
note "debootstrap (minbase bookworm)" $rc $((SECONDS - t))
((rc == 0)) || die "debootstrap failed (see $log)"

# The machine's own apt sources, so the root installs from the same archive
# (and the same snapshot, if the machine pins one).
rm -f "$root/etc/apt/sources.list"
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
[[ -f /etc/apt/sources.list ]] && cp /etc/apt/sources.list "$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"

for m in proc sys dev dev/pts dev/shm; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount --rbind /sys "$root/sys" ;;
    dev/shm) mount -t tmpfs -o mode=1777 shm "$root/dev/shm" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounted+=("$root/$m")
done

git clone -q "$repo" "$root/root/mooncake-tier"
in_root() {  # runs a shell line in the root, from the repository's root,
  # for at most $limit seconds (600; 0: no limit, and the line's process
  # takes this one's pid)
  local go=(chroot "$root" /usr/bin/env -C /root/mooncake-tier HOME=/root
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$1")
  if [[ ${limit:-600} == 0 ]]; then
    exec "${go[@]}"
  fi
  timeout --foreground "${limit:-600}" "${go[@]}"
}

t=$SECONDS
rc=0
limit=10 in_root "bash scripts/run.sh --help" >>"$log" 2>&1 || rc=$?
note "bash scripts/run.sh --help (before anything is installed)" $rc $((SECONDS - t))

# The README's run command, in the background; the daemon replaces the
# script (exec), so this pid is the daemon's once it starts.
run_command=$(awk '/^```sh$/{getline; print; exit}' README.md)
[[ $run_command == "bash scripts/run.sh" ]] ||
  die "the README's first command is '$run_command', not 'bash scripts/run.sh'; update this script"
runlog=$root.run.log
(limit=0 in_root "exec $run_command") >"$runlog" 2>&1 &
daemon=$!
t=$SECONDS
echo "[first-hour] running '$run_command' in the root (output: $runlog)"
ready=0
shown=""
while kill -0 "$daemon" 2>/dev/null; do
  if grep -q '^mooncake-tierd standalone is serving' "$runlog"; then
    ready=1
    break
  fi
  # Progress: the run script's stage lines and ninja's step counter.
  line=$(grep -aoE '^\[run [0-9]+m[0-9]+s\] .*|^\[[0-9]+/[0-9]+\]' "$runlog" | tail -1 || true)
  if [[ -n $line && $line != "$shown" && ($line == \[run* || $((SECONDS % 60)) -lt 5) ]]; then
    echo "  $line"
    shown=$line
  fi
  sleep 5
done
if ((ready == 0)); then
  note "$run_command: ready daemon" 1 $((SECONDS - t))
  tail -30 "$runlog" >&2
  die "the run command stopped before the daemon was ready (see $runlog)"
fi
note "$run_command: ready daemon" 0 $((SECONDS - t))
# The run script's own split of that time.
stages=$(grep -aE '^\[run |^\[build\] .* took' "$runlog" || true)

# Every command of the README's "While it runs" block. `top` refreshes until
# Ctrl-C; here it draws two frames.
mapfile -t commands < <(awk '/^While it runs/{f=1} f && /^```sh$/{g=1; next} g && /^```$/{exit} g' README.md)
((${#commands[@]} > 0)) || die "found no commands after 'While it runs' in the README"
for c in "${commands[@]}"; do
  run=$c
  if [[ $c == *" top "* || $c == *" top" ]]; then
    run="${c%%#*} --iterations 2"
  fi
  t=$SECONDS
  rc=0
  echo "\$ $run" >>"$log"
  limit=60 in_root "$run" >>"$log" 2>&1 || rc=$?
  note "${c%%#*}" $rc $((SECONDS - t))
done

# The README's Python example, against the same daemon.
awk '/^```python$/{f=1; next} f && /^```$/{exit} f' README.md >"$root/root/readme_example.py"
t=$SECONDS
rc=0
in_root "PYTHONPATH=build-run/python /usr/bin/python3 /root/readme_example.py" >>"$log" 2>&1 || rc=$?
note "the README's Python example" $rc $((SECONDS - t))

# Ctrl-C stops it cleanly.
t=$SECONDS
kill -INT "$daemon"
rc=0
wait "$daemon" || rc=$?
daemon=""
note "Ctrl-C stops the daemon (exit status 0)" $rc $((SECONDS - t))

echo
echo "From a fresh root to a ready daemon, as the run script split it:"
sed 's/^/  /' <<<"$stages"
echo
printf '%-72s %7s  %s\n' "step" "took" "result"
printf '%s\n' "${report[@]}"
printf 'total %dm%02ds\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60))
if ((failed)); then
  echo "first-hour: some steps failed (details in $log and $runlog)" >&2
  keep=1
  exit 1
fi
echo "first-hour: every step passed"
