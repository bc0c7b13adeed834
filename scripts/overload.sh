#!/usr/bin/env bash
# The "overload" row: cached first pages of 5,000 users over REST, alone and
# then beside writers posting at three times the rate fanout sustains, for
# 120 s, against `socialite up` with its defaults (authentication on, the
# freshness target of 5 s defended by shedding, the read guard holding
# reads' p99). The rate fanout sustains is measured first in the same run:
# posts flat out for 30 s, shed down to what fanout delivers on time, with
# the read guard off.
#
# usage: overload.sh DATA_DIR OUT_PREFIX   (SOCIALITE: the binary)
# WRITERS_NICE=N runs the writers' client at that nice value: on a machine
# of two cores the client is a large share of the CPU, which in production
# is other machines'.
# READ_RATE=N offers the reads at N a second in both phases (an open
# loop) instead of as fast as 32 connections go (a closed loop, whose
# latency on a shared machine is its throughput's inverse: any CPU the
# writers take shows as read latency, however reads are favoured).
# Writes OUT_PREFIX-{reads-alone,capacity,reads,writes}.{json,txt,svg} and
# the summary OUT_PREFIX.{json,txt}.
set -euo pipefail
data="$1"; out="$2"
bin="${SOCIALITE:-target/release/socialite}"
url=http://127.0.0.1:18080
server=
up() { # starts `socialite up` with its defaults and ARGS
  "$bin" up --data-dir "$data" --rest-addr 127.0.0.1:18080 --grpc-addr 127.0.0.1:18051 "$@" 2>>"$out-server.log" >&2 &
  server=$!
  until curl -sf "$url/readyz" >/dev/null; do sleep 0.2; done
}
down() { kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; }
trap down EXIT

metric() { # the sum of a metric's samples on the server
  curl -sf -H "authorization: Bearer $key" "$url/metrics" |
    awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $2 } END { printf "%.0f\n", s }'
}
settle() { # until fanout has delivered what was taken
  until [ "$(metric socialite_log_backlog_events)" = 0 ]; do sleep 0.5; done
}
bench() {
  ${NICE:-} "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --active 0.05 "$@" >/dev/null 2>>"$out-bench.log"
}

# The capacity: fanout's alone, without the read guard (the writers'
# own freshness probes are reads, which it would hold writes back for).
# After the same reads as below, so it is measured as warm.
up --read-guard off
key="$(cat "$data/auth/admin-key")"
reads=(--mix read=100 --concurrency 32 ${READ_RATE:+--rate $READ_RATE})
bench "${reads[@]}" --duration 30 --report "$out-warm-up"
bench --mix post=100 --concurrency 64 --duration 30 --report "$out-capacity"
sustained=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['ops']['post']['per_second']))" "$out-capacity.json")
rate=$((3 * sustained))
settle
down
# Then the defaults: reads alone, and beside the writers. Every client
# here comes from one address, where in production the writers would come
# from many: the cap per address is raised to let them connect.
up --max-connections-per-ip 4000
bench "${reads[@]}" --duration 30 --report "$out-reads-alone"
rss_before=$(metric socialite_process_resident_memory_bytes)
shed_before=$(metric socialite_writes_shed_total)
bench "${reads[@]}" --duration 120 --report "$out-reads" &
readers=$!
# A write the read guard refuses is answered after 250 ms, so the writers
# need a connection for each quarter of their rate to offer it (at most
# 2,000); the probe posts as the most followed account beside them.
conns=$(( rate / 4 + 64 )); [ $conns -gt 2000 ] && conns=2000
NICE="${WRITERS_NICE:+nice -n $WRITERS_NICE}" bench --mix post=100 --rate "$rate" --concurrency "$conns" --duration 120 --report "$out-writes" &
writers=$!
peak=0
while kill -0 $writers 2>/dev/null; do
  rss=$(metric socialite_process_resident_memory_bytes)
  [ "$rss" -gt "$peak" ] && peak=$rss
  sleep 2
done
wait $readers $writers
rss_after=$(metric socialite_process_resident_memory_bytes)
shed=$(( $(metric socialite_writes_shed_total) - shed_before ))

python3 - "$out" "$sustained" "$rate" "$rss_before" "$peak" "$rss_after" "$shed" "${READ_RATE:-0}" <<'PY'
import json, sys
out, sustained, rate, before, peak, after, shed, read_rate = sys.argv[1], *map(int, sys.argv[2:])
load = lambda name: json.load(open(f"{out}-{name}.json"))
alone, reads, writes = load("reads-alone"), load("reads"), load("writes")
posts = writes["ops"].get("post", {})
fresh = writes["freshness"]
summary = {
    "sustained_posts_per_s": sustained,
    "writers_connections": writes["plan"]["concurrency"],
    "offered_posts_per_s": rate,
    "reads_offered_per_s": read_rate or "closed loop, 32 connections",
    "accepted_posts_per_s": posts.get("per_second"),
    "refused_posts": posts.get("refused"),
    "errors": sum(v.get("errors", 0) for v in list(writes["ops"].values()) + list(reads["ops"].values())),
    "shed_by_server": shed,
    "reads_alone": {"per_s": alone["ops"]["read"]["per_second"], "p99_ms": alone["ops"]["read"]["p99_ms"]},
    "reads_beside_writers": {"per_s": reads["ops"]["read"]["per_second"], "p99_ms": reads["ops"]["read"]["p99_ms"]},
    "read_p99_ratio": round(reads["ops"]["read"]["p99_ms"] / alone["ops"]["read"]["p99_ms"], 2),
    "post_visible_all_p99_ms": fresh["all_posts_p99_ms"],
    "post_visible_probe_p99_ms": fresh["top_author"]["p99_ms"],
    "probe_timeouts": fresh["top_author"]["timeouts"],
    "resident_bytes": {"before": before, "peak": peak, "after": after},
}
json.dump(summary, open(f"{out}.json", "w"), indent=2)
text = (
    f"overload: fanout sustains {sustained} posts/s; writers offered {rate}/s from {summary['writers_connections']} connections for 120 s beside readers\n"
    f"  posts accepted {summary['accepted_posts_per_s']}/s, refused {summary['refused_posts']} "
    f"(server shed {shed}), errors {summary['errors']}\n"
    f"  cached reads ({'offered %d/s' % read_rate if read_rate else 'closed loop'}) alone {summary['reads_alone']['per_s']}/s p99 {summary['reads_alone']['p99_ms']} ms; "
    f"beside writers {summary['reads_beside_writers']['per_s']}/s p99 {summary['reads_beside_writers']['p99_ms']} ms "
    f"({summary['read_p99_ratio']}x)\n"
    f"  post -> visible p99: all accepted posts {summary['post_visible_all_p99_ms']} ms, "
    f"probe {summary['post_visible_probe_p99_ms']} ms ({summary['probe_timeouts']} timeouts)\n"
    f"  resident memory: {before >> 20} MiB before, peak {peak >> 20} MiB, {after >> 20} MiB after\n"
)
open(f"{out}.txt", "w").write(text)
print(text, end="")
PY
