#!/usr/bin/env bash
# The "balanced page" row: first pages of 50 of the home timeline, newest
# first and then in the balanced order, over REST against `socialite up`
# with its defaults (authentication on), for the same 5,000 readers of a
# network whose readers each have about 1,200 candidates (`socialite load
# --users 100000 --follows 50 --posts-per-user 24`). Newest-first pages are
# read before (which also builds the readers' timelines) and after, so the
# balanced order is compared with latest measured in the same run.
#
# Each order is read by 32 connections, then by 2 (where a ranking does
# not wait behind others), and how each balanced page was served (ranked,
# or newest first past the deadline, while every ranking slot was taken,
# or after an error) is counted from the server's metrics.
#
# usage: ranked.sh DATA_DIR OUT_PREFIX   (SOCIALITE: the binary)
# Writes OUT_PREFIX-{latest-cold,latest,balanced,latest-2,balanced-2,latest-again}.{json,txt,svg}
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
  "$bin" bench --target rest --url "$url" --api-key "$key" --users 100000 --active 0.05 --page 50 "$@" >/dev/null 2>>"$out-bench.log"
}
served() { # balanced first pages served so far, by how: ranked kept extended deadline busy error
  for how in ranked kept extended deadline busy error; do metric socialite_ranked_timeline_reads_total "served=\"$how\""; done | paste -sd' '
}
bench --mix read=100 --concurrency 32 --duration 30 --report "$out-latest-cold"
bench --mix read=100 --concurrency 32 --duration 30 --report "$out-latest"
before=$(served)
bench --mix balanced=100 --concurrency 32 --duration 30 --report "$out-balanced"
after32=$(served)
bench --mix read=100 --concurrency 2 --duration 30 --report "$out-latest-2"
bench --mix balanced=100 --concurrency 2 --duration 30 --report "$out-balanced-2"
after2=$(served)
bench --mix read=100 --concurrency 32 --duration 30 --report "$out-latest-again"
sizes=$(curl -sf -H "authorization: Bearer $key" "$url/users/u1/timeline?order=balanced&limit=50&explain=true" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["posts"]), d["fallback"])')

python3 - "$out" "$before" "$after32" "$after2" "$sizes" <<'PY'
import json, sys
out, before, after32, after2, sizes = sys.argv[1:6]
hows = ["ranked", "kept", "extended", "deadline", "busy", "error"]
nums = lambda t: [int(x) for x in t.split()]
b, a32, a2 = nums(before), nums(after32), nums(after2)
served32 = dict(zip(hows, [y - x for x, y in zip(b, a32)]))
served2 = dict(zip(hows, [y - x for x, y in zip(a32, a2)]))
load = lambda name, op: json.load(open(f"{out}-{name}.json"))["ops"][op]
phases = [("latest-cold", "read"), ("latest", "read"), ("balanced", "balanced"),
          ("latest-2", "read"), ("balanced-2", "balanced"), ("latest-again", "read")]
rows = {name: load(name, op) for name, op in phases}
summary = {name: {"per_s": r["per_second"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"], "errors": r["errors"]}
           for name, r in rows.items()}
summary["balanced_served_32"] = served32
summary["balanced_served_2"] = served2
summary["p99_ratio_32"] = round(rows["balanced"]["p99_ms"] / rows["latest"]["p99_ms"], 2)
summary["p99_ratio_2"] = round(rows["balanced-2"]["p99_ms"] / rows["latest-2"]["p99_ms"], 2)
summary["sample_page"] = sizes
json.dump(summary, open(f"{out}.json", "w"), indent=2)
text = "".join(f"  {n}: {v['per_s']}/s p50 {v['p50_ms']} ms p99 {v['p99_ms']} ms, errors {v['errors']}\n"
               for n, v in summary.items() if isinstance(v, dict) and "per_s" in v)
text = (f"balanced vs latest, first pages of 50, 5,000 readers (REST; 32 connections, then 2)\n{text}"
        f"  balanced served (32 connections): {served32}\n  balanced served (2 connections): {served2}\n"
        f"  p99 balanced / latest: {summary['p99_ratio_32']}x at 32 connections, {summary['p99_ratio_2']}x at 2; "
        f"sample page (size, fallback): {sizes}\n")
open(f"{out}.txt", "w").write(text)
print(text, end="")
PY
