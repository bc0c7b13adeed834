//! The operator's view: metrics that move under load, readiness, a graceful
//! shutdown during a stream of posts, and the status page in a real browser.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The value of one series in Prometheus text (0 when absent).
fn series(text: &str, name_and_labels: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(name_and_labels)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn metrics_are_exported_and_move_under_load() {
    let t = spawn_app().await;
    let (status, before) = t.get("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let before = before.as_str().unwrap().to_owned();
    for u in ["m_author", "m_reader", "m_dormant"] {
        t.put_user(u).await;
    }
    t.follow("m_reader", "m_author").await;
    t.follow("m_dormant", "m_author").await;
    t.timeline_page("m_reader", 10, None).await;
    for i in 0..5 {
        t.post("m_author", &format!("p{i}")).await;
    }
    t.wait_idle().await;
    t.timeline_page("m_reader", 10, None).await;
    let (_, after) = t.get("/metrics").await;
    let after = after.as_str().unwrap();
    for name in [
        "# TYPE socialite_http_request_duration_seconds histogram",
        "# TYPE socialite_post_visible_seconds histogram",
        "# TYPE socialite_post_taken_seconds histogram",
        "# TYPE socialite_fanout_batch_duration_seconds histogram",
        "# TYPE socialite_log_backlog_events gauge",
        "# TYPE socialite_fanout_skipped_dormant counter",
    ] {
        assert!(after.contains(name), "{name} missing");
    }
    // Metrics are per process and tests share it: compare by at least.
    let grew = |s: &str, by: f64| {
        let (a, b) = (series(&before, s), series(after, s));
        assert!(b - a >= by, "{s}: {a} -> {b}, expected +{by}");
    };
    grew("socialite_posts_ingested_total", 5.0);
    grew("socialite_events_published_total", 5.0);
    grew("socialite_fanout_deliveries_total", 5.0);
    grew("socialite_fanout_skipped_dormant_total", 5.0);
    grew("socialite_post_visible_seconds_count", 5.0);
    grew("socialite_post_taken_seconds_count", 5.0);
    grew("socialite_timeline_reads_total{source=\"merge\"}", 1.0);
    grew("socialite_timeline_reads_total{source=\"cache\"}", 1.0);
    grew(
        "socialite_http_requests_total{route=\"/users/{id}/posts\",method=\"POST\",status=\"201\"}",
        5.0,
    );
    grew(
        "socialite_store_operation_duration_seconds_count{store=\"content\",op=\"create_post\"}",
        5.0,
    );
    grew("socialite_fanout_batches_total", 1.0);
}

#[tokio::test]
async fn readiness_reports_each_backend_and_the_consumer() {
    let t = spawn_app().await;
    let (status, body) = t.get("/readyz").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let names: Vec<&str> = body["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["content_store", "event_log", "fanout_consumer"]);
    // A process whose worker has not joined its group is not ready.
    let b = &t.app.as_ref().unwrap().backends;
    let unassigned = socialite_core::health::Joined::default();
    let health =
        socialite_core::health::Health::new(b.content.clone(), b.log.clone(), Some(unassigned));
    let (ready, checks) = health.ready().await;
    assert!(!ready);
    assert!(checks.iter().any(|c| c.name == "fanout_consumer" && !c.ok));
    assert_eq!(t.get("/healthz").await.0, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_during_a_stream_of_posts_loses_nothing() {
    let mut t = spawn_app().await;
    for u in ["s_author", "s_reader"] {
        t.put_user(u).await;
    }
    t.follow("s_reader", "s_author").await;
    t.timeline_page("s_reader", 10, None).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut writers = Vec::new();
    for w in 0..3 {
        let (http, base, tx) = (t.http.clone(), t.base.clone(), tx.clone());
        writers.push(tokio::spawn(async move {
            for i in 0.. {
                let sent = http
                    .post(format!("{base}/users/s_author/posts"))
                    .json(&serde_json::json!({ "message": format!("w{w} {i}") }))
                    .timeout(Duration::from_secs(5))
                    .send()
                    .await;
                match sent {
                    Ok(r) if r.status() == StatusCode::CREATED => {
                        let v: serde_json::Value = r.json().await.unwrap();
                        tx.send(v["id"].as_str().unwrap().to_owned()).unwrap();
                    }
                    _ => return,
                }
            }
        }));
    }
    drop(tx);
    let mut acked = BTreeSet::new();
    while acked.len() < 60 {
        acked.insert(rx.recv().await.unwrap());
    }
    // Ordered shutdown while the writers keep posting, then a restart.
    t.app.take().unwrap().shutdown().await;
    for w in writers {
        w.await.unwrap();
    }
    while let Ok(id) = rx.try_recv() {
        acked.insert(id);
    }
    t.start().await;
    t.wait_idle().await;
    let timeline: BTreeSet<String> = t.timeline("s_reader", 200).await.into_iter().collect();
    assert!(
        acked.is_subset(&timeline),
        "{} acknowledged posts missing",
        acked.difference(&timeline).count()
    );
}

fn chromium() -> Option<std::path::PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| std::path::Path::new(d).join(name))
                .find(|p| p.exists())
        })
}

/// Runs headless Chromium on `url` for a few seconds of page time.
fn browse(
    browser: &std::path::Path,
    profile: &std::path::Path,
    url: &str,
    output: &[&str],
) -> std::process::Output {
    std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--window-size=1100,700",
            "--virtual-time-budget=6000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(output)
        .arg(url)
        .output()
        .expect("chromium runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_draws_live_data_in_a_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("SOCIALITE_REQUIRE_BROWSER").is_none(),
            "chromium is required but not installed"
        );
        eprintln!(
            "SKIPPED the_status_page_draws_live_data_in_a_browser: chromium is not installed"
        );
        return;
    };
    // The operators' own address: the page and /metrics without credentials.
    let t =
        Arc::new(spawn_app_configured(|c| c.ops_addr = Some("127.0.0.1:0".parse().unwrap())).await);
    for u in ["w_author", "w_reader"] {
        t.put_user(u).await;
    }
    t.follow("w_reader", "w_author").await;
    t.timeline_page("w_reader", 10, None).await;
    // A webhook endpoint receives the posts.
    let rx = common::receiver::Receiver::start().await;
    let hook = json!({"url": format!("{}/ok/status", rx.base), "kinds": ["post"]});
    let (status, made) = t.call(Method::POST, "/admin/webhooks", Some(hook)).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    // Keep posts and reads flowing while the page samples /metrics.
    let stop = Arc::new(AtomicBool::new(false));
    let traffic = {
        let (t, stop) = (t.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                t.post("w_author", "live").await;
                t.timeline_page("w_reader", 5, None).await;
            }
        })
    };
    // Deliveries under way before the page samples, so that its window
    // holds some (the endpoint is taken up within a second of its making).
    rx.wait_for("/ok/status", 2).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/status", t.ops.as_ref().unwrap());
    let (b, p, u) = (browser.clone(), dir.path().join("profile"), url.clone());
    let dom = tokio::task::spawn_blocking(move || browse(&b, &p, &u, &["--dump-dom"]))
        .await
        .unwrap();
    let shot = dir.path().join("status.png");
    let (b, p, arg) = (
        browser,
        dir.path().join("profile2"),
        format!("--screenshot={}", shot.display()),
    );
    let shot_run = tokio::task::spawn_blocking(move || browse(&b, &p, &url, &[&arg]))
        .await
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    traffic.await.unwrap();

    let html = String::from_utf8_lossy(&dom.stdout);
    let max_of = |id: &str| -> f64 {
        let marker = format!("id=\"{id}-value\"");
        let tag = html
            .split(&marker)
            .nth(1)
            .unwrap_or_else(|| panic!("no {id} chart in:\n{html}"));
        let tag = &tag[..tag.find('>').unwrap()];
        let v = tag
            .split("data-max=\"")
            .nth(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .unwrap_or("0");
        v.parse().unwrap_or(0.0)
    };
    for chart in ["ingest", "deliveries", "errors", "webhooks"] {
        assert!(
            max_of(chart) > 0.0,
            "the {chart} chart shows no data:\n{html}"
        );
    }
    assert!(html.contains("updated "), "the page never sampled /metrics");
    assert!(
        html.contains(r#"id="open" style="display: none;""#),
        "the page warns that authentication is off while it is on"
    );
    assert!(
        shot_run.status.success(),
        "screenshot failed: {}",
        String::from_utf8_lossy(&shot_run.stderr)
    );
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot of {} bytes",
        png.len()
    );
}

#[tokio::test]
async fn the_grafana_dashboard_queries_only_exported_metrics() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/grafana/dashboards/socialite.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // Families with labels are rendered once they have a member.
    let m = socialite_core::metrics::metrics();
    let t = socialite_api::metrics::transport();
    t.observe_http(
        socialite_api::metrics::RouteLabel::Fixed("/probe"),
        "GET",
        200,
        Duration::ZERO,
    );
    t.observe_grpc("/probe".into(), "0", Duration::ZERO);
    m.observe_store("probe", "probe", Duration::ZERO, true);
    m.timeline_read("cache");
    m.store_fault("probe", "no_space").set(0);
    m.store_recoveries
        .get_or_create(&socialite_core::metrics::StoreLabel { store: "probe" })
        .inc_by(0);
    m.log_partition_lag
        .get_or_create(&vec![("topic", "probe".into()), ("partition", "0".into())])
        .set(0);
    let probe = socialite_core::metrics::WebhookMetrics::label("probe");
    m.webhooks.delivered.get_or_create(&probe).inc_by(0);
    m.webhooks.failed.get_or_create(&probe).inc_by(0);
    m.webhooks.queue_age.get_or_create(&probe).set(0);
    m.firehose
        .ended
        .get_or_create(&vec![("reason", "probe".into())])
        .inc_by(0);
    let rendered = socialite_api::metrics::render();
    let mut checked = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for name in expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("socialite_"))
            {
                let family = ["_bucket", "_sum", "_count", "_total"]
                    .iter()
                    .fold(name, |n, s| n.strip_suffix(s).unwrap_or(n));
                assert!(
                    rendered.contains(&format!("# TYPE {family} ")),
                    "panel {:?} queries {name}, which no process exports",
                    panel["title"]
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} metric references found");
}

/// Label values come from fixed sets: a client that sends hundreds of
/// made-up methods and paths adds no series to `/metrics`.
#[tokio::test]
async fn made_up_methods_and_paths_add_no_metric_series() {
    let t = spawn_app().await;
    let count = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("socialite_http_requests_total{"))
            .filter(|l| l.contains(r#"route="unmatched""#))
            .count()
    };
    // Every label combination these requests can produce, once (tests share
    // the process's metrics; only unmatched routes are counted).
    for i in 0..3 {
        let m = reqwest::Method::from_bytes(format!("WARMUP{i}").as_bytes()).unwrap();
        t.http
            .request(m, format!("{}/nowhere{i}", t.base))
            .send()
            .await
            .unwrap();
    }
    let (_, before) = t.get("/metrics").await;
    let before = count(before.as_str().unwrap());
    for i in 0..300 {
        let m = reqwest::Method::from_bytes(format!("M{i}X").as_bytes()).unwrap();
        let resp = t
            .http
            .request(m, format!("{}/made/up/{i}", t.base))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error(), "{}", resp.status());
    }
    let (_, after) = t.get("/metrics").await;
    let after = after.as_str().unwrap();
    assert_eq!(count(after), before, "series grew with client input");
    assert!(after.contains(r#"method="other""#));
    assert!(!after.contains("M17X") && !after.contains("/made/up/"));
}
