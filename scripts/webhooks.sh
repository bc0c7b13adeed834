#!/usr/bin/env bash
# Webhook isolation at rate: a fresh `socialite up` on the embedded default
# (allowing internal addresses: the receivers are on loopback), AUTHORS
# accounts posting RATE posts/s for SECS seconds, received by a good
# endpoint alone, then again beside a slow endpoint (two seconds a request)
# and a dead one. Reports the good endpoint's event → delivery latency in
# both runs, and their ratio. Usage: scripts/webhooks.sh [OUTDIR]
set -euo pipefail
out="${1:-webhook-reports}"
bin="${SOCIALITE:-target/release/socialite}"
authors="${AUTHORS:-1000}" rate="${RATE:-1000}" secs="${SECS:-30}" batch="${BATCH:-1}"
port="${PORT:-8098}"
url="http://127.0.0.1:$port"
mkdir -p "$out"
dir="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
"$bin" up --rest-addr "127.0.0.1:$port" --grpc-addr 127.0.0.1:0 --data-dir "$dir/data" \
  --webhook-allow-internal > "$out/server.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  curl -fs "$url/readyz" > /dev/null 2>&1 && break
  sleep 0.5
done
"$bin" bench-webhooks --url "$url" --api-key "$(cat "$dir/data/auth/admin-key")" \
  --authors "$authors" --rate "$rate" --duration "$secs" --batch "$batch" --report "$out/webhooks"
