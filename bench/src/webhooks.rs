//! `socialite bench-webhooks`: a good webhook endpoint receiving every
//! post of a running server while authors post at a steady rate, first
//! alone, then beside a slow endpoint (two seconds a request) and a dead
//! one (nothing listens); reports the good endpoint's event -> delivery
//! latency in both runs and whether it got every post. The server must
//! allow internal addresses (`--webhook-allow-internal`): the receivers
//! listen on loopback, in this process.

use crate::firehose::create_authors;
use crate::latency::Latency;
use crate::live::{post_steadily, Steady};
use crate::target::Rest;
use axum::http::StatusCode;
use clap::Args;
use serde_json::{json, Value};
use socialite_core::ids::{now_ms, PostId};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct WebhookBenchArgs {
    /// REST base URL of the server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Server API key with the write and admin scopes, e.g.
    /// `$(cat data/auth/admin-key)`.
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Accounts that post.
    #[arg(long, default_value_t = 1_000)]
    pub authors: usize,
    /// Posts per second while measuring.
    #[arg(long, default_value_t = 1_000.0)]
    pub rate: f64,
    /// Seconds of posting, in each of the two runs.
    #[arg(long, default_value_t = 30.0)]
    pub duration: f64,
    /// Most events one request to an endpoint carries.
    #[arg(long, default_value_t = 1)]
    pub batch: u32,
    /// Concurrent requests while setting up and posting.
    #[arg(long, default_value_t = 256)]
    pub concurrency: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the report to PATH.json and PATH.txt.
    #[arg(long, default_value = "bench-webhooks")]
    pub report: PathBuf,
}

/// What one receiver path saw: every post's event → delivery latency,
/// over the run and per second of it.
#[derive(Default)]
struct Seen {
    requests: AtomicU64,
    posts: AtomicU64,
    latency: Mutex<Latency>,
}

impl Seen {
    fn record(&self, body: &[u8]) {
        const ID: &str = "\"post\":{\"id\":\"";
        let text = String::from_utf8_lossy(body);
        let now = now_ms();
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut l = self.latency.lock().unwrap_or_else(|p| p.into_inner());
        for (at, _) in text.match_indices(ID) {
            let id = text.get(at + ID.len()..at + ID.len() + 16);
            if let Some(Ok(id)) = id.map(PostId::parse) {
                self.posts.fetch_add(1, Ordering::Relaxed);
                l.record(now, now.saturating_sub(id.unix_ms()));
            }
        }
    }

    fn latency(&self) -> std::sync::MutexGuard<'_, Latency> {
        self.latency.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The receivers: `/good/<run>` answers at once, `/slow/<run>` after two
/// seconds.
struct Receivers {
    base: String,
    seen: Arc<Mutex<std::collections::HashMap<String, Arc<Seen>>>>,
}

impl Receivers {
    async fn start() -> Result<Receivers, String> {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let base = format!("http://{}", l.local_addr().map_err(|e| e.to_string())?);
        let seen: Arc<Mutex<std::collections::HashMap<String, Arc<Seen>>>> = Arc::default();
        let kept = seen.clone();
        let app =
            axum::Router::new().fallback(move |uri: axum::http::Uri, body: axum::body::Bytes| {
                let kept = kept.clone();
                async move {
                    let path = uri.path().to_owned();
                    let at = kept
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(path.clone())
                        .or_default()
                        .clone();
                    at.record(&body);
                    if path.starts_with("/slow/") {
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                    StatusCode::NO_CONTENT
                }
            });
        tokio::spawn(async move { axum::serve(l, app).await });
        Ok(Receivers { base, seen })
    }

    fn at(&self, path: &str) -> Arc<Seen> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.entry(path.to_owned()).or_default().clone()
    }
}

async fn register(rest: &Rest, url: &str, batch: u32) -> Result<String, String> {
    let resp = rest
        .http
        .post(format!("{}/admin/webhooks", rest.base))
        .json(&json!({"url": url, "kinds": ["post"], "batch": batch}))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let body: Value = resp.json().await.map_err(|e| e.to_string())?;
    match (status.is_success(), body["id"].as_str()) {
        (true, Some(id)) => Ok(id.to_owned()),
        _ => Err(format!("registering {url}: {status} {body}")),
    }
}

async fn delete(rest: &Rest, id: &str) {
    let _ = rest
        .http
        .delete(format!("{}/admin/webhooks/{id}", rest.base))
        .send()
        .await;
}

/// One run: the good endpoint (and, `crowded`, a slow and a dead one)
/// while posting; the good endpoint's report.
async fn run_once(
    rest: &Arc<Rest>,
    rx: &Receivers,
    args: &WebhookBenchArgs,
    author: &dyn Fn(usize) -> String,
    crowded: bool,
) -> Result<Value, String> {
    let name = if crowded { "crowded" } else { "alone" };
    let good = format!("/good/{name}");
    let mut ids = vec![register(rest, &format!("{}{good}", rx.base), args.batch).await?];
    if crowded {
        let dead = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let dead_url = format!(
            "http://{}/dead",
            dead.local_addr().map_err(|e| e.to_string())?
        );
        drop(dead);
        ids.push(register(rest, &format!("{}/slow/{name}", rx.base), args.batch).await?);
        ids.push(register(rest, &dead_url, args.batch).await?);
    }
    eprintln!(
        "{name}: posting {} posts/s for {:.0}s",
        args.rate, args.duration
    );
    let steady = Steady {
        rate: args.rate,
        duration: args.duration,
        concurrency: args.concurrency,
        seed: args.seed,
        authors: args.authors,
    };
    let started = Instant::now();
    let (posted, post_errors) = post_steadily(rest, &steady, author).await;
    let posting_secs = started.elapsed().as_secs_f64();
    let seen = rx.at(&good);
    let waiting = Instant::now();
    while seen.posts.load(Ordering::Relaxed) < posted && waiting.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let slow = rx.at(&format!("/slow/{name}"));
    for id in ids {
        delete(rest, &id).await;
    }
    let h = seen.latency().all();
    Ok(json!({
        "endpoints": if crowded { "good, slow (2 s a request), dead" } else { "good" },
        "posts": posted,
        "post_errors": post_errors,
        "achieved_posts_per_s": posted as f64 / posting_secs,
        "good_received_posts": seen.posts.load(Ordering::Relaxed),
        "good_requests": seen.requests.load(Ordering::Relaxed),
        "slow_requests": slow.requests.load(Ordering::Relaxed),
        "event_to_delivery_ms": {
            "p50": h.value_at_quantile(0.5), "p90": h.value_at_quantile(0.9),
            "p99": h.value_at_quantile(0.99), "max": h.max(),
        },
    }))
}

pub async fn run_webhook_bench(args: WebhookBenchArgs) -> Result<(), String> {
    let rest = Arc::new(Rest::new(&args.url, args.api_key.as_deref())?);
    let run = format!("w{}{}", args.seed, now_ms() % 100_000);
    let author = |i: usize| format!("{run}a{i}");
    create_authors(&rest, args.authors, args.concurrency, &author).await?;
    let rx = Receivers::start().await?;
    let alone = run_once(&rest, &rx, &args, &author, false).await?;
    let crowded = run_once(&rest, &rx, &args, &author, true).await?;
    let svg = crate::plot_lines::latency_svg(
        &format!(
            "Webhooks: the good endpoint at {} posts/s, batch {}",
            args.rate, args.batch
        ),
        "event → delivery, p99 per second (ms)",
        &[
            ("alone", rx.at("/good/alone").latency().p99_per_second()),
            (
                "beside a slow and a dead endpoint",
                rx.at("/good/crowded").latency().p99_per_second(),
            ),
        ],
    );
    let p99 = |r: &Value| r["event_to_delivery_ms"]["p99"].as_f64().unwrap_or(0.0);
    let report = json!({
        "workload": {
            "authors": args.authors, "rate_posts_per_s": args.rate,
            "duration_s": args.duration, "batch": args.batch,
        },
        "alone": alone,
        "crowded": crowded,
        "p99_crowded_over_alone": p99(&crowded) / p99(&alone).max(1.0),
    });
    let text = text_of(&report);
    print!("{text}");
    let path = |ext: &str| args.report.with_extension(ext);
    let json_text = serde_json::to_string_pretty(&report).expect("json");
    std::fs::write(path("json"), json_text).map_err(|e| e.to_string())?;
    std::fs::write(path("txt"), &text).map_err(|e| e.to_string())?;
    std::fs::write(path("svg"), svg).map_err(|e| e.to_string())?;
    Ok(())
}

fn text_of(r: &Value) -> String {
    let w = &r["workload"];
    let line = |run: &Value| {
        let l = &run["event_to_delivery_ms"];
        format!(
            "{}: {} posts at {:.0}/s ({} errors); the good endpoint got {} in {} requests; \
             event → delivery p50 {} ms, p90 {} ms, p99 {} ms, max {} ms; the slow one had {} requests\n",
            run["endpoints"].as_str().unwrap_or(""),
            run["posts"],
            run["achieved_posts_per_s"].as_f64().unwrap_or(0.0),
            run["post_errors"],
            run["good_received_posts"],
            run["good_requests"],
            l["p50"],
            l["p90"],
            l["p99"],
            l["max"],
            run["slow_requests"],
        )
    };
    format!(
        "webhooks: {} authors posting {} posts/s for {} s, batch {}\n{}{}p99 beside a slow and a dead endpoint / alone: {:.2}\n",
        w["authors"],
        w["rate_posts_per_s"],
        w["duration_s"],
        w["batch"],
        line(&r["alone"]),
        line(&r["crowded"]),
        r["p99_crowded_over_alone"].as_f64().unwrap_or(0.0),
    )
}
