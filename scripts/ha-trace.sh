#!/usr/bin/env bash
# The store as an operator runs it in cluster mode, under an engine's load,
# across a kill -9 of its leader: one etcd, three `mooncake-tierd master
# --etcd` processes and two nodes (each with a DRAM and an SSD tier sized so
# the trace overflows DRAM), the request trace replayed against the three
# masters by `mooncake-tier-bench trace --master A,B,C`, and the leader
# killed while the replay runs. Prints the replay's result line (put_failed,
# wrong_bytes, hit ratio), how long the cluster was without a serving
# leader, and each master's role afterwards.
#
#   bash scripts/ha-trace.sh [TRACE]        (default: the shared sample trace)
# Environment: BUILD_DIR (build), REQUESTS (1500), SPEED (4: four times the
# trace's pace), KILL_AFTER (seconds into the replay, 20; 0: no kill, a
# baseline for the hit ratio), DRAM_MIB (64 per node), SSD_MIB (512 per
# node), KEEP=1 keeps the scratch directory and logs. The replay's offline
# simulations are given the two nodes' sizes together.
# Expects a built tree (scripts/build.sh) and etcd installed
# (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
trace=${1:-../shared/traces/synthetic_trace.jsonl}
requests=${REQUESTS:-1500}
speed=${SPEED:-4}
kill_after=${KILL_AFTER:-20}
dram_mib=${DRAM_MIB:-64}
ssd_mib=${SSD_MIB:-512}
tierd=$build/daemon/mooncake-tierd
tierctl=$build/cli/mooncake-tierctl
bench=$build/bench/mooncake-tier-bench
for f in "$tierd" "$tierctl" "$bench" /usr/bin/etcd "$trace"; do
  [[ -e $f ]] || { echo "ha-trace: $f is missing" >&2; exit 2; }
done

scratch=$(mktemp -d /tmp/ha-trace.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ ${KEEP:-0} != 0 ]]; then
    echo "ha-trace: kept $scratch" >&2
  else
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT

# Free loopback ports, one block per run.
base=$((20000 + RANDOM % 20000))
etcd_client=127.0.0.1:$base
etcd_peer=127.0.0.1:$((base + 1))
masters=()
admins=()
for i in 0 1 2; do
  masters+=("127.0.0.1:$((base + 10 + i))")
  admins+=("127.0.0.1:$((base + 20 + i))")
done
master_list=$(IFS=,; echo "${masters[*]}")

log() { echo "[ha-trace $(date +%T)] $*" >&2; }

/usr/bin/etcd --name=ha-trace --data-dir="$scratch/etcd" \
  --listen-client-urls="http://$etcd_client" \
  --advertise-client-urls="http://$etcd_client" \
  --listen-peer-urls="http://$etcd_peer" \
  --initial-advertise-peer-urls="http://$etcd_peer" \
  --initial-cluster="ha-trace=http://$etcd_peer" \
  --logger=zap --log-level=error >"$scratch/etcd.log" 2>&1 &
pids+=($!)

master_pids=()
for i in 0 1 2; do
  "$tierd" master --listen "${masters[$i]}" --admin-listen "${admins[$i]}" \
    --etcd "$etcd_client" --cluster ha-trace \
    >"$scratch/master$i.log" 2>&1 &
  pids+=($!)
  master_pids+=($!)
done
for n in 0 1; do
  "$tierd" node --master "$master_list" --name "node$n" \
    --admin-listen 127.0.0.1:0 --dram "${dram_mib}MiB" \
    --ssd-dir "$scratch/node$n-ssd" --ssd-capacity "${ssd_mib}MiB" \
    >"$scratch/node$n.log" 2>&1 &
  pids+=($!)
done

# The leader: the master whose status says so.
role_of() {
  curl -s --max-time 1 "http://${admins[$1]}/api/v1/status" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ha"]["role"])' \
      2>/dev/null || echo down
}
leader_index() {
  for i in 0 1 2; do
    [[ $(role_of "$i") == leader ]] && { echo "$i"; return; }
  done
  echo -1
}
deadline=$((SECONDS + 60))
while :; do
  leader=$(leader_index)
  if ((leader >= 0)); then
    nodes=$(curl -s --max-time 1 "http://${admins[$leader]}/api/v1/status" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"]["alive"])' \
        2>/dev/null || echo 0)
    ((nodes >= 2)) && break
  fi
  ((SECONDS < deadline)) || { log "no leader with both nodes after 60 s"; exit 1; }
  sleep 0.2
done
log "leader: master$leader (${masters[$leader]}), both nodes registered"

log "replaying $requests requests of $trace at ${speed}x; leader killed after ${kill_after}s"
"$bench" --json trace --trace "$trace" --master "$master_list" \
  --requests "$requests" --speed "$speed" --dram "$((2 * dram_mib))MiB" \
  --ssd-capacity "$((2 * ssd_mib))MiB" >"$scratch/trace.json" 2>"$scratch/trace.err" &
bench_pid=$!
pids+=($bench_pid)

new_leader=$leader
if ((kill_after > 0)); then
  sleep "$kill_after"
  if ! kill -0 "$bench_pid" 2>/dev/null; then
    log "the replay ended before the kill; raise REQUESTS or lower SPEED"
    exit 1
  fi
  killed_at=$(date +%s.%N)
  kill -9 "${master_pids[$leader]}"
  wait "${master_pids[$leader]}" 2>/dev/null || true
  log "killed master$leader with SIGKILL"
  new_leader=-1
  while :; do
    for i in 0 1 2; do
      ((i == leader)) && continue
      [[ $(role_of "$i") == leader ]] && new_leader=$i
    done
    ((new_leader >= 0)) && break
    sleep 0.05
  done
  elected_at=$(date +%s.%N)
  log "new leader: master$new_leader, $(python3 -c "print(round(($elected_at-$killed_at)*1000))") ms after the kill"
else
  log "KILL_AFTER=0: no kill (the baseline to compare hit ratios with)"
fi

wait "$bench_pid" || { log "the replay failed:"; cat "$scratch/trace.err" >&2; exit 1; }
cat "$scratch/trace.json"
for i in 0 1 2; do
  log "master$i: $(role_of "$i")"
done
"$tierctl" --endpoint "http://${admins[$new_leader]}" status >&2 || true
python3 - "$scratch/trace.json" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
bad = [r for r in rows if r.get("put_failed", 0) or r.get("wrong_bytes", 0)]
if bad:
    print("ha-trace: puts failed or bytes wrong across the failover", file=sys.stderr)
    sys.exit(1)
EOF
