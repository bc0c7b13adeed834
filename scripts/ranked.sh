#!/usr/bin/env bash
# The "balanced page" row: first pages of 50 of the home timeline, newest
# first and then in the balanced order, over REST against `socialite up`
# with its defaults (authentication on), for the same 5,000 readers of a
# network whose readers each have about 1,200 candidates (`socialite load
# --users 100000 --follows 50 --posts-per-user 24`). Newest-first pages are
# read before (which also builds the readers' timelines) and after, so the
# balanced order is compared with latest measured in the same run.
#
# usage: ranked.sh DATA_DIR OUT_PREFIX   (SOCIALITE: the binary)
# Writes OUT_PREFIX-{latest-cold,latest,balanced,latest-again}.{json,txt,svg}
# and the summary OUT_PREFIX.{json,txt}.
set -euo pipefail
data="$1"; out="$2"
bin="${SOCIALITE:-target/release/socialite}"
"$bin" up --data-dir "$data" --rest-addr 127.0.0.1:18080 --grpc-addr 127.0.0.1:18051 2>"$out-server.log" >&2 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
url=http://127.0.0.1:18080
until curl -sf "$url/readyz" >/dev/null; do sleep 0.2; done
key="$(cat "$data/auth/admin-key")"

metric() { # the sum of a metric's samples on the server whose labels hold $2
  curl -sf -H "authorization: Bearer $key" "$url/metrics" |
    awk -v m="$1" -v l="${2:-}" '($1 == m || index($1, m "{") == 1) && index($1, l) { s += $2 } END { printf "%.0f\n", s }'
}
bench() {
  "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --active 0.05 --page 50 --concurrency 32 "$@" >/dev/null 2>>"$out-bench.log"
}
bench --mix read=100 --duration 30 --report "$out-latest-cold"
bench --mix read=100 --duration 30 --report "$out-latest"
late_before=$(metric socialite_ranked_timeline_reads_total 'served="deadline"')
bench --mix balanced=100 --duration 30 --report "$out-balanced"
late=$(( $(metric socialite_ranked_timeline_reads_total 'served="deadline"') - late_before ))
ranked=$(metric socialite_ranked_timeline_reads_total 'served="ranked"')
bench --mix read=100 --duration 30 --report "$out-latest-again"
sizes=$(curl -sf -H "authorization: Bearer $key" "$url/users/u1/timeline?order=balanced&limit=50&explain=true" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["posts"]), d["fallback"])')

python3 - "$out" "$late" "$ranked" "$sizes" <<'PY'
import json, sys
out, late, ranked, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
load = lambda name, op: json.load(open(f"{out}-{name}.json"))["ops"][op]
rows = {name: load(name, op) for name, op in
        [("latest-cold", "read"), ("latest", "read"), ("balanced", "balanced"), ("latest-again", "read")]}
summary = {name: {"per_s": r["per_second"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"], "errors": r["errors"]}
           for name, r in rows.items()}
base = min(rows["latest"]["p99_ms"], rows["latest-again"]["p99_ms"])
summary["balanced_p99_over_latest"] = round(rows["balanced"]["p99_ms"] / base, 2)
summary["fell_back_past_deadline"] = late
summary["ranked_first_pages"] = ranked
summary["sample_page"] = sizes
json.dump(summary, open(f"{out}.json", "w"), indent=2)
text = "".join(f"  {n}: {v['per_s']}/s p50 {v['p50_ms']} ms p99 {v['p99_ms']} ms, errors {v['errors']}\n"
               for n, v in summary.items() if isinstance(v, dict))
text = (f"balanced vs latest, first pages of 50, 5,000 readers (REST, closed loop, 32 connections)\n{text}"
        f"  balanced p99 / latest p99: {summary['balanced_p99_over_latest']}x; "
        f"{late} of {ranked + late} balanced pages fell back past the deadline; sample page (size, fallback): {sizes}\n")
open(f"{out}.txt", "w").write(text)
print(text, end="")
PY
