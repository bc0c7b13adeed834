#!/usr/bin/env bash
# Fanout with 1, 2 and 4 worker processes over one Kafka log and one MongoDB
# store (docs/capacity.md, "Workers added, on this machine"). Each worker is
# a `socialite up` on the shared backends, all in one consumer group; the
# first also takes the posts. The network is built once over REST; each
# round has a fresh log (its own topic prefix) and posts at a fixed rate;
# every process's deliveries, round trips and CPU time are read before and
# after, and the MongoDB server's CPU time when it runs on this machine.
#
#   KAFKA=127.0.0.1:9092 MONGO=127.0.0.1:27017 scripts/worker-scaling.sh OUTDIR
#
# Needs a release build. USERS, FOLLOWS, RATE (posts/s), SECS and WORKERS
# ("1 2 4") change the run; MONGO_PID names the MongoDB server's process.
set -euo pipefail
bin="${SOCIALITE:-target/release/socialite}"
kafka="${KAFKA:?KAFKA=host:port of the Kafka broker}"
mongo="${MONGO:?MONGO=host:port of the MongoDB server}"
users=${USERS:-60} follows=${FOLLOWS:-10} rate=${RATE:-20} secs=${SECS:-30}
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
out="${1:-scaling-reports}"; mkdir -p "$out"
db="scaling$(date +%s)"
store="mongodb://$mongo/$db?directConnection=true"
start() {
  local dir="$work/$1-$2"; mkdir -p "$dir"
  "$bin" up --data-dir "$dir" --store "$store" \
    --event-log "kafka://$kafka?partitions=4&topic_prefix=$1" \
    --rest-addr "127.0.0.1:$((18100 + $2))" --grpc-addr "127.0.0.1:$((18200 + $2))" \
    --hybrid off --fanout-group "fanout-$1" 2>"$dir.log" >/dev/null &
  echo $! >"$dir.pid"
  for t in $(seq 1 240); do curl -sf "http://127.0.0.1:$((18100 + $2))/readyz" >/dev/null && return 0; sleep 0.5; done
  echo "not ready: $1-$2"; tail -5 "$dir.log"; return 1
}
scrape() {
  local i
  for i in $(seq 1 "$2"); do
    local key pid
    key="$(cat "$work/$1-$i/auth/admin-key")"; pid="$(cat "$work/$1-$i.pid")"
    curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$((18100 + i))/metrics" |
      awk -v i="$i" -v cpu="$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")" '
        /^socialite_fanout_deliveries_total / {d = $2}
        /^socialite_timeline_delivery_round_trips_total / {r = $2}
        /^socialite_log_backlog_events / {b = $2}
        END {printf "%s %s %s %s %s\n", i, d + 0, r + 0, b + 0, cpu}'
  done
}
spid="${MONGO_PID:-$(pgrep -f 'secantusd|mongod' | head -1)}"
mongo_cpu() { [ -n "$spid" ] && awk '{print ($14 + $15) / 100}' "/proc/$spid/stat" || echo 0; }
for n in ${WORKERS:-1 2 4}; do
  round="r$n$db"
  for i in $(seq 1 "$n"); do start "$round" "$i"; done
  key="$(cat "$work/$round-1/auth/admin-key")"
  if [ ! -e "$work/network" ]; then
    python3 "$here/rest-network.py" --url http://127.0.0.1:18101 --users "$users" --follows "$follows" --zipf 0 --concurrency 8 --api-key "$key" >&2
    touch "$work/network"
  fi
  sleep 5
  scrape "$round" "$n" >"$out/w$n.before"; s0=$(mongo_cpu)
  "$bin" bench --target rest --url http://127.0.0.1:18101 --api-key "$key" --users "$users" --zipf 0 --mix post=100 --rate "$rate" --concurrency 8 --duration "$secs" --active 1.0 --report "$out/w$n" >/dev/null 2>"$out/w$n.err" || { echo bench failed; tail -3 "$out/w$n.err"; }
  scrape "$round" "$n" >"$out/w$n.after"; s1=$(mongo_cpu)
  python3 - "$out/w$n" "$secs" "$s0" "$s1" <<'PY'
import sys
base, secs, s0, s1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = lambda f: {l.split()[0]: list(map(float, l.split()[1:])) for l in open(f)}
b, a = rows(base + ".before"), rows(base + ".after")
total = sum(a[k][0] - b[k][0] for k in a); trips = sum(a[k][1] - b[k][1] for k in a)
cpu = [a[k][3] - b[k][3] for k in sorted(a)]
print(f"{len(a)} worker processes: {total / secs:,.0f} deliveries/s, {trips / secs:,.1f} delivery round trips/s, backlog at end {max(v[2] for v in a.values()):,.0f}; CPU s/s per process " + ", ".join(f"{c / secs:.2f}" for c in cpu) + f"; the MongoDB server {(s1 - s0) / secs:.2f} CPU s/s (over the bench, its warm-up included)")
PY
  grep -E "^post |fanout:" "$out/w$n.txt" || true
  for i in $(seq 1 "$n"); do kill "$(cat "$work/$round-$i.pid")"; done
  sleep 2
done | tee "$out/summary.txt"
