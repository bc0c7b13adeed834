#!/usr/bin/env bash
# Round trips of an import into MongoDB (the row `mongo-import-trips`): a
# generated network (USERS users × FOLLOWS follows, POSTS posts each) is
# loaded into an embedded directory, exported, and imported into MONGO
# (host:port of a MongoDB server, default the test stand-in's) through a
# proxy that counts each message the importer sends
# (scripts/mongo_round_trips.py). Reports the round trips per 1,000
# records, by command, and the documents each carried.
#
#   scripts/mongo-import-trips.sh OUT_PREFIX
#
# Writes OUT_PREFIX.json (the counts) and OUT_PREFIX.txt (the table).
set -euo pipefail
out="$1"
bin="${SOCIALITE:-target/release/socialite}"
mongo="${MONGO:-${SOCIALITE_TEST_MONGODB:-127.0.0.1:27017}}"
users="${USERS:-2000}"
follows="${FOLLOWS:-20}"
posts="${POSTS:-1}"
batch="${BATCH:-500}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin" load --data-dir "$work/src" --users "$users" --follows "$follows" --posts-per-user "$posts" >/dev/null 2>&1
"$bin" export --data-dir "$work/src" --out "$work/export.jsonl" 2>/dev/null
records=$(wc -l <"$work/export.jsonl")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$here/mongo_round_trips.py" "$port" "$mongo" "$out.json" &
proxy=$!
sleep 0.5
db="trips_$(date +%s)_$$"
started=$(date +%s.%N)
"$bin" import --store "mongodb://127.0.0.1:$port/$db?directConnection=true" --batch "$batch" "$work/export.jsonl" >/dev/null 2>"$work/import.log" ||
  { cat "$work/import.log" >&2; exit 1; }
ended=$(date +%s.%N)
kill -TERM "$proxy"
wait "$proxy" || true
python3 - "$out" "$records" "$started" "$ended" "$users" "$follows" "$posts" "$batch" <<'PY'
import json, sys
out, records, t0, t1, users, follows, posts, batch = sys.argv[1:9]
records = int(records)
counts = json.load(open(out + ".json"))
total = sum(c["messages"] for c in counts.values())
lines = [
    f"import into MongoDB of a generated network ({users} users x {follows} follows, {posts} post each): "
    f"{records:,} records, --batch {batch}, {float(t1) - float(t0):.1f} s",
    f"round trips: {total:,}, {1000 * total / records:.1f} per 1,000 records",
    f"{'command':<34}{'round trips':>12}{'per 1,000':>11}{'documents':>11}{'per trip':>10}",
]
for name, c in sorted(counts.items(), key=lambda kv: -kv[1]["messages"]):
    per_trip = c["documents"] / c["messages"] if c["messages"] else 0
    lines.append(f"{name:<34}{c['messages']:>12,}{1000 * c['messages'] / records:>11.1f}"
                 f"{c['documents']:>11,}{per_trip:>10.1f}")
open(out + ".txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
