//! Hostile clients: every refusal made before a handler runs is the API's
//! JSON error with the request's id, a declared oversize body is refused
//! before it is sent, a connection that sends no complete request head
//! is closed, and a crowd of clients that send their bodies too slowly is
//! answered 408 without flooding the log.

mod common;

use common::*;
use reqwest::StatusCode;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

async fn refused(resp: reqwest::Response) -> (StatusCode, serde_json::Value, String) {
    let status = resp.status();
    let id = resp
        .headers()
        .get("x-request-id")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = resp.json().await.unwrap_or_default();
    (status, body, id)
}

#[tokio::test]
async fn refusals_before_the_handler_are_json_with_the_request_id() {
    let t = spawn_app().await;
    t.put_user("h").await;
    let long = format!("{}/users/h?x={}", t.base, "a".repeat(5000));
    let (status, body, id) = refused(t.http.get(long).send().await.unwrap()).await;
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (414, Some("uri_too_long"))
    );
    assert_eq!(body["error"]["request_id"].as_str(), Some(id.as_str()));
    assert!(!id.is_empty());

    let mut req = t.http.get(format!("{}/users/h", t.base));
    for i in 0..40 {
        req = req.header(format!("x-filler-{i}"), "v".repeat(500));
    }
    let (status, body, _) = refused(req.send().await.unwrap()).await;
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (431, Some("headers_too_large"))
    );

    let resp = t
        .http
        .post(format!("{}/users/h/posts", t.base))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .header("x-request-id", "client-chosen-42")
        .body("{}")
        .send()
        .await
        .unwrap();
    let (status, body, id) = refused(resp).await;
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (415, Some("unsupported_content_encoding"))
    );
    assert_eq!(id, "client-chosen-42", "a client's id is kept");
    assert_eq!(body["error"]["request_id"], "client-chosen-42");

    // Successful answers carry the id too.
    let resp = t
        .http
        .get(format!("{}/users/h", t.base))
        .send()
        .await
        .unwrap();
    assert!(resp.headers().contains_key("x-request-id"));
}

/// Raw HTTP/1.1 on a socket: what a client that misbehaves sends.
fn raw(t: &TestApp, request: &str, wait: Duration) -> String {
    let addr = t.base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_oversize_body_is_refused_before_it_is_sent() {
    let t = spawn_app().await;
    t.put_user("big").await;
    let request = "POST /users/big/posts HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                   content-length: 100000000000\r\nexpect: 100-continue\r\n\r\n";
    let reply = tokio::task::spawn_blocking(move || raw(&t, request, Duration::from_secs(5)))
        .await
        .unwrap();
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(!reply.contains("100 Continue"), "{reply}");
    assert!(reply.contains("body_too_large"), "{reply}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_finishes_its_head_is_closed() {
    let t = spawn_app().await;
    let started = Instant::now();
    let reply = tokio::task::spawn_blocking(move || {
        raw(
            &t,
            "GET /healthz HTTP/1.1\r\nhost: x\r\nx-slow: ",
            Duration::from_secs(30),
        )
    })
    .await
    .unwrap();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(25),
        "the server kept a half-sent request open for {took:?}"
    );
    assert!(!reply.contains("200 OK"), "{reply}");
}

/// Log lines, as the test's subscriber writes them.
#[derive(Clone, Default)]
struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Clients that start a body and never finish it are the clients' fault:
/// each is answered 408 `body_timeout` when the request's time runs out
/// (30 s in the binaries; 2 s here, so that the test does not wait 30 s),
/// and the log gets one line for all of them, not an ERROR each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_uploads_are_answered_408_without_flooding_the_log() {
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let installed = tracing_subscriber::util::SubscriberInitExt::try_init(subscriber);
    installed.expect("the only global subscriber");
    let t = spawn_app_configured(|c| c.limits.request_timeout = Duration::from_secs(2)).await;
    t.put_user("slow").await;
    let addr = t.base.trim_start_matches("http://").to_owned();
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let addr = addr.clone();
            tokio::task::spawn_blocking(move || {
                let mut s = std::net::TcpStream::connect(&addr).unwrap();
                let head = format!(
                    "POST /users/slow/posts HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {ADMIN_KEY}\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n{{\"message\":"
                );
                s.write_all(head.as_bytes()).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(90))).unwrap();
                let mut answer = Vec::new();
                let _ = s.read_to_end(&mut answer);
                String::from_utf8_lossy(&answer).into_owned()
            })
        })
        .collect();
    for client in clients {
        let answer = client.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("\"body_timeout\""), "{answer}");
    }
    let logged = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let errors = logged
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("/users/slow/posts"))
        .count();
    assert_eq!(errors, 0, "{logged}");
    assert_eq!(logged.matches("too slowly").count(), 1, "{logged}");
}
