//! The benchmark report: text for people and JSON for machines (the SVG
//! plot of throughput and latency over time is `crate::plot`). Server-side figures (fanout,
//! freshness, memory, read sources) are the difference between the server's
//! `/metrics` at the start and at the end of the run.

use crate::run::{Plan, Recorded};
use crate::scrape::{metric_sum, metric_with};
use crate::workload::KINDS;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use socialite_core::ports::Footprint;
use std::collections::BTreeMap;
use std::fmt::Write;

fn buckets(text: &str, name: &str) -> BTreeMap<u64, f64> {
    let mut out = BTreeMap::new();
    let prefix = format!("{name}_bucket{{");
    for l in text.lines().filter(|l| l.starts_with(&prefix)) {
        let Some(le) = l.split("le=\"").nth(1).and_then(|r| r.split('"').next()) else {
            continue;
        };
        let le = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().unwrap_or(f64::INFINITY)
        };
        let v: f64 = l
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        *out.entry(le.to_bits()).or_insert(0.0) += v;
    }
    out
}

/// A quantile of a Prometheus histogram between two scrapes, by linear
/// interpolation inside the bucket; `None` without observations.
pub fn histogram_quantile(before: &str, after: &str, name: &str, q: f64) -> Option<f64> {
    let (b, a) = (buckets(before, name), buckets(after, name));
    let mut rows: Vec<(f64, f64)> = a
        .iter()
        .map(|(le, v)| (f64::from_bits(*le), v - b.get(le).copied().unwrap_or(0.0)))
        .collect();
    rows.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total = rows.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let want = q * total;
    let (mut prev_le, mut prev_count) = (0.0, 0.0);
    for (le, count) in rows {
        if count >= want {
            if le.is_infinite() {
                return Some(prev_le);
            }
            let span = count - prev_count;
            return Some(if span > 0.0 {
                prev_le + (le - prev_le) * (want - prev_count) / span
            } else {
                le
            });
        }
        (prev_le, prev_count) = (le, count);
    }
    Some(prev_le)
}

fn ms(micros: u64) -> f64 {
    (micros as f64 / 1000.0 * 1000.0).round() / 1000.0
}

fn latency(h: &Histogram<u64>) -> Value {
    json!({
        "p50_ms": ms(h.value_at_quantile(0.5)),
        "p90_ms": ms(h.value_at_quantile(0.9)),
        "p99_ms": ms(h.value_at_quantile(0.99)),
        "p999_ms": ms(h.value_at_quantile(0.999)),
        "max_ms": ms(h.max()),
    })
}

/// The server's metrics around a run: `before` it, at its `end` (counters
/// and gauges: what the server did in the run's seconds), and `settled`,
/// once the posts made in it have been delivered or a bound has passed
/// (latencies: a post made near the end counts with its whole wait).
pub struct Snapshots {
    pub before: String,
    pub end: String,
    pub settled: String,
}

/// The report as JSON; `config` describes the target and the run.
pub fn build(
    plan: &Plan,
    rec: &Recorded,
    metrics: &Snapshots,
    config: Value,
    stored: Option<Footprint>,
) -> Value {
    let (before, after) = (metrics.before.as_str(), metrics.end.as_str());
    let secs = rec.elapsed.as_secs_f64().max(1e-9);
    let mut ops = serde_json::Map::new();
    let mut total = 0u64;
    for (k, h) in KINDS.iter().zip(&rec.overall) {
        total += h.len();
        let i = k.index();
        if h.is_empty() && rec.errors[i] == 0 && rec.refused[i] == 0 {
            continue;
        }
        let mut v = latency(h);
        v["count"] = json!(h.len());
        v["per_second"] = json!((h.len() as f64 / secs).round());
        v["errors"] = json!(rec.errors[i]);
        v["refused"] = json!(rec.refused[i]);
        ops.insert(k.name().to_owned(), v);
    }
    let delta = |name: &str| metric_sum(after, name) - metric_sum(before, name);
    let quantile_of = |name: &str, q| {
        histogram_quantile(before, &metrics.settled, name, q).map(|s| (s * 1e6).round() / 1e3)
    };
    let quantile = |q| quantile_of("socialite_post_visible_seconds", q);
    let reads = |source: &str| {
        let label = format!("source=\"{source}\"");
        metric_with(after, "socialite_timeline_reads_total", &label)
            - metric_with(before, "socialite_timeline_reads_total", &label)
    };
    json!({
        "config": config,
        "plan": {
            "users": plan.users, "zipf": plan.zipf, "seed": plan.seed, "mix": plan.mix.to_string(),
            "concurrency": plan.concurrency, "duration_s": plan.duration.as_secs_f64(), "ops": plan.ops,
            "rate": if plan.rate > 0.0 { json!(plan.rate) } else { json!("flat out") },
            "active_share": plan.active, "page": plan.page,
        },
        "machine": machine(),
        "elapsed_s": (secs * 1000.0).round() / 1000.0,
        "throughput_ops_per_s": (total as f64 / secs).round(),
        "ops": ops,
        "errors_sample": rec.first_errors,
        "fanout": {
            "deliveries_per_s": (delta("socialite_fanout_deliveries_total") / secs).round(),
            "skipped_dormant_per_s": (delta("socialite_fanout_skipped_dormant_total") / secs).round(),
            "events_per_s": (delta("socialite_fanout_events_total") / secs).round(),
            "backlog_at_end": metric_sum(after, "socialite_log_backlog_events"),
        },
        "freshness": {
            "all_posts_p50_ms": quantile(0.5),
            "all_posts_p99_ms": quantile(0.99),
            "taken_p50_ms": quantile_of("socialite_post_taken_seconds", 0.5),
            "taken_p99_ms": quantile_of("socialite_post_taken_seconds", 0.99),
            "batch_p50_ms": quantile_of("socialite_fanout_batch_duration_seconds", 0.5),
            "batch_p99_ms": quantile_of("socialite_fanout_batch_duration_seconds", 0.99),
            "top_author": {
                "samples": rec.probe.len(), "timeouts": rec.probe_timeouts,
                "p50_ms": ms(rec.probe.value_at_quantile(0.5)), "p99_ms": ms(rec.probe.value_at_quantile(0.99)),
                "max_ms": ms(rec.probe.max()),
            },
        },
        "timeline_reads": { "cache": reads("cache"), "past_cache": reads("past_cache"), "late": reads("late"), "merge": reads("merge") },
        "stored_timelines": stored.map(|f| json!({
            "active_users": f.users, "entries": f.entries, "documents": f.documents,
            "serialized_bytes": f.serialized_bytes,
            "serialized_bytes_per_user": f.serialized_bytes.checked_div(f.users).unwrap_or(0),
            "memory_bytes": f.memory_bytes,
            "memory_bytes_per_user": f.memory_bytes.checked_div(f.users).unwrap_or(0),
        })),
        "memory": {
            "peak_resident_bytes": metric_sum(after, "socialite_process_peak_resident_memory_bytes"),
            "resident_bytes": metric_sum(after, "socialite_process_resident_memory_bytes"),
        },
    })
}

pub fn machine() -> Value {
    let mem_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    json!({ "cores": cores, "memory_gib": (mem_kib as f64 / 1048576.0).round(), "os": std::env::consts::OS })
}

/// The table of operations: a row per kind, its latencies and failures.
fn ops_table(out: &mut String, r: &Value) {
    const COLUMNS: [(&str, &str); 9] = [
        ("count", "count"),
        ("per_second", "ops/s"),
        ("p50_ms", "p50 ms"),
        ("p90_ms", "p90 ms"),
        ("p99_ms", "p99 ms"),
        ("p999_ms", "p99.9 ms"),
        ("max_ms", "max ms"),
        ("errors", "errors"),
        ("refused", "refused"),
    ];
    let head: String = COLUMNS.map(|(_, h)| format!("{h:>10}")).concat();
    let _ = writeln!(out, "\n{:<9}{head}", "op");
    if let Some(ops) = r["ops"].as_object() {
        for (k, v) in ops {
            let row: String = COLUMNS
                .iter()
                .map(|(c, _)| format!("{:>10}", v[*c].to_string()))
                .collect();
            let _ = writeln!(out, "{k:<9}{row}");
        }
    }
}

pub fn text(r: &Value) -> String {
    let mut out = String::new();
    let p = &r["plan"];
    let _ = writeln!(
        out,
        "socialite bench: {} users, mix {}, concurrency {}, rate {}, {}s",
        p["users"],
        p["mix"].as_str().unwrap_or(""),
        p["concurrency"],
        p["rate"],
        r["elapsed_s"]
    );
    let _ = writeln!(out, "config: {}", r["config"]);
    let _ = writeln!(
        out,
        "machine: {} cores, {} GiB",
        r["machine"]["cores"], r["machine"]["memory_gib"]
    );
    ops_table(&mut out, r);
    let _ = writeln!(out, "\nthroughput: {} ops/s", r["throughput_ops_per_s"]);
    let f = &r["fanout"];
    let _ = writeln!(
        out,
        "fanout: {} deliveries/s, {} skipped (dormant)/s, backlog at end {}",
        f["deliveries_per_s"], f["skipped_dormant_per_s"], f["backlog_at_end"]
    );
    let fr = &r["freshness"];
    let _ = writeln!(out, "post -> visible: all posts p50 {} ms p99 {} ms; most followed author p50 {} ms p99 {} ms ({} samples, {} timeouts)",
        fr["all_posts_p50_ms"], fr["all_posts_p99_ms"], fr["top_author"]["p50_ms"], fr["top_author"]["p99_ms"], fr["top_author"]["samples"], fr["top_author"]["timeouts"]);
    let _ = writeln!(out, "  taken by fanout from the log: p50 {} ms p99 {} ms; fanout batches take p50 {} ms p99 {} ms",
        fr["taken_p50_ms"], fr["taken_p99_ms"], fr["batch_p50_ms"], fr["batch_p99_ms"]);
    let tr = &r["timeline_reads"];
    let _ = writeln!(
        out,
        "timeline reads: cache {} past_cache {} late {} merge {}",
        tr["cache"], tr["past_cache"], tr["late"], tr["merge"]
    );
    if let Some(st) = r["stored_timelines"].as_object() {
        let _ = writeln!(
            out,
            "stored timelines: {} users, {} entries in {} documents; {} bytes serialized ({} per user); {} bytes in memory ({} per user)",
            st["active_users"],
            st["entries"],
            st["documents"],
            st["serialized_bytes"],
            st["serialized_bytes_per_user"],
            st["memory_bytes"],
            st["memory_bytes_per_user"]
        );
    }
    let w = &r["warm_up_memory"];
    if w.is_object() {
        let added = w["resident_after_bytes"].as_f64().unwrap_or(0.0)
            - w["resident_before_bytes"].as_f64().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "activation: {} users added {:.1} MiB resident, {} bytes per user; the second half {} bytes per user",
            w["activated_users"],
            added / 1048576.0,
            w["bytes_per_activated_user"],
            w["marginal_bytes_per_user"]
        );
    }
    let _ = writeln!(
        out,
        "memory: peak {:.1} MiB",
        r["memory"]["peak_resident_bytes"].as_f64().unwrap_or(0.0) / 1048576.0
    );
    if let Some(errs) = r["errors_sample"].as_array().filter(|e| !e.is_empty()) {
        let _ = writeln!(out, "first errors: {errs:?}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_bucket_deltas() {
        let before = "x_bucket{le=\"0.1\"} 0\nx_bucket{le=\"1\"} 0\nx_bucket{le=\"+Inf\"} 0\n";
        let after = "x_bucket{le=\"0.1\"} 50\nx_bucket{le=\"1\"} 100\nx_bucket{le=\"+Inf\"} 100\n";
        assert_eq!(histogram_quantile(before, after, "x", 0.5), Some(0.1));
        let p75 = histogram_quantile(before, after, "x", 0.75).unwrap();
        assert!((p75 - 0.55).abs() < 1e-9, "{p75}");
        assert_eq!(histogram_quantile(after, after, "x", 0.5), None);
        assert_eq!(
            metric_sum(
                "a_total{k=\"1\"} 2\na_total{k=\"2\"} 3\na_totalx 9\n",
                "a_total"
            ),
            5.0
        );
    }
}
