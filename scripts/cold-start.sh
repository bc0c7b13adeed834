#!/usr/bin/env bash
# Reads of many users across a restart (BENCHMARKS.md, "Cold start"): the
# first pages of PAGES users (default 5,000, u1 to uPAGES) are read once,
# so that each user is active, then `socialite up` is stopped (SIGTERM)
# and started again. From the moment /readyz answers, `wrk` (one thread,
# 32 connections, scripts/wrk-pages.lua) asks the same pages in turn: the
# first WINDOW seconds (default 2), the next 10 s, then 10 s more (warm).
#
#   scripts/cold-start.sh DATA_DIR OUT_PREFIX
#
# DATA_DIR holds a loaded network (`socialite load`) and is used in place.
# Writes OUT_PREFIX.txt (wrk's lines per run) and OUT_PREFIX.json. Installs
# Debian's wrk if it is missing. Needs a release build.
set -euo pipefail
data="$1"
out="$2"
bin="${SOCIALITE:-target/release/socialite}"
pages="${PAGES:-5000}"
window="${WINDOW:-2}"
rest=127.0.0.1:18080
here="$(cd "$(dirname "$0")" && pwd)"
command -v wrk >/dev/null || { [ "$(id -u)" = 0 ] && apt-get install -y wrk >/dev/null 2>&1 || sudo apt-get install -y wrk >/dev/null; }
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

start() { # starts the server; sets $ready, the seconds until /readyz answered
  local t0 t1
  t0=$(date +%s.%N)
  "$bin" up --data-dir "$data" --rest-addr "$rest" --grpc-addr 127.0.0.1:18051 >>"$work/up.log" 2>&1 &
  until curl -sf "http://$rest/readyz" >/dev/null; do sleep 0.02; done
  t1=$(date +%s.%N)
  ready=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
stop() { kill -TERM %1; wait %1 2>/dev/null || true; }

start
auth="Authorization: Bearer $(cat "$data/auth/admin-key")"
for i in $(seq 1 "$pages"); do
  curl -sf -o /dev/null -H "$auth" "http://$rest/users/u$i/timeline?limit=50"
done
stop

start
run() { # name, seconds
  PAGE_PATH="/users/u%d/timeline?limit=50" PAGES="$pages" \
    wrk -t1 -c32 -d"$2s" --latency -H "$auth" -s "$here/wrk-pages.lua" "http://$rest" >"$work/$1.wrk"
  local rps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec:/{print $2}' "$work/$1.wrk")
  p50=$(awk '$1=="50%"{print $2}' "$work/$1.wrk")
  p99=$(awk '$1=="99%"{print $2}' "$work/$1.wrk")
  non2xx=$(awk '/Non-2xx/{print $NF}' "$work/$1.wrk")
  echo "$1: ${rps}/s, p50 $p50, p99 $p99, non-2xx ${non2xx:-0}"
  printf '"%s": {"rps": %s, "p50": "%s", "p99": "%s", "non2xx": %s}' "$1" "$rps" "$p50" "$p99" "${non2xx:-0}" >"$work/$1.json"
}
{
  echo "pages: $pages users' first pages of 50; ready ${ready} s after the start"
  run first "$window"
  run next 10
  run warm 10
} | tee "$out.txt"
stop
{
  printf '{"pages": %s, "ready_s": %s, ' "$pages" "$ready"
  printf '%s, %s, %s}\n' "$(cat "$work/first.json")" "$(cat "$work/next.json")" "$(cat "$work/warm.json")"
} >"$out.json"
