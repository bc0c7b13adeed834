#!/usr/bin/env python3
"""Fault soak: the pipeline under steady load while faults are injected at
random; at the end every reader's timeline must equal the read-time oracle
(the posts of the accounts it follows, as their authors' own lists hold them,
newest first), every acknowledged post must be there unless it was deleted,
and no timeline may hold a post twice.

Topologies:
  embedded    `socialite up` on a data directory; faults: kill -9 and
              restart, SIGSTOP for a few seconds then SIGCONT, and, with
              --small-fs (a small mounted file system for the data
              directory), the disk filled for 10 s.
  production  a producer, two fanout workers and a timeline API over a Kafka
              stand-in (tansu) and a MongoDB stand-in (SecantusDB) that the
              soak starts itself; faults: kill -9 and restart of each
              process and of each stand-in, SIGSTOP/SIGCONT of a worker,
              and a slow network: the services reach each stand-in
              through a proxy that, for 10 s, holds every chunk it relays
              (MongoDB 300 ms each way; Kafka 100 ms). The workers'
              session timeout is 6 s: tansu holds a follower's join for
              3 s, and at a 3 s session it counted the follower gone while
              it waited, so each rejoin started the next rebalance and
              the group never settled (a SIGSTOP of 5 s left writes shed
              for minutes). A worker is stopped for 8 s, past the session.

After each fault the soak posts a marker and times how long until a
follower sees it (convergence). The report gives the faults survived, their
convergence times, what the clients saw (posts acknowledged, refused with
Retry-After, lost to a killed connection) and the curve of fanout's lag.
A failed run prints the last lines of each process's log and keeps the
logs beside the report (<report>-<topology>-logs/).

  scripts/soak.py --bin target/release --minutes 30 --report soak
  scripts/soak.py --bin DIR --minutes 2 --topology both    (CI's short form)

--bin holds socialite, socialite-producer, socialite-fanout-worker and
socialite-timeline-api. The production topology needs `tansu` (with its
SQLite engine) and SecantusDB's `secantusd-py` (--tansu, --secantus).
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from soak_faults import SlowProxy, fill_disk, free_port

AUTHORS = [f"soak-a{i}" for i in range(8)]
READERS = [f"soak-r{i}" for i in range(16)]
# How long a fault may take to converge before the soak calls it failed:
# tansu, the Kafka stand-in, keeps a dead member's partitions until the
# workers' watch moves them, and a rejoin can take minutes under churn.
CONVERGE_WITHIN = 300.0
# What the processes log (SOAK_RUST_LOG overrides): warnings, and the
# workers' group membership, which a stalled convergence is read from.
LOG_FILTER = "warn,socialite_kafka=info,socialite_core::worker=info,socialite_core::load=debug"


def wait_port(port, what, proc=None, within=120.0):
    deadline = time.time() + within
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{what} never listened on {port}")


class Proc:
    """A process the soak can kill, stop and start again with its settings."""

    def __init__(self, name, argv, env, log, port, cwd=None):
        self.name, self.argv, self.env, self.log, self.port = name, argv, env, log, port
        self.cwd, self.proc = cwd, None

    def start(self):
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(self.argv, env=self.env, stdout=out, stderr=out, cwd=self.cwd)
        wait_port(self.port, self.name, self.proc)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def pause(self, secs):
        self.proc.send_signal(signal.SIGSTOP)
        time.sleep(secs)
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


class Client:
    """REST calls as a well-behaved client: JSON in and out, the status."""

    def __init__(self, key):
        self.key = key

    def call(self, method, url, body=None, timeout=10):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("authorization", f"Bearer {self.key}")
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                text = r.read()
                if r.headers.get_content_type() != "application/json":
                    return r.status, text.decode(errors="replace"), r.headers
                return r.status, (json.loads(text) if text else None), r.headers
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                value = json.loads(text)
            except ValueError:
                value = text.decode(errors="replace")
            return e.code, value, e.headers
        except (OSError, urllib.error.URLError) as e:
            return None, str(e), {}

    def must(self, method, url, body=None, within=120.0):
        """Retries through faults and refusals until the call succeeds."""
        deadline = time.time() + within
        while True:
            status, value, headers = self.call(method, url, body)
            if status is not None and 200 <= status < 300:
                return value
            if time.time() > deadline:
                raise SystemExit(f"{method} {url}: {status} {value}")
            retry = headers.get("retry-after") if headers else None
            time.sleep(min(float(retry), 2.0) if retry else 0.3)

    def pages(self, url):
        """Every item of a paged list of posts, newest first."""
        ids, before = [], ""
        while True:
            page = self.must("GET", f"{url}?limit=200{before}")
            ids += [p["id"] for p in page["posts"]]
            cursor = page.get("next_cursor")
            if not cursor:
                return ids
            before = f"&before={cursor}"


class Topology:
    def __init__(self, args, work):
        self.args, self.work, self.procs = args, work, {}

    def proc(self, name, argv, port, env=None, cwd=None):
        full = dict(os.environ, RUST_LOG=os.environ.get("SOAK_RUST_LOG", LOG_FILTER), **(env or {}))
        p = Proc(name, argv, full, os.path.join(self.work, f"{name}.log"), port, cwd)
        self.procs[name] = p
        p.start()
        return p

    def stop(self):
        for p in reversed(list(self.procs.values())):
            p.stop()


class Embedded(Topology):
    name = "embedded"

    def start(self):
        rest, grpc = free_port(), free_port()
        # On a small file system of its own, when given one: its disk can
        # then be filled.
        self.disk = tempfile.mkdtemp(prefix="soak-", dir=self.args.small_fs) if self.args.small_fs else None
        data = os.path.join(self.disk or self.work, "data")
        self.proc("up", [f"{self.args.bin}/socialite", "up", "--data-dir", data,
                         "--rest-addr", f"127.0.0.1:{rest}", "--grpc-addr", f"127.0.0.1:{grpc}"], rest)
        self.key = open(os.path.join(data, "auth", "admin-key")).read().strip()
        self.writes = self.reads = self.metrics = f"http://127.0.0.1:{rest}"

    def stop(self):
        super().stop()
        if self.disk:
            shutil.rmtree(self.disk, ignore_errors=True)

    def faults(self):
        faults = [("kill -9 and restart socialite up", lambda: restart(self.procs["up"])),
                  ("SIGSTOP socialite up for 3 s", lambda: self.procs["up"].pause(3))]
        if self.disk:
            faults.append(("the disk full for 10 s", lambda: fill_disk(self.disk, 10)))
        return faults


class Production(Topology):
    name = "production"
    KEY = "slk_" + "5" * 64

    def start(self):
        a = self.args
        kafka, mongo = free_port(), free_port()
        tansu_dir = os.path.join(self.work, "tansu")
        os.makedirs(tansu_dir)
        # The services reach each stand-in through a proxy that can slow
        # down: tansu names its proxy as its address.
        self.slow_kafka = SlowProxy(kafka)
        self.proc("tansu", [a.tansu, "broker", "--listener-url", f"tcp://127.0.0.1:{kafka}",
                            "--advertised-listener-url", f"tcp://127.0.0.1:{self.slow_kafka.port}",
                            # (its SQLite path is taken from where it runs)
                            "--storage-engine", "sqlite://tansu.db"], kafka, cwd=tansu_dir)
        self.proc("secantus", [a.secantus, "--host", "127.0.0.1", "--port", str(mongo),
                               "--storage-path", os.path.join(self.work, "secantus"),
                               "--sync-on-commit"], mongo)
        self.slow_mongo = SlowProxy(mongo)
        digest = __import__("hashlib").sha256(self.KEY.encode()).hexdigest()
        env = {
            "SOCIALITE_API_KEYS": f"soak write,read,admin {digest}",
            "SOCIALITE_STORE": f"mongodb://127.0.0.1:{self.slow_mongo.port}/soak",
            # tansu keeps a dead member's partitions: the workers' watch
            # for unconsumed partitions moves them (Kafka needs none). It
            # waits 8 s: a worker back from a SIGSTOP or a rebalance can
            # take seconds before it commits (it reloads its follower
            # index), and at 3 s the other worker took that for a dead
            # member, rejoined, and so started the next rebalance.
            "SOCIALITE_EVENT_LOG": f"kafka://127.0.0.1:{self.slow_kafka.port}?partitions=4&topic_prefix=soak"
                                   "&stale_partition_rejoin_ms=8000&session_timeout_ms=6000",
            "SOCIALITE_FANOUT_GROUP": "soak-fanout",
        }
        ports = {n: free_port() for n in ["producer", "api", "worker-a", "worker-b"]}
        serve = lambda n, b, extra: self.proc(n, [f"{a.bin}/{b}", "--data-dir", os.path.join(self.work, n),
                                                  *extra], ports[n], env)
        serve("producer", "socialite-producer",
              ["--rest-addr", f"127.0.0.1:{ports['producer']}", "--grpc-addr", f"127.0.0.1:{free_port()}"])
        serve("api", "socialite-timeline-api",
              ["--rest-addr", f"127.0.0.1:{ports['api']}", "--grpc-addr", f"127.0.0.1:{free_port()}"])
        for w in ["worker-a", "worker-b"]:
            serve(w, "socialite-fanout-worker", ["--ops-addr", f"127.0.0.1:{ports[w]}"])
        self.key = self.KEY
        self.writes = f"http://127.0.0.1:{ports['producer']}"
        self.reads = f"http://127.0.0.1:{ports['api']}"
        self.metrics = self.writes

    def faults(self):
        p = self.procs
        return [(f"kill -9 and restart {n}", (lambda n=n: restart(p[n])))
                for n in ["producer", "api", "worker-a", "worker-b", "tansu", "secantus"]] + \
               [(f"SIGSTOP {n} for 8 s", (lambda n=n: p[n].pause(8))) for n in ["worker-a", "worker-b"]] + \
               [("MongoDB 300 ms slower each way for 10 s", lambda: self.slow_mongo.slow(0.3, 10)),
                ("Kafka 100 ms slower each way for 10 s", lambda: self.slow_kafka.slow(0.1, 10))]


def restart(p):
    p.kill()
    time.sleep(0.5)
    p.start()


class Load:
    """Posts at a steady rate, deletes a few, and records what was answered."""

    def __init__(self, topo, client, rng):
        self.t, self.c, self.rng = topo, client, rng
        self.acknowledged, self.deleted = [], set()
        self.refused = self.lost = self.errors = 0
        self.error_sample = []

    def post(self, author, message):
        status, value, headers = self.c.call("POST", f"{self.t.writes}/users/{author}/posts",
                                             {"message": message})
        if status == 201:
            self.acknowledged.append((author, value["id"]))
            return value["id"]
        if status in (429, 503) and headers.get("retry-after"):
            self.refused += 1
        elif status is None or status == 503:
            # A killed connection or a store down: not acknowledged, so
            # either outcome is allowed; the oracle reads what is stored.
            self.lost += 1
        else:
            self.errors += 1
            if len(self.error_sample) < 5:
                self.error_sample.append(f"POST {status} {value}")
        return None

    def step(self, n):
        if self.acknowledged and self.rng.random() < 0.05:
            _, victim = self.rng.choice(self.acknowledged)
            if victim not in self.deleted:
                status, _, _ = self.c.call("DELETE", f"{self.t.writes}/posts/{victim}")
                if status in (204, 404):
                    self.deleted.add(victim)
            return
        self.post(self.rng.choice(AUTHORS), f"soak post {n}")


def follows(reader_index):
    return [AUTHORS[(reader_index + k) % len(AUTHORS)] for k in range(3)]


def converge(topo, client, load, what):
    """Posts a marker and waits until a follower sees it: seconds taken."""
    started = time.time()
    author = AUTHORS[0]
    while True:
        marker = load.post(author, f"marker after {what}")
        if marker:
            break
        if time.time() - started > CONVERGE_WITHIN:
            return None
        time.sleep(0.3)
    reader = READERS[0]
    while time.time() - started < CONVERGE_WITHIN:
        if shows(client, f"{topo.reads}/users/{reader}/timeline", marker):
            return round(time.time() - started, 2)
        time.sleep(0.2)
    return None


def shows(client, url, post):
    """Whether the timeline at `url` holds `post`, paging down to it: a post
    delivered late may have newer ones above it by then (ids of equal
    length sort as their strings do)."""
    before = ""
    while True:
        status, page, _ = client.call("GET", f"{url}?limit=200{before}")
        if status != 200:
            return False
        ids = [p["id"] for p in page["posts"]]
        if post in ids:
            return True
        cursor = page.get("next_cursor")
        if not cursor or not ids or ids[-1] < post:
            return False
        before = f"&before={cursor}"


def sample_lag(topo, client):
    status, text, _ = client.call("GET", f"{topo.metrics}/metrics", timeout=2)
    if status != 200 or not isinstance(text, str):
        return None
    for line in text.splitlines():
        if line.startswith("socialite_fanout_lag_seconds "):
            return float(line.split()[1])
    return None


def check(topo, client, load):
    """Timelines against the oracle; retried while fanout catches up."""
    deadline = time.time() + CONVERGE_WITHIN
    while True:
        problems = []
        posts = {a: client.pages(f"{topo.reads}/users/{a}/posts") for a in AUTHORS}
        stored = {p for ids in posts.values() for p in ids}
        for _, pid in load.acknowledged:
            if pid not in stored and pid not in load.deleted:
                problems.append(f"acknowledged post {pid} is lost")
        for i, r in enumerate(READERS):
            want = sorted((p for a in follows(i) for p in posts[a]), reverse=True)
            got = client.pages(f"{topo.reads}/users/{r}/timeline")
            if len(got) != len(set(got)):
                problems.append(f"{r}: a post twice")
            if got != want:
                missing, extra = set(want) - set(got), set(got) - set(want)
                problems.append(f"{r}: {len(got)} posts, the oracle {len(want)}: "
                                f"{len(missing)} missing, {len(extra)} not the oracle's"
                                + (", out of order" if not missing and not extra else ""))
        if not problems or time.time() > deadline:
            return problems
        time.sleep(1)


def soak(topo, args, rng):
    client = Client(topo.key)
    for u in AUTHORS + READERS:
        client.must("PUT", f"{topo.writes}/users/{u}")
    for i, r in enumerate(READERS):
        for a in follows(i):
            client.must("PUT", f"{topo.writes}/users/{r}/following/{a}")
        client.must("GET", f"{topo.reads}/users/{r}/timeline?limit=1")
    load = Load(topo, Client(topo.key), random.Random(rng.random()))
    faults, lag = [], []
    end = time.time() + args.minutes * 60
    done = threading.Event()

    def writes():
        # Beside the faults, so that a kill lands while a write is in flight.
        n = 0
        while not done.is_set():
            load.step(n)
            n += 1
            time.sleep(1.0 / args.rate)

    writer = threading.Thread(target=writes)
    writer.start()
    next_fault = time.time() + args.fault_every * rng.uniform(0.5, 1.0)
    while time.time() < end:
        lag.append(sample_lag(topo, client))
        if time.time() >= next_fault:
            what, act = rng.choice([f for f in topo.faults() if args.only is None or args.only in f[0]])
            print(f"[{topo.name}] {what}", file=sys.stderr)
            act()
            took = converge(topo, client, load, what)
            print(f"[{topo.name}]   converged in {took} s", file=sys.stderr)
            faults.append({"fault": what, "converged_s": took})
            next_fault = time.time() + args.fault_every * rng.uniform(0.5, 1.5)
        time.sleep(1.0)
    done.set()
    writer.join()
    problems = check(topo, client, load)
    if any(f["converged_s"] is None for f in faults):
        problems.append("a fault never converged")
    if load.errors:
        problems.append(f"{load.errors} writes answered other than 201, 429/503 with Retry-After: {load.error_sample}")
    known = [x for x in lag if x is not None]
    return {
        "topology": topo.name,
        "minutes": args.minutes,
        "faults": faults,
        "posts_acknowledged": len(load.acknowledged),
        "posts_deleted": len(load.deleted),
        "writes_refused_with_retry_after": load.refused,
        "writes_cut_by_a_fault": load.lost,
        "lag_s": {"samples": len(known), "max": max(known, default=0.0), "curve": known},
        "problems": problems,
        "passed": not problems,
    }


def print_logs(topo, work, lines):
    for name in topo.procs:
        log = os.path.join(work, f"{name}.log")
        print(f"--- {name}.log (last lines)", file=sys.stderr)
        print("".join(open(log, errors="replace").readlines()[-lines:]), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--minutes", type=float, default=2.0, help="per topology")
    ap.add_argument("--topology", choices=["embedded", "production", "both"], default="both")
    ap.add_argument("--rate", type=int, default=20, help="writes per second")
    ap.add_argument("--fault-every", type=float, default=20.0, help="seconds, on average")
    ap.add_argument("--seed", type=int, default=46)
    ap.add_argument("--tansu", default="tansu")
    ap.add_argument("--secantus", default="secantusd-py")
    ap.add_argument("--report", default="soak-report")
    ap.add_argument("--small-fs", help="a small mounted file system for the embedded data directory, "
                                       "which adds the fault of a full disk")
    ap.add_argument("--only", help="inject only the faults whose name holds this text (to repeat one)")
    ap.add_argument("--keep-logs", action="store_true",
                    help="print the work directory (a failed run prints and keeps its processes' logs anyway)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    kinds = {"embedded": [Embedded], "production": [Production], "both": [Embedded, Production]}
    results = []
    for kind in kinds[args.topology]:
        with tempfile.TemporaryDirectory(prefix="soak-") as work:
            topo = kind(args, work)
            if args.keep_logs:
                print(f"logs in {work}", file=sys.stderr)
            try:
                topo.start()
                results.append(soak(topo, args, rng))
                if not results[-1]["passed"]:
                    # The work directory goes with this block: what the
                    # processes said is the only trace a CI run keeps.
                    print_logs(topo, work, 60)
                    keep = f"{args.report}-{topo.name}-logs"
                    shutil.rmtree(keep, ignore_errors=True)
                    shutil.copytree(work, keep, ignore=lambda _, names: [n for n in names if not n.endswith(".log")])
                    print(f"the processes' logs are kept in {keep}", file=sys.stderr)
            except BaseException:
                print_logs(topo, work, 15)
                raise
            finally:
                topo.stop()
    lines = []
    for r in results:
        times = [f["converged_s"] for f in r["faults"] if f["converged_s"] is not None]
        lines.append(
            f"{r['topology']}: {r['minutes']} min, {len(r['faults'])} faults survived "
            f"(convergence max {max(times, default=0)} s), {r['posts_acknowledged']} posts acknowledged, "
            f"{r['posts_deleted']} deleted, {r['writes_refused_with_retry_after']} refused with Retry-After, "
            f"{r['writes_cut_by_a_fault']} cut by a fault; lag max {r['lag_s']['max']:.1f} s; "
            + ("PASSED" if r["passed"] else f"FAILED: {r['problems']}"))
        for f in r["faults"]:
            lines.append(f"  {f['fault']}: converged in {f['converged_s']} s")
    text = "\n".join(lines) + "\n"
    json.dump(results, open(f"{args.report}.json", "w"), indent=2)
    open(f"{args.report}.txt", "w").write(text)
    print(text, end="")
    sys.exit(0 if all(r["passed"] for r in results) else 1)


if __name__ == "__main__":
    main()
