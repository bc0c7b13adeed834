#!/usr/bin/env bash
# Every stored feed model on MongoDB, linked and embedded, on one workload:
# one network built once over REST, then for each model a server on the same
# database with that model's timeline collections emptied, the same bench
# load, and two figures: deliveries per MongoDB round trip (the worker's
# counters) and stored bytes per stored timeline (the BSON of its documents).
# Usage: MONGO=127.0.0.1:27017 scripts/mongo-models.sh [OUTDIR]   (MODELS="cache ..." picks models)
# Needs a MongoDB-compatible server at $MONGO and python3 with pymongo
# ($PYTHON, default python3).
set -euo pipefail
out="${1:-mongo-model-reports}"
mongo="${MONGO:?set MONGO=host:port}"
bin="${SOCIALITE:-target/release/socialite}"
py="${PYTHON:-python3}"
users="${USERS:-200}" follows="${FOLLOWS:-10}" secs="${SECS:-30}" rate="${RATE:-40}"
port="${PORT:-8097}"
db="models_$$"
uri="mongodb://$mongo/$db?directConnection=true"
url="http://127.0.0.1:$port"
mkdir -p "$out"
dir="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT

start() { # model, embed flag
  "$bin" up --rest-addr "127.0.0.1:$port" --grpc-addr 127.0.0.1:0 --data-dir "$dir/data" \
    --store "$uri" --event-log "embedded://$dir/log" --feed-model "$1" $2 \
    > "$out/server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 120); do
    curl -fs "$url/readyz" > /dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "the server did not start; see $out/server.log" >&2
  exit 1
}
stop() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }
metric() { # name: its value summed over label sets
  curl -fs "$url/metrics" -H "Authorization: Bearer $key" | awk -v m="$1" '$1 ~ "^"m"({|$)" { s += $2 } END { print s + 0 }'
}

start cache ""
key="$(cat "$dir/data/auth/admin-key")"
SOCIALITE_API_KEY="$key" "$py" scripts/rest-network.py --url "$url" --users "$users" \
  --follows "$follows" --zipf 0.8 --concurrency 4 >&2
stop

printf '%-22s %12s %12s %14s %10s %16s\n' model deliveries round_trips per_round_trip timelines bytes_per_timeline
for model in ${MODELS:-cache time-buckets sized-buckets}; do
  for embed in "" "--embed"; do
    name="$model${embed:+-embed}"
    # Every model starts with no stored timeline: all readers dormant.
    "$py" - "$mongo" "$db" <<'PY'
import sys, pymongo
db = pymongo.MongoClient(f"mongodb://{sys.argv[1]}/?directConnection=true")[sys.argv[2]]
for c in ["timeline_cache", "timed_buckets", "timed_buckets.heads", "sized_buckets", "sized_buckets.heads"]:
    db[c].delete_many({})
PY
    start "$model" "$embed"
    d0=$(metric socialite_fanout_deliveries_total); r0=$(metric socialite_timeline_delivery_round_trips_total)
    "$bin" bench --target rest --url "$url" --api-key "$key" --users "$users" --duration "$secs" \
      --rate "$rate" --concurrency 8 --active 0.5 --mix post=30,read=70 \
      --report "$out/$name" > /dev/null 2>&1
    sleep 5 # let fanout finish what the load left
    d1=$(metric socialite_fanout_deliveries_total); r1=$(metric socialite_timeline_delivery_round_trips_total)
    stop
    "$py" - "$mongo" "$db" "$name" "$((d1 - d0))" "$((r1 - r0))" <<'PY'
import sys, bson, pymongo
mongo, name, deliveries, trips = sys.argv[1], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
db = pymongo.MongoClient(f"mongodb://{mongo}/?directConnection=true")[sys.argv[2]]
model = name.replace("-embed", "")
colls = {"cache": ["timeline_cache"], "time-buckets": ["timed_buckets", "timed_buckets.heads"],
         "sized-buckets": ["sized_buckets", "sized_buckets.heads"]}[model]
size = sum(len(bson.encode(d)) for c in colls for d in db[c].find())
timelines = db[colls[-1]].count_documents({})
per = deliveries / trips if trips else 0
print(f"{name:<22} {deliveries:>12} {trips:>12} {per:>14.1f} {timelines:>10} {size / max(timelines, 1):>16.0f}")
PY
  done
done
