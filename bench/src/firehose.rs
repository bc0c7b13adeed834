//! `socialite bench-firehose`: many firehose readers following every post
//! of a running server while authors post at a steady rate, and one reader
//! that stops reading; reports whether every reader got every post, post →
//! read latency as the readers see it, the server's memory along the run,
//! and whether the stalled reader was cut off.

use crate::latency::Latency;
use crate::live::{drain, post_steadily, Steady};
use crate::scrape::metric_sum;
use crate::target::{Rest, Target};
use clap::Args;
use serde_json::{json, Value};
use socialite_core::ids::{now_ms, PostId};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

#[derive(Debug, Clone, Args)]
pub struct FirehoseBenchArgs {
    /// REST base URL of the server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Server API key with the write and firehose scopes, e.g.
    /// `$(cat data/auth/admin-key)`.
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Firehose readers, each following every post.
    #[arg(long, default_value_t = 50)]
    pub readers: usize,
    /// Readers that open the firehose and then read nothing.
    #[arg(long, default_value_t = 1)]
    pub stalled: usize,
    /// Accounts that post.
    #[arg(long, default_value_t = 1_000)]
    pub authors: usize,
    /// Posts per second while measuring.
    #[arg(long, default_value_t = 5_000.0)]
    pub rate: f64,
    /// Seconds of posting.
    #[arg(long, default_value_t = 30.0)]
    pub duration: f64,
    /// Concurrent requests while setting up and posting.
    #[arg(long, default_value_t = 256)]
    pub concurrency: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the report to PATH.json and PATH.txt.
    #[arg(long, default_value = "bench-firehose")]
    pub report: PathBuf,
}

/// What one reader saw.
#[derive(Default)]
struct Reader {
    posts: AtomicU64,
    ended: Mutex<Option<String>>,
}

pub async fn run_firehose_bench(args: FirehoseBenchArgs) -> Result<(), String> {
    let rest = Arc::new(Rest::new(&args.url, args.api_key.as_deref())?);
    let run = format!("f{}{}", args.seed, now_ms() % 100_000);
    let author = |i: usize| format!("{run}a{i}");
    create_authors(&rest, args.authors, args.concurrency, &author).await?;
    let latency = Arc::new(Mutex::new(Latency::default()));
    let readers: Vec<Arc<Reader>> = (0..args.readers).map(|_| Arc::default()).collect();
    let mut tasks = tokio::task::JoinSet::new();
    // Every reader starts from now, after the authors were made.
    for r in &readers {
        let resp = open(&rest).await?;
        let (r, latency) = (r.clone(), latency.clone());
        tasks.spawn(async move { follow(resp, &r, &latency).await });
    }
    let mut stalled = Vec::new();
    for _ in 0..args.stalled {
        stalled.push(open(&rest).await?);
    }
    let resident = |text: &str| metric_sum(text, "socialite_process_resident_memory_bytes");
    let metrics = rest.metrics().await?;
    let connections = metric_sum(&metrics, "socialite_firehose_connections");
    eprintln!(
        "{connections} firehose connections open; posting {} posts/s for {:.0}s",
        args.rate, args.duration
    );
    let memory = Arc::new(Mutex::new(vec![resident(&metrics)]));
    let sampler = {
        let (rest, memory) = (rest.clone(), memory.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(5)).await;
                if let Ok(text) = rest.metrics().await {
                    memory
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(resident(&text));
                }
            }
        })
    };
    let steady = Steady {
        rate: args.rate,
        duration: args.duration,
        concurrency: args.concurrency,
        seed: args.seed,
        authors: args.authors,
    };
    let started = Instant::now();
    let (posted, post_errors) = post_steadily(&rest, &steady, &author).await;
    let posting_secs = started.elapsed().as_secs_f64();
    // Until every reader has every post, or 30 s.
    let waiting = Instant::now();
    while readers
        .iter()
        .any(|r| r.posts.load(Ordering::Relaxed) < posted)
        && waiting.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let metrics = rest.metrics().await?;
    sampler.abort();
    let mut memory = memory.lock().unwrap_or_else(|p| p.into_inner()).clone();
    memory.push(resident(&metrics));
    let slow_cut = metrics
        .lines()
        .filter(|l| l.starts_with("socialite_firehose_ended_total") && l.contains("slow_reader"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>();
    drop(stalled);
    tasks.abort_all();
    let outcome = Outcome {
        posted,
        post_errors,
        posting_secs,
        slow_cut,
        memory,
    };
    let report = report_of(&args, &readers, &latency, outcome);
    let text = text_of(&report);
    let svg = crate::plot_lines::latency_svg(
        &format!(
            "Firehose: {} readers of every post at {} posts/s",
            args.readers, args.rate
        ),
        "post → read, p99 per second (ms)",
        &[("every reader", lock(&latency).p99_per_second())],
    );
    print!("{text}");
    let path = |ext: &str| args.report.with_extension(ext);
    let json_text = serde_json::to_string_pretty(&report).expect("json");
    std::fs::write(path("json"), json_text).map_err(|e| e.to_string())?;
    std::fs::write(path("txt"), &text).map_err(|e| e.to_string())?;
    std::fs::write(path("svg"), svg).map_err(|e| e.to_string())?;
    Ok(())
}

fn lock(l: &Mutex<Latency>) -> std::sync::MutexGuard<'_, Latency> {
    l.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the run measured besides the readers' own counts.
struct Outcome {
    posted: u64,
    post_errors: u64,
    posting_secs: f64,
    slow_cut: f64,
    memory: Vec<f64>,
}

fn report_of(
    args: &FirehoseBenchArgs,
    readers: &[Arc<Reader>],
    latency: &Mutex<Latency>,
    o: Outcome,
) -> Value {
    let (posted, post_errors, posting_secs, slow_cut, memory) = (
        o.posted,
        o.post_errors,
        o.posting_secs,
        o.slow_cut,
        o.memory,
    );
    let got: Vec<u64> = readers
        .iter()
        .map(|r| r.posts.load(Ordering::Relaxed))
        .collect();
    let ended: Vec<String> = readers
        .iter()
        .filter_map(|r| r.ended.lock().unwrap_or_else(|p| p.into_inner()).clone())
        .collect();
    let h = lock(latency).all();
    json!({
        "workload": {
            "readers": args.readers, "stalled_readers": args.stalled, "authors": args.authors,
            "rate_posts_per_s": args.rate, "duration_s": args.duration,
        },
        "posts": posted,
        "post_errors": post_errors,
        "achieved_posts_per_s": posted as f64 / posting_secs,
        "readers_with_every_post": got.iter().filter(|n| **n == posted).count(),
        "fewest_posts_read": got.iter().min(),
        "readers_ended_by_server": ended,
        "stalled_readers_cut_off": slow_cut,
        "post_to_read_ms": {
            "p50": h.value_at_quantile(0.5), "p90": h.value_at_quantile(0.9),
            "p99": h.value_at_quantile(0.99), "max": h.max(), "reads": h.len(),
        },
        "server_resident_mib": memory.iter().map(|b| (b / 1048576.0).round()).collect::<Vec<_>>(),
    })
}

/// Makes accounts `author(0..authors)`.
pub(crate) async fn create_authors(
    rest: &Arc<Rest>,
    authors: usize,
    concurrency: usize,
    author: &impl Fn(usize) -> String,
) -> Result<(), String> {
    eprintln!("creating {authors} authors");
    let gate = Arc::new(Semaphore::new(concurrency.min(64)));
    let mut setup = tokio::task::JoinSet::new();
    for i in 0..authors {
        let (rest, gate, id) = (rest.clone(), gate.clone(), author(i));
        setup.spawn(async move {
            let _p = gate.acquire().await;
            rest.put_user(&id).await
        });
    }
    drain(&mut setup).await
}

/// A firehose of posts, from now.
async fn open(rest: &Rest) -> Result<reqwest::Response, String> {
    let resp = rest
        .http
        .get(format!("{}/firehose?kinds=post", rest.base))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    match resp.status().is_success() {
        true => Ok(resp),
        false => Err(format!(
            "opening the firehose: {} {}",
            resp.status(),
            resp.text().await.unwrap_or_default()
        )),
    }
}

/// Reads one firehose, counting posts and their latency from their ids.
async fn follow(mut resp: reqwest::Response, seen: &Reader, latency: &Mutex<Latency>) {
    const ID: &str = "\"post\":{\"id\":\"";
    let mut buf = String::new();
    let mut took = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        let now = now_ms();
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if block.starts_with("event: end") {
                let reason = block.lines().find_map(|l| l.strip_prefix("data: "));
                *seen.ended.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(reason.unwrap_or_default().to_owned());
            }
            let Some(at) = block.find(ID) else { continue };
            let id = block.get(at + ID.len()..at + ID.len() + 16);
            if let Some(Ok(id)) = id.map(PostId::parse) {
                seen.posts.fetch_add(1, Ordering::Relaxed);
                took.push((now, now.saturating_sub(id.unix_ms())));
            }
        }
        if !took.is_empty() {
            let mut l = lock(latency);
            for (now, t) in took.drain(..) {
                l.record(now, t);
            }
        }
    }
}

fn text_of(r: &Value) -> String {
    let w = &r["workload"];
    let l = &r["post_to_read_ms"];
    format!(
        "firehose: {} readers of every post (and {} that read nothing), {} authors\n\
         posts: {} at {:.0}/s ({} errors); readers with every post: {} (fewest read: {})\n\
         post → read: p50 {} ms, p90 {} ms, p99 {} ms, max {} ms ({} reads)\n\
         stalled readers cut off: {}; readers the server ended: {}\n\
         server memory along the run (MiB): {}\n",
        w["readers"],
        w["stalled_readers"],
        w["authors"],
        r["posts"],
        r["achieved_posts_per_s"].as_f64().unwrap_or(0.0),
        r["post_errors"],
        r["readers_with_every_post"],
        r["fewest_posts_read"],
        l["p50"],
        l["p90"],
        l["p99"],
        l["max"],
        l["reads"],
        r["stalled_readers_cut_off"],
        r["readers_ended_by_server"],
        r["server_resident_mib"],
    )
}
