//! Hostile clients: every refusal made before a handler runs is the API's
//! JSON error with the request's id, a declared oversize body is refused
//! before it is sent, and a connection that sends no complete request head
//! is closed.

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
