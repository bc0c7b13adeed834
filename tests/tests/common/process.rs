//! The `socialite` binary as an operator runs it, for the fault tests: built
//! from the code under test, started on free ports with the
//! tests' keys, probed over HTTP, and stopped with SIGTERM.

use super::{test_auth, TOKEN_SECRET};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a state a test waits for may take before the test fails (a
/// deadline for a clear failure, not a timing assertion).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The value of `var`, or `None` after saying why `test` is skipped (a
/// failure instead under `SOCIALITE_REQUIRE_SERVERS=1`, as in CI).
pub fn required_env(test: &str, var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            if std::env::var("SOCIALITE_REQUIRE_SERVERS").as_deref() == Ok("1") {
                panic!("{test}: SOCIALITE_REQUIRE_SERVERS=1 but {var} is unset");
            }
            // Straight to the terminal: the test harness captures print!.
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: set {var} to {what}");
            None
        }
    }
}

/// The `socialite` binary, compiled from its package's source as a binary
/// of this test package (see tests/Cargo.toml), so built before the tests.
pub fn socialite_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_e2e-socialite"))
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `socialite up` on a data directory, killed when dropped.
pub struct Server {
    child: Option<Child>,
    pub base: String,
    log: PathBuf,
}

impl Server {
    /// Starts `socialite up` over `data` with `more` arguments, its log in
    /// `log`.
    pub fn start(bin: &Path, data: &Path, more: &[&str], log: PathBuf) -> Server {
        let rest = format!("127.0.0.1:{}", free_port());
        let grpc = format!("127.0.0.1:{}", free_port());
        let child = Command::new(bin)
            .args(["up", "--rest-addr", &rest, "--grpc-addr", &grpc])
            .arg("--data-dir")
            .arg(data)
            .args(more)
            .env("SOCIALITE_API_KEYS", test_auth().api_keys.text.unwrap())
            .env("SOCIALITE_TOKEN_SECRETS", TOKEN_SECRET)
            .env("SOCIALITE_RATE_LIMIT_USER", "0")
            .env("RUST_LOG", "info,librdkafka=warn,rdkafka=warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("starting socialite up");
        Server {
            child: Some(child),
            base: format!("http://{rest}"),
            log,
        }
    }

    /// Kills the process with SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `/readyz` answers `want`; returns its body.
    pub async fn readyz(&self, http: &Client, want: StatusCode) -> Value {
        self.readyz_until(http, want, |_| true).await
    }

    /// Waits until `/readyz` answers `want` with a body `accept` takes.
    pub async fn readyz_until(
        &self,
        http: &Client,
        want: StatusCode,
        accept: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + PATIENCE;
        let mut last = String::from("no answer");
        loop {
            if let Ok(resp) = http.get(format!("{}/readyz", self.base)).send().await {
                let status = resp.status();
                let body: Value = resp.json().await.unwrap_or(Value::Null);
                if status == want && accept(&body) {
                    return body;
                }
                last = format!("{status} {body}");
            }
            assert!(
                Instant::now() < deadline,
                "/readyz never answered {want} as expected; last {last}; the log:\n{}",
                self.log_text()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Sends SIGTERM and waits for the exit: at most the grace period and a
    /// margin for a loaded machine, or the test fails.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        signal(child.id(), "-TERM");
        let limit = socialite_core::shutdown::GRACE + Duration::from_secs(10);
        let deadline = Instant::now() + limit;
        let sent = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                // For the record (--nocapture); the test asserts the limit.
                eprintln!("SIGTERM to exit: {:.1} s", sent.elapsed().as_secs_f64());
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "SIGTERM did not end the process within {} s; its log:\n{}",
                    limit.as_secs(),
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends a signal (`-TERM`, `-KILL`) to a process.
pub fn signal(pid: u32, which: &str) {
    let sent = Command::new("kill")
        .args([which, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {which} {pid}");
}

/// GET `url`: the status and the body (JSON, else the text as a string).
pub async fn get(http: &Client, url: String) -> (StatusCode, Value) {
    let resp = http.get(&url).send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

/// Sends as a well-behaved client does: a write the producer sheds while
/// fanout is behind (503 `overloaded` with `Retry-After`: the stand-ins on
/// a busy machine lag, a worker may be joining its group) was not taken,
/// and is sent again after its `Retry-After`, for up to `PATIENCE`. The
/// status and the body (JSON, else `null`) of the answer that was not shed.
pub async fn send_as_client(
    http: &Client,
    method: reqwest::Method,
    url: &str,
    body: Option<&Value>,
) -> (StatusCode, Value) {
    let until = Instant::now() + PATIENCE;
    loop {
        let mut req = http.request(method.clone(), url);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let retry = resp.headers().get("retry-after").cloned();
        let text = resp.text().await.unwrap();
        let shed = status == StatusCode::SERVICE_UNAVAILABLE && text.contains("\"overloaded\"");
        if !shed || Instant::now() > until {
            return (status, serde_json::from_str(&text).unwrap_or(Value::Null));
        }
        let secs: u64 = retry
            .and_then(|r| r.to_str().ok()?.parse().ok())
            .expect("a shed write says when to retry");
        tokio::time::sleep(Duration::from_secs(secs.clamp(1, 2))).await;
    }
}

/// The failing check of a `/readyz` body named `name`, if it fails.
pub fn failing<'b>(body: &'b Value, name: &str) -> Option<&'b Value> {
    body["checks"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name && c["ok"] == false)
}
