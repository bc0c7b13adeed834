#!/usr/bin/env bash
# The firehose at rate: a fresh `socialite up` on the embedded default,
# READERS firehose readers following every post and one that reads
# nothing, while AUTHORS accounts post RATE posts/s for SECS seconds; and,
# first, the same posting with no reader, as the same run's baseline.
# Reports whether each reader got every post, post → read latency as the
# readers see it, the server's memory along the run, and the stalled reader
# cut off. Usage: scripts/firehose.sh [OUTDIR]
set -euo pipefail
out="${1:-firehose-reports}"
bin="${SOCIALITE:-target/release/socialite}"
readers="${READERS:-50}" authors="${AUTHORS:-1000}"
rate="${RATE:-5000}" secs="${SECS:-30}"
port="${PORT:-8097}"
url="http://127.0.0.1:$port"
mkdir -p "$out"
dir="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT

run() { # name readers stalled
  rm -rf "$dir/data"
  "$bin" up --rest-addr "127.0.0.1:$port" --grpc-addr 127.0.0.1:0 --data-dir "$dir/data" \
    > "$out/server-$1.log" 2>&1 &
  server=$!
  for _ in $(seq 1 120); do
    curl -fs "$url/readyz" > /dev/null 2>&1 && break
    sleep 0.5
  done
  "$bin" bench-firehose --url "$url" --api-key "$(cat "$dir/data/auth/admin-key")" \
    --readers "$2" --stalled "$3" --authors "$authors" --rate "$rate" --duration "$secs" \
    --report "$out/$1"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
}
run baseline 0 0
run firehose "$readers" 1
