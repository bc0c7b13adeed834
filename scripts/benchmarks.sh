#!/usr/bin/env bash
# Reproduces BENCHMARKS.md: one run per row of the performance bar, each on a
# network generated for it, then the table of the bar from the reports.
# Reports land in OUTDIR (default ./bench-reports): NAME.txt, NAME.json and
# NAME.svg per run. Needs a release build (cargo build --release --bin
# socialite); installs nginx-light and wrk for the REST baseline if missing.
# About 45 minutes on the 2-core development machine. ROWS="merge million"
# runs only the named reports (freshness-1 runs all three freshness runs,
# hybrid-off both hybrid runs).
set -euo pipefail
out="${1:-bench-reports}"
bin="${SOCIALITE:-target/release/socialite}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$out"

net() { # name, load args...: a fresh copy of the network in $work/run
  local name="$1"; shift
  [ -d "$work/$name" ] || "$bin" load --data-dir "$work/$name" "$@" >&2
  rm -rf "$work/run" && cp -r "$work/$name" "$work/run"
}

up() { # starts `socialite up` on $work/run; sets $url and $key
  "$bin" up --data-dir "$work/run" --rest-addr 127.0.0.1:18080 --grpc-addr 127.0.0.1:18051 "$@" 2>/dev/null >&2 &
  url=http://127.0.0.1:18080
  until curl -sf "$url/readyz" >/dev/null; do sleep 0.2; done
  key="$(cat "$work/run/auth/admin-key")"
}

down() { kill %1; wait %1 2>/dev/null || true; }

want() { [ -z "${ROWS:-}" ] || [[ " $ROWS " == *" $1 "* ]]; }

zipf=(--users 100000 --follows 50 --posts-per-user 2)

# fanout-active: deliveries/s on the Zipf graph of 100 K users with every
# user active, posts only, flat out, hybrid off; its warm-up measures the
# memory that activating the 100,000 users added. Batches of 100 events keep
# the deliveries counter moving during the run (a batch of 1,000 posts by
# popular authors takes seconds).
if want fanout-active; then
  net zipf100k "${zipf[@]}"
  "$bin" bench --data-dir "$work/run" --users 100000 --mix post=100 --concurrency 64 --duration 30 --active 1.0 --hybrid off --fanout-batch 100 --report "$out/fanout-active" >/dev/null
fi

# rest-vs-nginx: a cached first page of 50 over REST against nginx serving
# the same bytes, alternated twice.
if want rest-vs-nginx; then
  net zipf100k "${zipf[@]}"
  SOCIALITE="$bin" "$here/rest-vs-nginx.sh" "$work/run" "$out/rest-vs-nginx" >/dev/null
fi

# rest-vs-nginx-many: the first pages of 5,000 different users over REST
# against nginx serving 5,000 files of the same bytes, asked in turn.
if want rest-vs-nginx-many; then
  net zipf100k "${zipf[@]}"
  PAGES=5000 SOCIALITE="$bin" "$here/rest-vs-nginx.sh" "$work/run" "$out/rest-vs-nginx-many" >/dev/null
fi

# merge: dormant users' read-time merge over about 1,000 followees.
if want merge; then
  net follows1k --users 5000 --follows 1100 --zipf 0 --posts-per-user 3
  "$bin" bench --data-dir "$work/run" --users 5000 --zipf 0 --feed-model read --mix read=100 --concurrency 2 --duration 20 --active 0.2 --report "$out/merge" >/dev/null
fi

# million: one post per second to 1,000,000 active followers, hybrid off.
if want million; then
  net star1m --users 1000000 --follows 1 --zipf 30 --posts-per-user 1
  "$bin" bench --data-dir "$work/run" --users 1000000 --zipf 30 --mix post=100 --rate 1 --concurrency 1 --duration 15 --active 1 --probe-interval-ms 5000 --hybrid off --report "$out/million" >/dev/null
fi

# million-hybrid: the same account with hybrid fanout at its default
# (`auto`): its posts are merged into its followers' pages at read time, and
# the probe, one of the million, measures post -> visible by reading.
if want million-hybrid; then
  net star1m --users 1000000 --follows 1 --zipf 30 --posts-per-user 1
  "$bin" bench --data-dir "$work/run" --users 1000000 --zipf 30 --mix post=100 --rate 1 --concurrency 1 --duration 15 --active 1 --probe-interval-ms 500 --report "$out/million-hybrid" >/dev/null
fi

# freshness-1..3: post -> visible at 5,000 posts/s with a median fanout of
# 100 (uniform graph), three runs.
if want freshness-1; then
  for i in 1 2 3; do
    net uniform50k --users 50000 --follows 100 --zipf 0 --posts-per-user 1
    "$bin" bench --data-dir "$work/run" --users 50000 --zipf 0 --mix post=100 --rate 5000 --concurrency 64 --duration 20 --active 0.5 --hybrid off --report "$out/freshness-$i" >/dev/null
  done
fi

# mixed-rest: the default mix over REST at 2,000 ops/s for 180 s against
# `socialite up` with its defaults (hybrid fanout `auto`), half the users active.
if want mixed-rest; then
  net zipf100k "${zipf[@]}"
  up
  "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --rate 2000 --concurrency 32 --duration 180 --report "$out/mixed-rest" >/dev/null
  down
fi

# Beyond the bar. http-reads: cached reads over REST with the tool's own client.
if want http-reads; then
  net zipf100k "${zipf[@]}"
  up
  "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --mix read=100 --concurrency 64 --duration 20 --active 0.05 --report "$out/http-reads" >/dev/null
  down
fi

# timelines: list, group and mention reads on the Zipf graph (lists `close`,
# groups of 1,000, a mention in every seed post), half the users active.
if want timelines; then
  net zipf100k "${zipf[@]}"
  "$bin" bench --data-dir "$work/run" --users 100000 --mix list=40,group=20,mention=40 --concurrency 32 --duration 20 --active 0.5 --report "$out/timelines" >/dev/null
fi

# hybrid-off, hybrid-2000: 20% posts and 80% reads flat out, every post
# fanned out, then authors of 2,000 followers or more merged at read time.
if want hybrid-off; then
  for mode in off 2000; do
    net zipf100k "${zipf[@]}"
    "$bin" bench --data-dir "$work/run" --users 100000 --mix post=20,read=80 --concurrency 32 --duration 20 --active 0.5 --hybrid "$mode" --report "$out/hybrid-$mode" >/dev/null
  done
fi

# reposts: deliveries/s on the Zipf graph with every user active when 30%
# of the writes are reposts (an author picked as posts pick them reposts one
# of the run's latest posts), against posts only, alternated, hybrid off.
if want reposts; then
  for run in 1-post=100 1-post=70,repost=30 2-post=100 2-post=70,repost=30; do
    mix="${run#*-}"
    net zipf100k "${zipf[@]}"
    name="reposts-${mix//[=,]/-}-${run%%-*}"
    "$bin" bench --data-dir "$work/run" --users 100000 --mix "$mix" --concurrency 64 --duration 20 --active 1.0 --hybrid off --fanout-batch 100 --report "$out/$name" >/dev/null
  done
fi

# notifications: the read cost of a notifications page over REST, against
# the home timeline's first page on the same server: a minute of likes,
# reposts and follows tells the active users, then the two reads alternate.
if want notifications; then
  net zipf100k "${zipf[@]}"
  up
  "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --mix post=20,like=50,repost=20,follow=10 --concurrency 32 --duration 60 --active 0.05 --report "$work/notify-load" >/dev/null
  for round in 1 2; do
    for mix in read=100 notifications=100; do
      "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --mix "$mix" --concurrency 32 --duration 20 --active 0.05 --report "$out/notifications-${mix%%=*}-$round" >/dev/null
    done
  done
  down
fi

# overload: cached reads of 5,000 users alone, then beside writers at three
# times the post rate fanout sustains (measured first) for 120 s, against
# `socialite up` with its defaults (scripts/overload.sh).
if want overload; then
  net zipf100k "${zipf[@]}"
  SOCIALITE="$bin" "$here/overload.sh" "$work/run" "$out/overload" >/dev/null
fi

# catch-up: 2,000 posts/s with the fanout worker stopped for the first
# 120 s (no shedding: the in-process engine's target is off), then started
# while the posts go on: its drain rate as a multiple of the ingest rate.
if want catch-up; then
  net zipf100k "${zipf[@]}"
  "$bin" bench --data-dir "$work/run" --users 100000 --mix post=100 --rate 2000 --concurrency 64 --duration 150 --active 0.5 --fanout-stopped 120 --report "$out/catch-up" >/dev/null
fi

# balanced: first pages of 50 in the balanced order against newest-first
# ones in the same run, on a network of about 1,200 candidates per reader
# (scripts/ranked.sh).
if want balanced; then
  net zipf24 --users 100000 --follows 50 --posts-per-user 24
  SOCIALITE="$bin" "$here/ranked.sh" "$work/run" "$out/balanced" >/dev/null
fi

# bulk: the network of 100,000 users x 50 follows (2 posts each) loaded
# into an empty data directory, exported, and the export imported into
# another: each step's time and rate (docs/export.md, "Runs of follows").
if want bulk; then
  rm -rf "$work/bulk-load" "$work/bulk-import"
  secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
  t0=$(date +%s.%N)
  "$bin" load --data-dir "$work/bulk-load" --users 100000 --follows 50 --posts-per-user 2 >&2
  t1=$(date +%s.%N)
  "$bin" export --data-dir "$work/bulk-load" --out "$work/bulk.jsonl" >&2
  t2=$(date +%s.%N)
  "$bin" import --data-dir "$work/bulk-import" "$work/bulk.jsonl" >&2
  t3=$(date +%s.%N)
  records=$(( $(wc -l < "$work/bulk.jsonl") - 2 ))
  printf '{"records": %d, "load_s": %s, "export_s": %s, "import_s": %s}\n' \
    "$records" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" "$(secs "$t2" "$t3")" > "$out/bulk.json"
  {
    echo "load: $(secs "$t0" "$t1") s"
    echo "export: $records records in $(secs "$t1" "$t2") s"
    echo "import: $records records in $(secs "$t2" "$t3") s"
  } > "$out/bulk.txt"
  rm -rf "$work/bulk-load" "$work/bulk-import" "$work/bulk.jsonl"
fi

# cold-start: the first pages of 5,000 users, each read once, then the
# server restarted: the same pages asked from the moment /readyz answers,
# the first 2 s, the next 10 s and 10 s more (scripts/cold-start.sh).
if want cold-start; then
  net zipf100k "${zipf[@]}"
  SOCIALITE="$bin" "$here/cold-start.sh" "$work/run" "$out/cold-start" >/dev/null
fi

# migrate-stop: the Zipf network moved to another data directory while it
# is posted to at 200 posts/s (scripts/migrate-bench.sh): how long writes
# were stopped at the switch-over, the whole move, and whether every post
# acknowledged during it is on the target.
if want migrate-stop; then
  net zipf100k "${zipf[@]}"
  SRC="$work/run" SOCIALITE="$bin" "$here/migrate-bench.sh" > "$work/migrate.log" 2>&1
  num() { grep -o "$1 [0-9.]*" "$work/migrate.log" | tail -1 | grep -o '[0-9.]*$'; }
  printf '{"write_stop_s": %s, "move_s": %s, "acked": %s, "missing": %s}\n' \
    "$(num 'writes stopped')" "$(num 'wall')" "$(num 'during the move:')" \
    "$(num 'missing on the target:')" > "$out/migrate-stop.json"
  grep -E "^(copied|tail|verify|after|writes stopped|verified|marked|moved in|wall|acknowledged)" \
    "$work/migrate.log" > "$out/migrate-stop.txt"
fi

# mongo-import-trips: an export of 500 users x 20 follows imported into
# MongoDB (MONGO=host:port, or the test stand-in's SOCIALITE_TEST_MONGODB)
# through a proxy that counts the round trips (scripts/mongo-import-trips.sh).
# Skipped when no MongoDB is named.
if want mongo-import-trips && [ -n "${MONGO:-${SOCIALITE_TEST_MONGODB:-}}" ]; then
  SOCIALITE="$bin" "$here/mongo-import-trips.sh" "$out/mongo-import-trips" >/dev/null
fi

# one-machine: a network of USERS (default ten million) x 100 follows loaded
# into the embedded default, then first pages of 100,000 readers alone and
# beside 1,000 posts/s (scripts/one-machine.sh). Run only when named in ROWS:
# it needs hours and, at ten million users, more disk than most machines
# have (BENCHMARKS.md, "One machine's reach").
if [[ " ${ROWS:-} " == *" one-machine "* ]]; then
  SOCIALITE="$bin" "$here/one-machine.sh" "$work/one-machine" "$out/one-machine" >/dev/null
fi

for r in overload catch-up balanced bulk migrate-stop cold-start mongo-import-trips one-machine-load one-machine-reads one-machine-beside one-machine-posts fanout-active rest-vs-nginx rest-vs-nginx-many merge million million-hybrid freshness-1 freshness-2 freshness-3 mixed-rest http-reads timelines hybrid-off hybrid-2000 reposts-post-100-1 reposts-post-70-repost-30-1 reposts-post-100-2 reposts-post-70-repost-30-2 notifications-read-1 notifications-notifications-1 notifications-read-2 notifications-notifications-2; do
  if [ -f "$out/$r.txt" ]; then echo "== $r"; cat "$out/$r.txt"; fi
done
echo
python3 "$here/bench-plot.py" table "$out"
