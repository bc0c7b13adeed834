#!/usr/bin/env python3
"""Reports of scripts/benchmarks.sh that the bench tool does not write itself.

  bench-plot.py rest-vs-nginx RESULTS BYTES USER OUT_PREFIX [WORKERS]
      RESULTS: lines "name requests_per_s p50 p99 non_2xx" from wrk runs
      named socialite-N and nginx-N; WORKERS: each server's request
      threads or processes ("auto": one per core); writes
      OUT_PREFIX.{txt,json,svg} (the plot with matplotlib: run it with a
      Python that has it, as rest-vs-nginx.sh does).
  bench-plot.py table OUTDIR
      Prints the performance bar of BENCHMARKS.md from the reports in OUTDIR.
"""
import json
import os
import sys


def ms(text):
    """A wrk latency ("850.00us", "1.20ms", "1.02s") in milliseconds."""
    for unit, scale in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def bars_svg(path, title, rounds):
    """Requests per second of both servers in each round, as grouped bars
    with a labelled axis, drawn by matplotlib."""
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    labels = [f"round {r['round']}\n(socialite {r['share']:.0%} of nginx)" for r in rounds]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 1.1 * len(rounds)))
    height = 0.38
    for i, (name, colour) in enumerate((("socialite", "#3b6fb6"), ("nginx", "#2e9d57"))):
        values = [r[name]["requests_per_s"] for r in rounds]
        ys = [k + (i - 0.5) * height for k in range(len(rounds))]
        bars = ax.barh(ys, values, height=height, color=colour, label=name)
        ax.bar_label(bars, labels=[f"{v:,.0f}/s" for v in values], padding=3, fontsize=8)
    ax.set_yticks(range(len(rounds)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("requests per second (wrk -t1 -c32, same page, same minutes)")
    ax.set_title(title)
    ax.margins(x=0.15)
    ax.xaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:,.0f}"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)


def rest_vs_nginx(results, size, user, prefix, workers="auto"):
    runs = {}
    for line in open(results):
        name, rps, p50, p99, non2xx = line.split()
        runs[name] = {
            "requests_per_s": float(rps),
            "p50_ms": ms(p50),
            "p99_ms": ms(p99),
            "non_2xx": int(non2xx),
        }
    rounds = []
    n = 1
    while f"socialite-{n}" in runs:
        s, g = runs[f"socialite-{n}"], runs[f"nginx-{n}"]
        rounds.append({"round": n, "socialite": s, "nginx": g,
                       "share": s["requests_per_s"] / g["requests_per_s"]})
        n += 1
    report = {"page_bytes": int(size), "user": user, "client": "wrk -t1 -c32",
              "server_workers": workers, "rounds": rounds}
    with open(prefix + ".json", "w") as f:
        json.dump(report, f, indent=2)
    lines = [f"cached first page of {user} ({size} bytes), wrk -t1 -c32, server workers: {workers}",
             "round  socialite/s  p50 ms  p99 ms   nginx/s  p50 ms  p99 ms  share  non-2xx"]
    for r in rounds:
        s, g = r["socialite"], r["nginx"]
        lines.append(f"{r['round']:>5} {s['requests_per_s']:>12,.0f} {s['p50_ms']:>7.2f} {s['p99_ms']:>7.2f}"
                     f" {g['requests_per_s']:>9,.0f} {g['p50_ms']:>7.2f} {g['p99_ms']:>7.2f}"
                     f" {r['share']:>5.0%} {s['non_2xx'] + g['non_2xx']:>8}")
    with open(prefix + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    bars_svg(prefix + ".svg", f"cached first page of {user}, {size} bytes, over HTTP", rounds)


def load(outdir, name):
    path = os.path.join(outdir, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


def table(outdir):
    rows = []
    fan = load(outdir, "fanout-active")
    if fan:
        rows.append(("deliveries/s, Zipf 100 K × 50, every user active, posts only, hybrid off", "≥ 12,000,000",
                     f"{fan['fanout']['deliveries_per_s']:,.0f}", "fanout-active"))
        m = fan["warm_up_memory"]
        added = (m["resident_after_bytes"] - m["resident_before_bytes"]) / 2**20
        rows.append(("memory per activated user (full 50-entry caches), 100,000 users activated", "≤ 1,000 bytes",
                     f"the second 50,000: {m['marginal_bytes_per_user']:,.0f} bytes per user; all 100,000: "
                     f"{added:,.2f} MiB ({m['bytes_per_activated_user']:,.0f} bytes per user)", "fanout-active"))
    for name, what, bar in [("rest-vs-nginx", "cached first page of 50 over REST, share of nginx", "≥ 80%, p99 ≤ 2 ms"),
                            ("rest-vs-nginx-many", "cached first pages of 5,000 users over REST, share of nginx "
                             "on 5,000 files", "≥ 100%, p99 ≤ 2 ms")]:
        rvn = load(outdir, name)
        if rvn:
            shares = ", ".join(f"{r['share']:.0%}" for r in rvn["rounds"])
            p99 = ", ".join(f"{r['socialite']['p99_ms']:.2f}" for r in rvn["rounds"])
            rows.append((what, bar, f"{shares} of nginx; p99 {p99} ms", name))
    merge = load(outdir, "merge")
    if merge:
        r = merge["ops"]["read"]
        rows.append(("read-time merge over 1,000 followees", "p99 ≤ 2 ms",
                     f"p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms", "merge"))
    million = load(outdir, "million")
    if million:
        f = million["freshness"]
        rows.append(("post to 1,000,000 active followers, visible to all (hybrid off)", "p99 ≤ 0.5 s",
                     f"p50 {f['all_posts_p50_ms'] / 1000:.2f} s, p99 {f['all_posts_p99_ms'] / 1000:.2f} s", "million"))
    hybrid = load(outdir, "million-hybrid")
    if hybrid:
        f = hybrid["freshness"]["top_author"]
        rows.append(("the same, hybrid fanout `auto` (merged at read time)", "p99 ≤ 50 ms",
                     f"a follower sees it: p50 {f.get('p50_ms', float('nan')):.2f} ms, "
                     f"p99 {f.get('p99_ms', float('nan')):.1f} ms ({f.get('samples', 0)} probes)", "million-hybrid"))
    fresh = [load(outdir, f"freshness-{i}") for i in (1, 2, 3)]
    if all(fresh):
        p99 = ", ".join(f"{r['freshness']['all_posts_p99_ms']:.1f}" for r in fresh)
        rows.append(("post → visible p99 at 5,000 posts/s, median fanout 100", "≤ 20 ms, 3 runs of 3",
                     f"p99 {p99} ms", "freshness-1..3"))
    mixed = load(outdir, "mixed-rest")
    if mixed:
        reads = mixed["ops"].get("read", {})
        f = mixed["freshness"]
        errors = sum(o.get("errors", 0) for o in mixed["ops"].values())
        rows.append(("mixed REST load, 2,000 ops/s, 180 s", "reads p99 ≤ 10 ms; post → visible p99 ≤ 2 s; 0 errors",
                     f"reads p99 {reads.get('p99_ms', float('nan')):.1f} ms; post → visible p99 "
                     f"{f['all_posts_p99_ms'] / 1000:.2f} s, most followed p99 "
                     f"{f['top_author'].get('p99_ms', float('nan')):.1f} ms "
                     f"({f['top_author'].get('samples', 0)} probes, {f['top_author'].get('timeouts', 0)} timeouts); "
                     f"{errors} errors", "mixed-rest"))
    ranked = load(outdir, "balanced")
    if ranked:
        two, latest = ranked["balanced-2"], ranked["latest-2"]
        rows.append(("balanced first page of 50 from ~1,200 candidates", "p99 ≤ 10 ms, ≤ 2x latest",
                     f"p99 {two['p99_ms']:.1f} ms at 2 connections ({ranked['p99_ratio_2']}x latest's "
                     f"{latest['p99_ms']:.2f} ms); served {ranked['balanced_served_2']}", "balanced"))
    bulk = load(outdir, "bulk")
    if bulk:
        rate = bulk["records"] / bulk["import_s"]
        rows.append(("import of an export into the embedded store (Zipf 100 K × 50, 2 posts each)",
                     "≥ 500,000 records/s", f"{rate:,.0f} records/s ({bulk['records']:,} records in "
                     f"{bulk['import_s']:.1f} s); load {bulk['load_s']:.1f} s, export {bulk['export_s']:.1f} s",
                     "bulk"))
    moved = load(outdir, "migrate-stop")
    if moved:
        rows.append(("migrate's write stop, moving the Zipf network (100 K × 50, 2 posts each) at 200 posts/s",
                     "< 1 s", f"{moved['write_stop_s']} s; the move {moved['move_s']} s; "
                     f"{moved['acked']} posts acknowledged during it, {moved['missing']} missing on the target",
                     "migrate-stop"))
    cold = load(outdir, "cold-start")
    if cold:
        first, warm = cold["first"], cold["warm"]
        rows.append(("first pages of 5,000 users in the first 2 s after a restart",
                     "p99 ≤ 10 ms", f"p99 {first['p99']} at {first['rps']:,.0f}/s (warm: p99 {warm['p99']} "
                     f"at {warm['rps']:,.0f}/s); ready {cold['ready_s']} s after the start", "cold-start"))
    print("| row | target | measured | report |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    if len(sys.argv) in (6, 7) and sys.argv[1] == "rest-vs-nginx":
        rest_vs_nginx(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)
