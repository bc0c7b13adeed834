#!/usr/bin/env bash
# Measures `socialite migrate` (BENCHMARKS.md, "Migrate"): a running
# embedded server over the Zipf network, posted to at RATE posts/s, moved
# to TO (default: another embedded directory; a mongodb:// URI with LOG a
# kafka:// one for the production backends). Prints migrate's own lines,
# /usr/bin/time's wall time and peak memory, and what the post load had
# acknowledged, then checks every acknowledged post is on the target.
#   SRC=DIR   start from a copy of this data directory instead of loading
#   USERS=100000 FOLLOWS=50 POSTS=2 (per user, before) RATE=200 (posts/s during the move)
# Needs a release build (cargo build --release --bin socialite).
set -euo pipefail
bin="${SOCIALITE:-target/release/socialite}"
here="$(cd "$(dirname "$0")" && pwd)"
users="${USERS:-100000}"; follows="${FOLLOWS:-50}"; posts="${POSTS:-2}"; rate="${RATE:-200}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
if [ -n "${SRC:-}" ]; then
  cp -r "$SRC" "$work/src"
else
  "$bin" load --data-dir "$work/src" --users "$users" --follows "$follows" \
    --posts-per-user "$posts" >&2
fi
to="${TO:-embedded://$work/dst}"; log="${LOG:-embedded://}"
"$bin" up --data-dir "$work/src" --rest-addr 127.0.0.1:18090 --grpc-addr 127.0.0.1:18091 2>"$work/up.log" >&2 &
url=http://127.0.0.1:18090
until curl -sf "$url/readyz" >/dev/null; do sleep 0.2; done
key="$(cat "$work/src/auth/admin-key")"
python3 "$here/post-load.py" "$url" "$key" "$rate" "$users" "$work/acked" >"$work/load.json" &
load=$!
sleep 5
/usr/bin/time -f "wall %e s, peak RSS %M KiB" "$bin" migrate --from "embedded://$work/src" \
  --to "$to" --event-log "$log" --url "$url" --api-key "$key" --warm "${WARM:-0}"
wait "$load"
echo "post load: $(cat "$work/load.json")"
# Every post the load saw acknowledged is on the target.
kill %1 2>/dev/null || true; wait 2>/dev/null || true
"$bin" export --store "$to" --data-dir "$work/dst" --out "$work/target.jsonl" 2>/dev/null
missing=$(grep -cvxFf <(grep -o '"id":"[0-9a-f]\{16\}"' "$work/target.jsonl" | cut -d'"' -f4) "$work/acked" || true)
echo "acknowledged during the move: $(wc -l <"$work/acked"), missing on the target: $missing"
