//! A full disk under the embedded default, as an operator meets it: the
//! `socialite up` binary runs with its data directory on a small file
//! system (`SOCIALITE_TEST_SMALL_FS`, a mounted tmpfs or loop device that
//! `.ci/run` makes), posts fill it, and then:
//!
//! - writes are refused with 503 naming the cause, `/readyz` is not ready
//!   and names the store and `no_space`, `/healthz` says the process is
//!   alive and recovering, and the metric says why;
//! - once space is freed, writes resume by themselves (no restart);
//! - SIGTERM while the disk is full ends the process within the grace
//!   period, cleanly;
//! - every acknowledged post is there, before and after a restart.
//!
//! Skipped when `SOCIALITE_TEST_SMALL_FS` is unset, unless
//! `SOCIALITE_REQUIRE_SERVERS=1` (CI) makes that a failure.

mod common;

use common::process::{get, required_env, socialite_binary, Server, PATIENCE};
use common::{client_with, ADMIN_KEY};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A post of about 4 KB: what fills the disk.
fn message(n: usize) -> String {
    let filler: String = (0..3990)
        .map(|i| (b'a' + ((i * 7 + n) % 26) as u8) as char)
        .collect();
    format!("{n:08} {filler}")
}

/// Posts from several clients at once until `refusals` posts were refused;
/// adds the acknowledged ids to `acked`, returns the first refusal.
async fn post_until_refused(
    http: &Client,
    base: &str,
    refusals: usize,
    acked: &mut Vec<String>,
) -> (StatusCode, Value) {
    let deadline = Instant::now() + PATIENCE * 3;
    let mut refused = Vec::new();
    let mut shed = false;
    let mut n = acked.len() * 10;
    while refused.len() < refusals {
        assert!(Instant::now() < deadline, "the disk never filled");
        let mut batch = Vec::new();
        for _ in 0..8 {
            n += 1;
            let (http, url) = (http.clone(), format!("{base}/users/alice/posts"));
            let body = json!({ "message": message(n) });
            batch.push(tokio::spawn(async move {
                let resp = http.post(url).json(&body).send().await.unwrap();
                let status = resp.status();
                (status, resp.json::<Value>().await.unwrap_or(Value::Null))
            }));
        }
        for task in batch {
            let (status, body) = task.await.unwrap();
            match status {
                StatusCode::CREATED => acked.push(body["id"].as_str().unwrap().to_owned()),
                // Shed while fanout is behind (a loaded machine, or the
                // worker stopped by the full disk): not what the test
                // waits for; the next batch tries again.
                _ if body["error"]["code"] == "overloaded" => shed = true,
                _ => refused.push((status, body)),
            }
        }
        if std::mem::take(&mut shed) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    refused.swap_remove(0)
}

/// Every post of alice's, through the pages of `/users/alice/posts`.
async fn listed(http: &Client, base: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut before: Option<String> = None;
    loop {
        let mut url = format!("{base}/users/alice/posts?limit=100");
        if let Some(b) = &before {
            url.push_str(&format!("&before={b}"));
        }
        let (status, body) = get(http, url).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let posts = body["posts"].as_array().unwrap();
        ids.extend(posts.iter().map(|p| p["id"].as_str().unwrap().to_owned()));
        match body["next_cursor"].as_str() {
            Some(c) if !posts.is_empty() => before = Some(c.to_owned()),
            _ => return ids,
        }
    }
}

fn assert_all_present(acked: &[String], present: &BTreeSet<String>, when: &str) {
    let missing: Vec<&String> = acked.iter().filter(|id| !present.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{when}: {} of {} acknowledged posts are missing, e.g. {:?}",
        missing.len(),
        acked.len(),
        &missing[..missing.len().min(5)]
    );
}

/// Writes zeros into a new file at `path` until the file system is full;
/// returns how many bytes it took.
fn fill(path: &Path) -> u64 {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 64 << 10];
    let mut written = 0;
    loop {
        match file.write(&chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => written += n as u64,
        }
    }
    let _ = file.sync_all();
    written
}

/// The check of a `/readyz` body that fails for lack of space.
fn out_of_space(body: &Value) -> Option<&Value> {
    body["checks"]
        .as_array()?
        .iter()
        .find(|c| c["ok"] == false && c["reason"] == "no_space")
}

async fn post_one(http: &Client, base: &str, message: &str) -> String {
    let resp = http
        .post(format!("{base}/users/alice/posts"))
        .json(&json!({ "message": message }))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

async fn metrics_text(http: &Client, base: &str) -> String {
    let resp = http.get(format!("{base}/metrics")).send().await.unwrap();
    resp.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_stops_writes_says_why_and_recovers_when_space_returns() {
    let test = "a_full_disk_stops_writes_says_why_and_recovers_when_space_returns";
    let what = "a small mounted file system (e.g. a 24 MB tmpfs)";
    let Some(fs) = required_env(test, "SOCIALITE_TEST_SMALL_FS", what) else {
        return;
    };
    let bin = socialite_binary();
    let root = PathBuf::from(fs).join(format!("full-disk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    // Dropped last, however the test ends: the next run needs the room.
    let _cleanup = RemoveOnDrop(root.clone());
    let logs = tempfile::tempdir().unwrap();
    let data = root.join("data");
    let http = client_with(ADMIN_KEY);

    // Room the test takes back later, twice: a third of the file system's
    // free space each, so that what waits in the outbox while the log is
    // full fits when it comes back.
    let first_ballast = root.join("ballast-1");
    let second_ballast = root.join("ballast-2");
    let free = fill(&first_ballast);
    assert!(free > 6 << 20, "{} has less than 6 MB free", root.display());
    let file = std::fs::OpenOptions::new().write(true).open(&first_ballast);
    file.unwrap().set_len(free / 3).unwrap();
    std::fs::copy(&first_ballast, &second_ballast).unwrap();

    let mut server = Server::start(&bin, &data, &[], logs.path().join("up-1.log"));
    server.readyz(&http, StatusCode::OK).await;
    let base = server.base.clone();
    for user in ["alice", "bob"] {
        let resp = http
            .put(format!("{base}/users/{user}"))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "creating {user}");
    }
    let follow = http.put(format!("{base}/users/bob/following/alice"));
    assert!(follow.send().await.unwrap().status().is_success());
    get(&http, format!("{base}/users/bob/timeline")).await; // bob is active

    // Fill it: refused with 503, naming the cause.
    let mut acked = Vec::new();
    let (status, refusal) = post_until_refused(&http, &base, 10, &mut acked).await;
    assert!(
        !acked.is_empty(),
        "nothing was acknowledged before the disk filled"
    );
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refusal}");
    assert_eq!(refusal["error"]["code"], "unavailable", "{refusal}");
    let said = refusal["error"]["message"].as_str().unwrap().to_lowercase();
    assert!(said.contains("no space left on device"), "{refusal}");

    // Not ready, naming the store and why; alive and recovering; the metric.
    let full = |b: &Value| out_of_space(b).is_some();
    let body = server
        .readyz_until(&http, StatusCode::SERVICE_UNAVAILABLE, full)
        .await;
    let check = out_of_space(&body).unwrap();
    let store = check["name"].as_str().unwrap().to_owned();
    assert!(
        ["content_store", "event_log"].contains(&store.as_str()),
        "{body}"
    );
    let error = check["error"].as_str().unwrap().to_lowercase();
    assert!(error.contains("no space left on device"), "{body}");
    assert_eq!(check["recovers"], true, "{body}");
    let (status, alive) = get(&http, format!("{base}/healthz")).await;
    assert_eq!(status, StatusCode::OK, "{alive}");
    assert_eq!(alive["status"], "recovering", "{alive}");
    let series = format!("socialite_store_fault{{store=\"{store}\",reason=\"no_space\"}} 1");
    let deadline = Instant::now() + PATIENCE;
    while !metrics_text(&http, &base).await.contains(&series) {
        assert!(Instant::now() < deadline, "{series} is not in /metrics");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Space comes back: writes resume without a restart.
    std::fs::remove_file(&first_ballast).unwrap();
    server.readyz(&http, StatusCode::OK).await;
    acked.push(post_one(&http, &base, "after the disk was freed").await);
    assert_all_present(&acked, &listed(&http, &base).await, "after recovering");
    let (_, alive) = get(&http, format!("{base}/healthz")).await;
    assert_eq!(alive["status"], "ok", "{alive}");
    let recovered = metrics_text(&http, &base).await;
    assert!(
        recovered.contains(&format!(
            "socialite_store_recoveries_total{{store=\"{store}\"}} "
        )),
        "{recovered}"
    );

    // Filled again by posts (the log too, usually, while the fanout worker
    // owes a commit, as in finding 9), then SIGTERM: the process ends
    // within its grace period, cleanly.
    post_until_refused(&http, &base, 10, &mut acked).await;
    server.readyz(&http, StatusCode::SERVICE_UNAVAILABLE).await;
    let status = server.terminate();
    assert!(
        status.success(),
        "exit {status:?}; the log:\n{}",
        server.log_text()
    );
    assert!(
        server.log_text().contains("stopped"),
        "{}",
        server.log_text()
    );

    // Restarted with room again: every acknowledged post is there.
    std::fs::remove_file(&second_ballast).unwrap();
    let server = Server::start(&bin, &data, &[], logs.path().join("up-2.log"));
    server.readyz(&http, StatusCode::OK).await;
    assert_all_present(
        &acked,
        &listed(&http, &server.base).await,
        "after a restart",
    );
    post_one(&http, &server.base, "after the restart").await;
}

/// Removes a directory when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
