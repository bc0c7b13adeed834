#!/usr/bin/env python3
"""Hostile load against a running Socialite server, loopback only.

Opens --idle connections that never send a byte (spread over source
addresses 127.0.0.10.., --per-source each, in worker processes so no
process runs out of descriptors) and --streams live streams with one user
token, while a prober on 127.0.0.2 asks /healthz every 50 ms. Prints the
probe latencies (p50, p99, max, failures), how the server answered the
streams, and the server's resident memory (all, and anonymous: the heap)
before, at the peak and after everything closed (from /proc, given --pid). Every loop is bounded in count
and time; nothing but 127.0.0.0/8 is contacted.

    scripts/hostile-load.py --url http://127.0.0.1:8080 --pid PID \
        --token "$(socialite token alice)" --user alice
"""
import argparse
import asyncio
import json
import multiprocessing
import resource
import sys
import time


def rss_kib(pid, field="VmRSS"):
    """Resident memory; `RssAnon` is the heap and stacks alone, without the
    pages of the executable that the flood's code paths touched."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def hold_idle(host, port, source, count, hold_s):
    """Opens `count` connections from `source` that send nothing; returns
    how many opened and how many the server had closed by the end."""
    conns = []
    for _ in range(count):
        try:
            r, w = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=(source, 0)), 5)
            conns.append((r, w))
        except (OSError, asyncio.TimeoutError):
            pass
    await asyncio.sleep(hold_s)
    closed = 0
    for r, w in conns:
        if r.at_eof() or w.is_closing():
            closed += 1
        else:
            try:
                data = await asyncio.wait_for(r.read(1), 0.001)
                closed += data == b""
            except asyncio.TimeoutError:
                pass
            except OSError:
                closed += 1
        w.close()
    return len(conns), closed


def idle_worker(args):
    host, port, sources, per_source, hold_s = args
    raise_fd_limit()

    async def run():
        done = await asyncio.gather(
            *(hold_idle(host, port, s, per_source, hold_s) for s in sources))
        return [sum(x) for x in zip(*done)]

    return asyncio.run(run())


async def probe(host, port, stop, latencies, failures):
    req = b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    while not stop.is_set():
        start = time.perf_counter()
        try:
            r, w = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=("127.0.0.2", 0)), 1)
            w.write(req)
            head = await asyncio.wait_for(r.readline(), 1)
            w.close()
            if b" 200 " in head:
                latencies.append((time.perf_counter() - start) * 1000)
            else:
                failures.append(head.decode(errors="replace").strip())
        except (OSError, asyncio.TimeoutError) as e:
            failures.append(type(e).__name__)
        await asyncio.sleep(0.05)


async def streams(host, port, token, user, count, hold_s):
    """Opens `count` SSE streams with one token; returns the statuses."""
    statuses, conns = {}, []
    req = (f"GET /users/{user}/timeline/stream HTTP/1.1\r\nhost: x\r\n"
           f"authorization: Bearer {token}\r\n\r\n").encode()
    for _ in range(count):
        try:
            r, w = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=("127.0.0.3", 0)), 5)
            w.write(req)
            head = await asyncio.wait_for(r.readline(), 5)
            code = head.split()[1].decode() if len(head.split()) > 1 else "?"
            statuses[code] = statuses.get(code, 0) + 1
            conns.append(w)
        except (OSError, asyncio.TimeoutError) as e:
            statuses[type(e).__name__] = statuses.get(type(e).__name__, 0) + 1
    await asyncio.sleep(hold_s)
    for w in conns:
        w.close()
    return statuses


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else None


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--idle", type=int, default=20000)
    ap.add_argument("--per-source", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--hold", type=float, default=10.0)
    a = ap.parse_args()
    hostport = a.url.split("//", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    port = int(port)
    if not host.startswith("127."):
        sys.exit("loopback only")
    raise_fd_limit()
    before = rss_kib(a.pid)
    anon_before = rss_kib(a.pid, "RssAnon")
    stop, lat, fails = asyncio.Event(), [], []
    prober = asyncio.create_task(probe(host, port, stop, lat, fails))
    nsources = max(1, a.idle // a.per_source)
    sources = [f"127.0.0.{10 + i}" for i in range(nsources)]
    chunks = [sources[i::a.workers] for i in range(a.workers)]
    started = time.time()
    peak = [before]

    async def watch_memory():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kib(a.pid))
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch_memory())
    with multiprocessing.Pool(a.workers) as pool:
        idle = pool.map_async(idle_worker, [(host, port, c, a.per_source, a.hold)
                                            for c in chunks if c])
        st = await streams(host, port, a.token, a.user, a.streams, a.hold)
        while not idle.ready():
            await asyncio.sleep(0.2)
        opened = sum(r[0] for r in idle.get())
        closed = sum(r[1] for r in idle.get())
    await asyncio.sleep(10)  # let the server drop what it held
    stop.set()
    await prober
    await watcher
    after = rss_kib(a.pid)
    anon_after = rss_kib(a.pid, "RssAnon")
    report = {
        "idle_connections_opened": opened,
        "idle_connections_closed_by_server": closed,
        "streams": st,
        "healthz_probes": len(lat) + len(fails),
        "healthz_failures": len(fails),
        "healthz_ms": {"p50": pct(lat, 0.5), "p99": pct(lat, 0.99), "max": max(lat) if lat else None},
        "rss_kib": {"before": before, "peak": peak[0], "after": after},
        "rss_after_vs_before": round(after / before, 3) if before else None,
        "anon_kib": {"before": anon_before, "after": anon_after},
        "anon_after_vs_before": round(anon_after / anon_before, 3) if anon_before else None,
        "seconds": round(time.time() - started, 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
