//! `socialite bench-live`: many live streams (Server-Sent Events) held open
//! against a running server while authors post at a steady rate; reports
//! post → pushed latency as the clients see it, and the server's memory per
//! open stream.

use crate::scrape::metric_sum;
use crate::target::{Rest, Target};
use clap::Args;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use socialite_core::ids::{now_ms, PostId};
use socialite_core::sim::Rng;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

#[derive(Debug, Clone, Args)]
pub struct LiveBenchArgs {
    /// REST base URL of the server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Server API key (scopes write, read and admin), e.g. `$(cat data/auth/admin-key)`.
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Streams to hold open, one per reader.
    #[arg(long, default_value_t = 10_000)]
    pub streams: usize,
    /// Accounts that post.
    #[arg(long, default_value_t = 1_000)]
    pub authors: usize,
    /// Authors each reader follows (so a post reaches streams × follows /
    /// authors streams on average).
    #[arg(long, default_value_t = 5)]
    pub follows: usize,
    /// Posts per second while measuring.
    #[arg(long, default_value_t = 1_000.0)]
    pub rate: f64,
    /// Seconds of posting.
    #[arg(long, default_value_t = 20.0)]
    pub duration: f64,
    /// Concurrent requests while setting up and posting.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the report to PATH.json and PATH.txt.
    #[arg(long, default_value = "bench-live")]
    pub report: PathBuf,
}

/// What the streams saw.
struct Seen {
    latency_ms: Mutex<Histogram<u64>>,
    pushes: AtomicU64,
    reloads: AtomicU64,
    opened: AtomicU64,
    failed: AtomicU64,
}

pub async fn run_live_bench(args: LiveBenchArgs) -> Result<(), String> {
    let rest = Arc::new(Rest::new(&args.url, args.api_key.as_deref())?);
    let run = format!("l{}", args.seed);
    let reader = |i: usize| format!("{run}r{i}");
    let author = |i: usize| format!("{run}a{i}");
    create_network(&rest, &args, &reader, &author).await?;

    let resident = |text: &str| metric_sum(text, "socialite_process_resident_memory_bytes");
    let before = resident(&rest.metrics().await?);
    let seen = Arc::new(Seen {
        latency_ms: Mutex::new(Histogram::new(3).expect("histogram")),
        pushes: AtomicU64::new(0),
        reloads: AtomicU64::new(0),
        opened: AtomicU64::new(0),
        failed: AtomicU64::new(0),
    });
    eprintln!("opening {} streams", args.streams);
    let open_gate = Arc::new(Semaphore::new(args.concurrency));
    let mut streams = tokio::task::JoinSet::new();
    for i in 0..args.streams {
        let (rest, seen, gate, id) = (rest.clone(), seen.clone(), open_gate.clone(), reader(i));
        streams.spawn(async move { hold(&rest, &id, &seen, &gate).await });
    }
    let opening = Instant::now();
    while (seen.opened.load(Ordering::Relaxed) + seen.failed.load(Ordering::Relaxed))
        < args.streams as u64
    {
        if opening.elapsed() > Duration::from_secs(300) {
            return Err("the streams did not open within 5 minutes".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let open_secs = opening.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let metrics = rest.metrics().await?;
    let with_streams = resident(&metrics);
    let server_streams = metric_sum(&metrics, "socialite_live_streams");
    eprintln!(
        "{} streams open in {open_secs:.1}s; posting {} posts/s for {:.0}s",
        server_streams, args.rate, args.duration
    );

    let steady = Steady {
        rate: args.rate,
        duration: args.duration,
        concurrency: args.concurrency,
        seed: args.seed,
        authors: args.authors,
    };
    let posted = post_steadily(&rest, &steady, &author).await;
    // Pushes still on their way.
    tokio::time::sleep(Duration::from_secs(2)).await;
    streams.abort_all();
    let opened = seen.opened.load(Ordering::Relaxed);
    let h = seen.latency_ms.lock().unwrap_or_else(|p| p.into_inner());
    let report = json!({
        "workload": {
            "streams": args.streams, "authors": args.authors, "follows_per_reader": args.follows,
            "rate_posts_per_s": args.rate, "duration_s": args.duration,
            "expected_streams_per_post": args.streams as f64 * args.follows as f64 / args.authors as f64,
        },
        "streams_open": opened,
        "streams_failed": seen.failed.load(Ordering::Relaxed),
        "server_live_streams": server_streams,
        "seconds_to_open": open_secs,
        "posts": posted.0,
        "post_errors": posted.1,
        "achieved_posts_per_s": posted.0 as f64 / args.duration,
        "pushes": seen.pushes.load(Ordering::Relaxed),
        "reloads": seen.reloads.load(Ordering::Relaxed),
        "push_latency_ms": {
            "p50": h.value_at_quantile(0.5), "p90": h.value_at_quantile(0.9),
            "p99": h.value_at_quantile(0.99), "max": h.max(),
        },
        "server_memory": {
            "resident_before_streams_bytes": before,
            "resident_with_streams_bytes": with_streams,
            "bytes_per_stream": ((with_streams - before) / opened.max(1) as f64).round(),
        },
    });
    let text = text_of(&report);
    print!("{text}");
    let path = |ext: &str| args.report.with_extension(ext);
    std::fs::write(
        path("json"),
        serde_json::to_string_pretty(&report).expect("json"),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(path("txt"), &text).map_err(|e| e.to_string())?;
    Ok(())
}

/// The readers and authors, each reader following `--follows` authors.
async fn create_network(
    rest: &Arc<Rest>,
    args: &LiveBenchArgs,
    reader: &impl Fn(usize) -> String,
    author: &impl Fn(usize) -> String,
) -> Result<(), String> {
    eprintln!(
        "creating {} readers following {} of {} authors each",
        args.streams, args.follows, args.authors
    );
    let gate = Arc::new(Semaphore::new(args.concurrency));
    let mut setup = tokio::task::JoinSet::new();
    for i in 0..args.authors {
        let (rest, gate, id) = (rest.clone(), gate.clone(), author(i));
        setup.spawn(async move {
            let _p = gate.acquire().await;
            rest.put_user(&id).await
        });
    }
    drain(&mut setup).await?;
    let mut rng = Rng::new(args.seed);
    for i in 0..args.streams {
        let picks: Vec<String> = (0..args.follows)
            .map(|_| author(rng.below(args.authors)))
            .collect();
        let (rest, gate, id) = (rest.clone(), gate.clone(), reader(i));
        setup.spawn(async move {
            let _p = gate.acquire().await;
            rest.put_user(&id).await?;
            for a in picks {
                rest.follow(&id, &a).await?;
            }
            Ok(())
        });
    }
    drain(&mut setup).await
}

pub(crate) async fn drain(
    set: &mut tokio::task::JoinSet<Result<(), String>>,
) -> Result<(), String> {
    while let Some(done) = set.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// Holds one stream open, recording each entry's latency from its post id.
async fn hold(rest: &Rest, user: &str, seen: &Seen, gate: &Semaphore) {
    let resp = {
        let _p = gate.acquire().await;
        let url = format!("{}/users/{user}/timeline/stream", rest.base);
        match rest.http.get(url).send().await {
            Ok(r) if r.status().is_success() => r,
            _ => {
                seen.failed.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    };
    seen.opened.fetch_add(1, Ordering::Relaxed);
    let mut resp = resp;
    let mut buf = String::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if block.starts_with("event: reload") {
                seen.reloads.fetch_add(1, Ordering::Relaxed);
            }
            let id = block.lines().find_map(|l| l.strip_prefix("id: "));
            if let Some(Ok(id)) = id.map(PostId::parse) {
                let took = now_ms().saturating_sub(id.unix_ms());
                seen.pushes.fetch_add(1, Ordering::Relaxed);
                let mut h = seen.latency_ms.lock().unwrap_or_else(|p| p.into_inner());
                let _ = h.record(took.max(1));
            }
        }
    }
}

/// A steady stream of posts by random authors.
pub(crate) struct Steady {
    pub rate: f64,
    pub duration: f64,
    pub concurrency: usize,
    pub seed: u64,
    pub authors: usize,
}

/// Posts at the rate for the duration; (posted, errors).
pub(crate) async fn post_steadily(
    rest: &Arc<Rest>,
    args: &Steady,
    author: &dyn Fn(usize) -> String,
) -> (u64, u64) {
    let total = (args.rate * args.duration) as u64;
    let gate = Arc::new(Semaphore::new(args.concurrency));
    let (ok, err) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut rng = Rng::new(args.seed ^ 0x5eed);
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..total {
        let due = start + Duration::from_secs_f64(n as f64 / args.rate);
        tokio::time::sleep_until(due.into()).await;
        let permit = gate.clone().acquire_owned().await.expect("open");
        let (rest, ok, err) = (rest.clone(), ok.clone(), err.clone());
        let who = author(rng.below(args.authors));
        tasks.spawn(async move {
            let _permit = permit;
            match rest.post(&who, &format!("live {n}")).await {
                Ok(_) => ok.fetch_add(1, Ordering::Relaxed),
                Err(_) => err.fetch_add(1, Ordering::Relaxed),
            };
        });
    }
    while tasks.join_next().await.is_some() {}
    (ok.load(Ordering::Relaxed), err.load(Ordering::Relaxed))
}

fn text_of(r: &Value) -> String {
    let w = &r["workload"];
    let l = &r["push_latency_ms"];
    let m = &r["server_memory"];
    format!(
        "live streams: {} open ({} failed), {} readers following {} of {} authors\n\
         posts: {} at {:.0}/s ({} errors); pushes: {} ({:.0} streams per post), reloads: {}\n\
         post → pushed: p50 {} ms, p90 {} ms, p99 {} ms, max {} ms\n\
         server memory: {:.0} MiB before streams, {:.0} MiB with them: {} bytes per stream\n",
        r["streams_open"],
        r["streams_failed"],
        w["streams"],
        w["follows_per_reader"],
        w["authors"],
        r["posts"],
        r["achieved_posts_per_s"].as_f64().unwrap_or(0.0),
        r["post_errors"],
        r["pushes"],
        w["expected_streams_per_post"].as_f64().unwrap_or(0.0),
        r["reloads"],
        l["p50"],
        l["p90"],
        l["p99"],
        l["max"],
        m["resident_before_streams_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
        m["resident_with_streams_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
        m["bytes_per_stream"],
    )
}
