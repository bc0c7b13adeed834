#!/usr/bin/env bash
# Runs the same workload on every feed model, linked and embedded, each on a
# fresh copy of one generated network, and prints one summary line per run.
# Usage: scripts/compare-models.sh [OUTDIR]   (reports land in OUTDIR, default ./model-reports)
set -euo pipefail
out="${1:-model-reports}"
users="${USERS:-10000}"
secs="${SECS:-20}"
rate="${RATE:-2000}"
bin="${SOCIALITE:-target/release/socialite}"
mkdir -p "$out"
base="$(mktemp -d)"
trap 'rm -rf "$base"' EXIT
"$bin" load --data-dir "$base/network" --users "$users" --follows 50 --posts-per-user 5 >&2
for model in read time-buckets sized-buckets cache; do
  for embed in "" "--embed"; do
    name="$model${embed:+-embed}"
    rm -rf "$base/run" && cp -r "$base/network" "$base/run"
    "$bin" bench --data-dir "$base/run" --users "$users" --feed-model "$model" $embed \
      --time-bucket-secs 1 --bucket-size 50 --bucket-retention 30 \
      --duration "$secs" --rate "$rate" --concurrency 32 --active 0.5 \
      --mix post=20,read=70,scroll=10 --report "$out/$name" > /dev/null 2>&1
    python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ops, st = r["ops"], r.get("stored_timelines") or {}
print(f"{sys.argv[2]:<20} post p99 {ops['post']['p99_ms']:>7} ms  read p50 {ops['read']['p50_ms']:>6} p99 {ops['read']['p99_ms']:>7} ms"
      f"  scroll p99 {ops['scroll']['p99_ms']:>7} ms  deliveries/s {r['fanout']['deliveries_per_s']:>9}"
      f"  stored {st.get('entries', 0):>8} entries {st.get('documents', 0):>7} docs {st.get('serialized_bytes', 0)/1e6:>7.1f} MB"
      f"  peak {r['memory']['peak_resident_bytes']/2**20:>6.0f} MiB")
PY
  done
done
