#!/usr/bin/env bash
# Cached first page of a home timeline over REST against nginx serving the
# same bytes as a static file: the same `wrk` client, the same minutes,
# alternated over ROUNDS rounds (the machine is noisy, so each round gives
# its own ratio).
#
#   scripts/rest-vs-nginx.sh DATA_DIR OUT_PREFIX
#
# DATA_DIR holds a loaded network (`socialite load`) and is used in place.
# Writes OUT_PREFIX.txt, OUT_PREFIX.json and OUT_PREFIX.svg. Installs
# Debian's nginx-light and wrk if they are missing.
#
# PAGES=N (default 1) serves the first pages of N different users (u1 to
# uN) instead of one, and nginx as many files of the same bytes, one per
# page; the same `wrk` asks them in turn (scripts/wrk-pages.lua).
#
# WORKERS=N gives each server N request threads (socialite's runtime,
# through tokio's TOKIO_WORKER_THREADS) or worker processes (nginx); the
# default, auto, is one per core for both. On a machine whose cores the
# client shares, one per core leaves more busy threads than cores, and the
# scheduler's time slices show in both servers' p99.
set -euo pipefail
data="$1"
out="$2"
bin="${SOCIALITE:-target/release/socialite}"
rounds="${ROUNDS:-2}"
user="${PAGE_USER:-u1}"
pages="${PAGES:-1}"
seconds="${SECONDS_PER_RUN:-15}"
workers="${WORKERS:-auto}"
rest=127.0.0.1:18080
static=127.0.0.1:18081
here="$(cd "$(dirname "$0")" && pwd)"

need() { # command, Debian package
  command -v "$1" >/dev/null && return
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get install -y "$2" >/dev/null 2>&1 ||
    { $sudo apt-get update >/dev/null && $sudo apt-get install -y "$2" >/dev/null; }
}
need nginx nginx-light
need wrk wrk
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

# Under /tmp, readable by all: nginx's workers run as another user, who
# may not enter $TMPDIR.
work="$(mktemp -d /tmp/rest-vs-nginx.XXXXXX)"
chmod 755 "$work"
trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; rm -rf "$work"' EXIT

threads=()
[ "$workers" = auto ] || threads=(TOKIO_WORKER_THREADS="$workers")
env "${threads[@]}" "$bin" up --data-dir "$data" --rest-addr "$rest" --grpc-addr 127.0.0.1:18051 2>"$work/up.log" &
until curl -sf "http://$rest/readyz" >/dev/null; do sleep 0.2; done
auth="Authorization: Bearer $(cat "$data/auth/admin-key")"
mkdir -p "$work/www"
keep_page() { # user, file: the user's first page, read from the cache, saved
  local page="http://$rest/users/$1/timeline?limit=50" source
  # The first read activates the user (a read-time merge); the second must
  # come from the cache, and is the page nginx will serve.
  curl -sf -H "$auth" "$page" >/dev/null
  source=$(curl -sf -D - -o "$2" -H "$auth" "$page" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-timeline-source"{print $2}')
  [ "$source" = cache ] || { echo "the page of $1 did not come from the cache ($source)" >&2; exit 1; }
}
if [ "$pages" = 1 ]; then
  keep_page "$user" "$work/www/page.json"
  bytes=$(wc -c <"$work/www/page.json")
  page="http://$rest/users/$user/timeline?limit=50"
  static_page="http://$static/page.json"
  turns=()
else
  for i in $(seq 1 "$pages"); do keep_page "u$i" "$work/www/u$i.json"; done
  bytes=$(( $(cat "$work"/www/u*.json | wc -c) / pages ))
  user="each of $pages users"
  page="http://$rest"
  static_page="http://$static"
  turns=(-s "$here/wrk-pages.lua")
fi

mkdir -p "$work/tmp"
cat >"$work/nginx.conf" <<EOF
worker_processes $workers;
daemon on;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/tmp;
  proxy_temp_path $work/tmp;
  fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp;
  scgi_temp_path $work/tmp;
  server {
    listen $static;
    root $work/www;
    default_type application/json;
  }
}
EOF
"$nginx_bin" -p "$work" -c "$work/nginx.conf"
for _ in $(seq 50); do curl -sf "http://$static/page.json" >/dev/null && break; sleep 0.1; done
first="$( [ "$pages" = 1 ] && echo page.json || echo u1.json)"
cmp -s "$work/www/$first" <(curl -sf "http://$static/$first") ||
  { echo "nginx does not serve the saved page (see $work/nginx-error.log)" >&2; exit 1; }

measure() { # name, url, extra wrk args...
  local name="$1" url="$2"; shift 2
  wrk -t1 -c32 -d5s "$@" "$url" >/dev/null # warm-up
  wrk -t1 -c32 -d"${seconds}s" --latency "$@" "$url" >"$work/$name.wrk"
  local rps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec:/{print $2}' "$work/$name.wrk")
  p50=$(awk '$1=="50%"{print $2}' "$work/$name.wrk")
  p99=$(awk '$1=="99%"{print $2}' "$work/$name.wrk")
  non2xx=$(awk '/Non-2xx/{print $NF}' "$work/$name.wrk")
  echo "$name $rps $p50 $p99 ${non2xx:-0}"
}

{
  for r in $(seq 1 "$rounds"); do
    PAGE_PATH="/users/u%d/timeline?limit=50" PAGES="$pages" measure "socialite-$r" "$page" -H "$auth" "${turns[@]}"
    PAGE_PATH="/u%d.json" PAGES="$pages" measure "nginx-$r" "$static_page" "${turns[@]}"
  done
} >"$work/results"

# The plot is drawn by matplotlib, from a virtual environment of its own.
plot_venv="$HOME/.cache/socialite/plot-venv"
if ! [ -x "$plot_venv/bin/python" ] || ! "$plot_venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  rm -rf "$plot_venv"
  python3 -m venv "$plot_venv"
  "$plot_venv/bin/pip" install --quiet matplotlib==3.9.2
fi
"$plot_venv/bin/python" "$here/bench-plot.py" rest-vs-nginx "$work/results" "$bytes" "$user" "$out" "$workers"
cat "$out.txt"
