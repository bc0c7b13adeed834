#!/usr/bin/env bash
# Reproduces BENCHMARKS.md: one run per row of the performance bar, each on a
# network generated for it. Reports land in OUTDIR (default ./bench-reports).
# Needs a release build: cargo build --release --bin socialite
set -euo pipefail
out="${1:-bench-reports}"
bin="${SOCIALITE:-target/release/socialite}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$out"

net() { # name, load args...
  local name="$1"; shift
  [ -d "$work/$name" ] || "$bin" load --data-dir "$work/$name" "$@" >&2
  rm -rf "$work/run" && cp -r "$work/$name" "$work/run"
}

# 1 and 6: sustained fanout on a Zipf graph of 100 K users, cache model, posts
# only, flat out; the warm-up activates 50 K users and measures their caches.
net zipf100k --users 100000 --follows 50 --posts-per-user 2
"$bin" bench --data-dir "$work/run" --users 100000 --mix post=100 --concurrency 64 --duration 20 --active 0.5 --hybrid off --report "$out/fanout" >/dev/null

# 2: one post to 1,000,000 followers: a million users who all follow u0, all active.
net star1m --users 1000000 --follows 1 --zipf 30 --posts-per-user 1
"$bin" bench --data-dir "$work/run" --users 1000000 --zipf 30 --mix post=100 --rate 1 --concurrency 1 --duration 15 --active 1 --probe-interval-ms 5000 --hybrid off --report "$out/million" >/dev/null

# 3: post -> visible at 5,000 posts/s with a median fanout of 100 (uniform graph).
net uniform50k --users 50000 --follows 100 --zipf 0 --posts-per-user 1
"$bin" bench --data-dir "$work/run" --users 50000 --zipf 0 --mix post=100 --rate 5000 --concurrency 64 --duration 20 --active 0.5 --hybrid off --report "$out/freshness" >/dev/null

# 4: cached timeline reads over REST on loopback, 50 entries, against `socialite up`.
rm -rf "$work/run" && cp -r "$work/zipf100k" "$work/run"
"$bin" up --data-dir "$work/run" --rest-addr 127.0.0.1:18080 --grpc-addr 127.0.0.1:18051 2>/dev/null &
until curl -sf http://127.0.0.1:18080/readyz >/dev/null; do sleep 0.2; done
"$bin" bench --target rest --url http://127.0.0.1:18080 --api-key "$(cat "$work/run/auth/admin-key")" --users 100000 --mix read=100 --concurrency 64 --duration 20 --active 0.05 --report "$out/http-reads" >/dev/null
kill %1; wait %1 2>/dev/null || true

# 5: dormant users' read-time merge over about 1,000 followees (fanout on read).
net follows1k --users 5000 --follows 1100 --zipf 0 --posts-per-user 3
"$bin" bench --data-dir "$work/run" --users 5000 --zipf 0 --feed-model read --mix read=100 --concurrency 2 --duration 20 --active 0.2 --report "$out/merge" >/dev/null

# 7: list, group and mention reads on the Zipf graph: each user files their
# first and about one in five followees under the list `close`, groups hold
# about 1,000 users, and every seed post mentions a user. First pages of 50,
# half the users active (their home caches warm; lists, groups and mentions
# are read cold first, then from what the first read stored).
net zipf100k --users 100000 --follows 50 --posts-per-user 2
"$bin" bench --data-dir "$work/run" --users 100000 --mix list=40,group=20,mention=40 --concurrency 32 --duration 20 --active 0.5 --report "$out/timelines" >/dev/null

# 8: hybrid fanout on the Zipf graph: the same mixed load (20% posts, 80%
# reads, half the users active) with every post fanned out, then with
# authors of 2,000 followers or more merged at read time. The reports give
# the deliveries, the read latency (most readers follow the largest
# accounts) and the probe's post -> visible for the most followed account.
for mode in off 2000; do
  net zipf100k --users 100000 --follows 50 --posts-per-user 2
  "$bin" bench --data-dir "$work/run" --users 100000 --mix post=20,read=80 --concurrency 32 --duration 20 --active 0.5 --hybrid "$mode" --report "$out/hybrid-$mode" >/dev/null
done

for r in fanout million freshness http-reads merge timelines hybrid-off hybrid-2000; do echo "== $r"; cat "$out/$r.txt"; done
