#!/usr/bin/env bash
# One machine's reach (the row `one-machine`): a generated network of USERS
# users, each following FOLLOWS accounts (Zipf), loaded into the embedded
# default; then `socialite up` on it, with ACTIVE distinct users reading
# their first pages over REST, first alone and then beside posts at RATE a
# second.
#
#   scripts/one-machine.sh DATA_DIR OUT_PREFIX
#
# DATA_DIR is loaded if it holds no store yet (and kept: a load of millions
# of users takes long), then used in place. The defaults are the issue's
# target (10,000,000 users × 100 follows; 100,000 readers; 1,000 posts/s);
# BENCHMARKS.md says what a store of that size needs in disk.
#
# Writes OUT_PREFIX-load.txt (time, rate, peak memory and disk of the load),
# OUT_PREFIX-reads.{txt,json,svg} (reads alone) and
# OUT_PREFIX-beside.{txt,json,svg} (reads at READ_RATE, default 2,000 a
# second, beside the posts) and OUT_PREFIX-posts.{txt,json,svg} (the posts:
# post -> visible).
set -euo pipefail
data="$1"
out="$2"
bin="${SOCIALITE:-target/release/socialite}"
users="${USERS:-10000000}"
follows="${FOLLOWS:-100}"
active="${ACTIVE:-100000}"
rate="${RATE:-1000}"
read_rate="${READ_RATE:-2000}"
seconds="${SECONDS_PER_RUN:-60}"

peak_kib() { awk '/VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

if [ ! -f "$data/content.redb" ]; then
  started=$(date +%s.%N)
  "$bin" load --data-dir "$data" --users "$users" --follows "$follows" --posts-per-user 1 \
    >"$out-load.log" 2>&1 &
  loader=$!
  peak=0
  while kill -0 "$loader" 2>/dev/null; do
    p=$(peak_kib "$loader")
    [ "${p:-0}" -gt "$peak" ] && peak=$p
    sleep 5
  done
  wait "$loader"
  ended=$(date +%s.%N)
  bytes=$(du -sb "$data" | cut -f1)
  python3 - "$out-load.txt" "$users" "$follows" "$started" "$ended" "$peak" "$bytes" "$out-load.log" <<'PY'
import sys
path, users, follows, t0, t1, peak_kib, size, log = sys.argv[1:9]
users, follows = int(users), int(follows)
secs = float(t1) - float(t0)
lines = open(log).read().strip()
with open(path, "w") as f:
    f.write(f"load of {users:,} users x {follows} follows (Zipf), 1 post each: {secs:.0f} s\n")
    f.write(lines + "\n")
    f.write(f"peak resident memory (sampled every 5 s): {int(peak_kib) / 1024:.0f} MiB\n")
    f.write(f"store on disk: {int(size) / 2**30:.2f} GiB, {int(size) / users:.0f} bytes per user\n")
print(open(path).read(), end="")
PY
fi

# UP_ARGS: more options of `socialite up` (e.g. `--read-guard off`: by
# default, writes beside reads are admitted at the rate the reads' latency
# allows, docs/overload.md).
# shellcheck disable=SC2086
"$bin" up --data-dir "$data" --rest-addr 127.0.0.1:18080 --grpc-addr 127.0.0.1:18051 ${UP_ARGS:-} 2>"$out-server.log" >&2 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
url=http://127.0.0.1:18080
until curl -sf "$url/readyz" >/dev/null; do sleep 0.5; done
key="$(cat "$data/auth/admin-key")"
share=$(python3 -c "print($active / $users)")
bench() {
  "$bin" bench --target rest --url "$url" --api-key "$key" --users "$users" --follows "$follows" \
    --active "$share" --page 50 --concurrency 32 --duration "$seconds" "$@" >/dev/null 2>>"$out-bench.log"
}
# The first run's warm-up activates the readers (each first read is a
# read-time merge that fills their cache); the pages measured are cached.
bench --mix read=100 --report "$out-reads"
# Posts at RATE a second by the whole network, beside the same readers at
# READ_RATE pages a second (flat-out reads would take the cores the posts'
# fanout needs, and the overload guard would refuse posts: that is the
# overload row's measure, not this one's).
bench --mix read=100 --rate "$read_rate" --report "$out-beside" &
beside=$!
"$bin" bench --target rest --url "$url" --api-key "$key" --users "$users" --follows "$follows" \
  --active "$share" --mix post=100 --rate "$rate" --concurrency 64 --duration "$seconds" \
  --report "$out-posts" >/dev/null 2>>"$out-bench.log"
wait $beside
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$server/status")
echo "server resident memory after the runs: $((rss / 1024)) MiB" | tee "$out-server-memory.txt"
cat "$out-reads.txt" "$out-beside.txt" "$out-posts.txt"
