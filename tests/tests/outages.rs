//! MongoDB and Kafka going away under a running `socialite up`, as an
//! operator meets it: the process stays alive, says it is not ready and
//! which backend is unreachable while it is gone, is ready again when it
//! returns (with no restart), and SIGTERM meanwhile ends it within the
//! grace period, cleanly. Each test runs a stand-in of its own that it
//! kills and starts again: SecantusDB (`SOCIALITE_TEST_SECANTUS`, the
//! `secantusd-py` binary) and tansu (`SOCIALITE_TEST_TANSU`).

mod common;

use common::process::{failing, free_port, get, required_env, socialite_binary, Server, PATIENCE};
use common::{client_with, ADMIN_KEY};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A stand-in server of the test's own, on a fixed port and data
/// directory, so it can be killed and started again with its data.
struct StandIn {
    name: &'static str,
    command: Vec<String>,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl StandIn {
    fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{}.log", self.name)))
            .unwrap();
        let child = Command::new(&self.command[0])
            .args(&self.command[1..])
            .current_dir(&self.dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", self.name));
        self.child = Some(child);
        let deadline = Instant::now() + PATIENCE;
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "{} did not start", self.name);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILL: the server is gone at once, as a crashed host would be.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn post(http: &Client, base: &str, message: &str) -> (StatusCode, Value) {
    let resp = http
        .post(format!("{base}/users/alice/posts"))
        .json(&json!({ "message": message }))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Alice and bob, who follows her and reads his timeline.
async fn people(http: &Client, base: &str) {
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
    get(http, format!("{base}/users/bob/timeline")).await;
}

/// Waits until `/readyz` says `check` is unreachable; returns the check.
async fn unreachable(http: &Client, server: &Server, check: &str) -> Value {
    let gone = |b: &Value| failing(b, check).is_some_and(|c| c["reason"] == "unreachable");
    let body = server
        .readyz_until(http, StatusCode::SERVICE_UNAVAILABLE, gone)
        .await;
    failing(&body, check).unwrap().clone()
}

/// Kills the stand-in under a running `socialite up` and checks what the
/// process says, brings it back and checks it recovers, kills it again
/// and stops the process with SIGTERM.
async fn outage(bin: &Path, data: &Path, args: &[&str], stand_in: &mut StandIn, check: &str) {
    let logs = tempfile::tempdir().unwrap();
    let http = client_with(ADMIN_KEY);
    let mut server = Server::start(bin, data, args, logs.path().join("up.log"));
    server.readyz(&http, StatusCode::OK).await;
    let base = server.base.clone();
    people(&http, &base).await;
    let (status, body) = post(&http, &base, "before").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    stand_in.kill();
    let failed = unreachable(&http, &server, check).await;
    assert_eq!(failed["recovers"], true, "{failed}");
    let (status, alive) = get(&http, format!("{base}/healthz")).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "alive while {check} is gone: {alive}"
    );

    stand_in.start();
    server.readyz(&http, StatusCode::OK).await;
    // What the outage held back is delivered first: while fanout is more
    // than the freshness target behind, a new post may be refused with
    // 503 `overloaded` and `Retry-After` (docs/overload.md), and a client
    // that waits as told gets it taken.
    let (mut status, mut body) = post(&http, &base, "after it came back").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while status == StatusCode::SERVICE_UNAVAILABLE
        && body["error"]["code"] == "overloaded"
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_secs(1)).await;
        (status, body) = post(&http, &base, "after it came back").await;
    }
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{body}; log:\n{}",
        server.log_text()
    );

    stand_in.kill();
    unreachable(&http, &server, check).await;
    // A request in flight while it is gone, as SIGTERM arrives.
    let pending = {
        let request = http
            .post(format!("{base}/users/alice/posts"))
            .json(&json!({ "message": "during the outage" }));
        // Answered 503, or cut when the process ends: either is fine.
        tokio::spawn(async move { request.send().await.map(|r| r.status()) })
    };
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
    let _ = pending.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mongodb_gone_is_not_ready_then_ready_again_and_sigterm_ends_the_process() {
    let test = "mongodb_gone_is_not_ready_then_ready_again_and_sigterm_ends_the_process";
    let what = "the SecantusDB server binary (secantusd-py)";
    let Some(secantus) = required_env(test, "SOCIALITE_TEST_SECANTUS", what) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut mongo = StandIn {
        name: "secantus",
        command: [
            secantus.as_str(),
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--storage-path",
            "mongo-data",
            // Killed with SIGKILL, it must keep what it acknowledged.
            "--sync-on-commit",
        ]
        .map(String::from)
        .to_vec(),
        dir: dir.path().to_path_buf(),
        port,
        child: None,
    };
    mongo.start();
    let store = format!("mongodb://127.0.0.1:{port}/outage?directConnection=true");
    let data = dir.path().join("data");
    let args = ["--store", store.as_str()];
    outage(
        &socialite_binary(),
        &data,
        &args,
        &mut mongo,
        "content_store",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_gone_is_not_ready_then_ready_again_and_sigterm_ends_the_process() {
    let test = "kafka_gone_is_not_ready_then_ready_again_and_sigterm_ends_the_process";
    let Some(tansu) = required_env(test, "SOCIALITE_TEST_TANSU", "the tansu binary") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("tcp://127.0.0.1:{port}");
    let mut kafka = StandIn {
        name: "tansu",
        command: [
            tansu.as_str(),
            "broker",
            "--listener-url",
            &url,
            "--advertised-listener-url",
            &url,
            // tansu takes the SQLite path relative to its working directory.
            "--storage-engine",
            "sqlite://tansu.db",
        ]
        .map(String::from)
        .to_vec(),
        dir: dir.path().to_path_buf(),
        port,
        child: None,
    };
    kafka.start();
    let log = format!("kafka://127.0.0.1:{port}?partitions=2&topic_prefix=outage");
    let data = dir.path().join("data");
    let args = ["--event-log", log.as_str()];
    outage(&socialite_binary(), &data, &args, &mut kafka, "event_log").await;
}
