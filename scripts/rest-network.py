#!/usr/bin/env python3
"""Creates a benchmark network through a running Socialite's REST API: users
u0..u{N-1}, each following F accounts picked with a Zipf skew (u0 the most
followed), as `socialite bench --target rest --users N` expects. For backends
that `socialite load` cannot write directly (MongoDB)."""
import argparse, concurrent.futures, os, random, time, urllib.request

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--url", default="http://127.0.0.1:8080")
p.add_argument("--users", type=int, default=1000)
p.add_argument("--follows", type=int, default=20)
p.add_argument("--zipf", type=float, default=1.0)
p.add_argument("--seed", type=int, default=42)
p.add_argument("--concurrency", type=int, default=16)
p.add_argument("--api-key", default=os.environ.get("SOCIALITE_API_KEY"),
               help="a server API key with the write scope (or SOCIALITE_API_KEY)")
a = p.parse_args()
headers = {"Authorization": f"Bearer {a.api_key}"} if a.api_key else {}

def put(path):
    req = urllib.request.Request(a.url + path, method="PUT", headers=headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()

rng = random.Random(a.seed)
weights = [1 / (i + 1) ** a.zipf for i in range(a.users)]
edges = []
for u in range(a.users):
    targets = set()
    for t in rng.choices(range(a.users), weights=weights, k=a.follows * 2):
        if t != u:
            targets.add(t)
        if len(targets) == a.follows:
            break
    edges += [(u, t) for t in targets]

started = time.time()
with concurrent.futures.ThreadPoolExecutor(a.concurrency) as pool:
    list(pool.map(lambda u: put(f"/users/u{u}"), range(a.users)))
    list(pool.map(lambda e: put(f"/users/u{e[0]}/following/u{e[1]}"), edges))
print(f"created {a.users} users and {len(edges)} follows in {time.time() - started:.1f}s")
