#!/usr/bin/env bash
# The "filtered page" row: first pages of 50 of the home timeline over REST
# against `socialite up` (authentication on), for 1,000 readers with 100
# keyword filters of 10 phrases each and 1,000 without, read by turns in the
# same run (`wrk`, 32 connections, a Lua script cycling through each set's
# users).
#
# The data comes from `socialite load --users 20000 --follows 50
# --posts-per-user 10 --filters 100`, which gives the filters to every
# second user (even ids): u0, u2, ... u1998 read with filters, u1, u3, ...
# u1999 without.
#
# Two phases: "kept" with no writes (a first page the server keeps whole
# is served again as long as nothing it depends on changed), then
# "rebuilt" with a trickle of posts (20 a second, `socialite bench`), each
# of which makes every kept page stale, so each read runs the read path
# and its filters.
#
# usage: filters.sh DATA_DIR OUT_PREFIX   (SOCIALITE: the binary)
# Writes OUT_PREFIX-{kept,rebuilt}-{plain,filtered}-N.wrk and the summary
# OUT_PREFIX.json.
set -euo pipefail
data="$1"; out="$2"
bin="${SOCIALITE:-target/release/socialite}"
seconds="${SECONDS_EACH:-20}"
"$bin" up --data-dir "$data" --rest-addr 127.0.0.1:18080 --grpc-addr 127.0.0.1:18051 2>"$out-server.log" >&2 &
server=$!
writer=""
trap 'kill $server $writer 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
url=http://127.0.0.1:18080
until curl -sf "$url/readyz" >/dev/null; do sleep 0.2; done
key="$(cat "$data/auth/admin-key")"

lua="$(mktemp --suffix .lua)"
cat >"$lua" <<'LUA'
-- Cycles through the users of `first, first + 2, ...` (1,000 of them).
local first = tonumber(os.getenv("FIRST"))
local i = 0
request = function()
  local u = first + 2 * (i % 1000)
  i = i + 1
  return wrk.format("GET", "/users/u" .. u .. "/timeline?limit=50")
end
LUA

read_set() { # name first seconds
  FIRST="$2" wrk -t1 -c32 -d"$3s" --latency -s "$lua" -H "authorization: Bearer $key" "$url" >"$out-$1.wrk"
}
# Every reader's timeline built, then each set warmed.
FIRST=0 wrk -t1 -c32 -d15s -s "$lua" -H "authorization: Bearer $key" "$url" >/dev/null
FIRST=1 wrk -t1 -c32 -d15s -s "$lua" -H "authorization: Bearer $key" "$url" >/dev/null
for round in 1 2; do
  read_set "kept-plain-$round" 1 "$seconds"
  read_set "kept-filtered-$round" 0 "$seconds"
done
"$bin" bench --target rest --url "$url" --api-key "$key" --users 20000 --mix post=100 \
  --active 0.001 --rate 20 --concurrency 2 --duration 100000 --report "$out-writer" >/dev/null 2>"$out-writer.log" &
writer=$!
sleep 5
for round in 1 2; do
  read_set "rebuilt-plain-$round" 1 "$seconds"
  read_set "rebuilt-filtered-$round" 0 "$seconds"
done
kill $writer 2>/dev/null || true

python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
def ms(v):
    n, unit = re.match(r"([\d.]+)(\w+)", v).groups()
    return float(n) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
def read(name):
    text = open(f"{out}-{name}.wrk").read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p = {k: ms(v) for k, v in re.findall(r"\s+(50|99)%\s+(\S+)", text)}
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return {"rps": rps, "p50_ms": p["50"], "p99_ms": p["99"], "non_2xx": int(bad.group(1)) if bad else 0}
summary = {}
for phase in ["kept", "rebuilt"]:
    rows = {f"{kind}-{r}": read(f"{phase}-{kind}-{r}") for kind in ["plain", "filtered"] for r in [1, 2]}
    best = lambda kind: min(rows[f"{kind}-{r}"]["p99_ms"] for r in [1, 2])
    summary[phase] = {"runs": rows, "p99_ratio": round(best("filtered") / best("plain"), 2)}
json.dump(summary, open(f"{out}.json", "w"), indent=1)
for phase, s in summary.items():
    print(phase, "p99 ratio (filtered / plain, best of 2 each):", s["p99_ratio"])
    for name, r in s["runs"].items():
        print(f"  {name:12} {r['rps']:9.0f}/s  p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  non-2xx {r['non_2xx']}")
PY
