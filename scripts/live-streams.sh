#!/usr/bin/env bash
# Live timelines at scale: a fresh `socialite up` on the embedded default,
# STREAMS readers each following FOLLOWS of AUTHORS accounts, every reader
# holding an SSE stream of its home timeline open while the authors post
# RATE posts/s for SECS seconds. Reports post → pushed latency as the
# clients see it and the server's resident memory per open stream.
# Usage: scripts/live-streams.sh [OUTDIR]   (RUNS=3 repeats it)
set -euo pipefail
out="${1:-live-reports}"
bin="${SOCIALITE:-target/release/socialite}"
streams="${STREAMS:-10000}" authors="${AUTHORS:-1000}" follows="${FOLLOWS:-5}"
rate="${RATE:-1000}" secs="${SECS:-20}" runs="${RUNS:-1}"
port="${PORT:-8098}"
url="http://127.0.0.1:$port"
mkdir -p "$out"
dir="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
# Each stream is a socket on both sides.
ulimit -n "$(( streams * 2 + 1024 ))" 2>/dev/null || ulimit -n "$(ulimit -Hn)"

for run in $(seq 1 "$runs"); do
  rm -rf "$dir/data"
  "$bin" up --rest-addr "127.0.0.1:$port" --grpc-addr 127.0.0.1:0 --data-dir "$dir/data" \
    > "$out/server-$run.log" 2>&1 &
  server=$!
  for _ in $(seq 1 120); do
    curl -fs "$url/readyz" > /dev/null 2>&1 && break
    sleep 0.5
  done
  "$bin" bench-live --url "$url" --api-key "$(cat "$dir/data/auth/admin-key")" \
    --streams "$streams" --authors "$authors" --follows "$follows" \
    --rate "$rate" --duration "$secs" --seed "$run" --report "$out/live-$run"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done
