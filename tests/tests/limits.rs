//! What a hostile client can hold, tried against a running server:
//! connections that send nothing, more connections than the caps, streams
//! that outlive their credential or pile up, metric series from made-up
//! gRPC methods, and the smaller refusals (two Authorization headers,
//! control characters, follows past the cap).

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn addr(base: &str) -> String {
    base.trim_start_matches("http://").to_owned()
}

/// Reads until the server closes the connection (or `within` passes);
/// returns what it sent and whether it closed.
async fn read_to_close(s: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let closed = tokio::time::timeout(within, s.read_to_end(&mut got)).await;
    (String::from_utf8_lossy(&got).into_owned(), closed.is_ok())
}

#[tokio::test]
async fn a_connection_that_sends_nothing_or_trickles_a_head_is_closed() {
    let t = spawn_app_configured(|c| c.limits.idle_timeout = Duration::from_secs(1)).await;
    for base in [&t.base, &t.grpc] {
        let started = Instant::now();
        let mut silent = TcpStream::connect(addr(base)).await.unwrap();
        let mut trickle = TcpStream::connect(addr(base)).await.unwrap();
        for _ in 0..3 {
            let _ = trickle.write_all(b"G").await;
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        let (_, closed) = read_to_close(&mut silent, Duration::from_secs(5)).await;
        assert!(closed, "{base}: an idle connection stays open");
        let (_, closed) = read_to_close(&mut trickle, Duration::from_secs(5)).await;
        assert!(closed, "{base}: a trickled head keeps the connection");
        assert!(started.elapsed() < Duration::from_secs(6));
    }
    // A connection in use is not cut.
    let (status, _) = t.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn past_the_caps_only_healthz_answers_and_streams_are_not_cut() {
    let t = spawn_app_configured(|c| {
        c.limits.max_connections_per_ip = 2;
        c.limits.idle_timeout = Duration::from_secs(30);
    })
    .await;
    let held = [
        TcpStream::connect(addr(&t.base)).await.unwrap(),
        TcpStream::connect(addr(&t.base)).await.unwrap(),
    ];
    let ask = |path: &'static str| {
        let a = addr(&t.base);
        async move {
            let mut s = TcpStream::connect(a).await.unwrap();
            let req = format!(
                "GET {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {ADMIN_KEY}\r\n\r\n"
            );
            s.write_all(req.as_bytes()).await.unwrap();
            let (text, closed) = read_to_close(&mut s, Duration::from_secs(5)).await;
            assert!(closed, "an overflow connection is closed");
            text
        }
    };
    let started = Instant::now();
    let health = ask("/healthz").await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(started.elapsed() < Duration::from_millis(2_000));
    let refused = ask("/users/alice").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("too_many_connections"), "{refused}");
    drop(held);
    eventually("a place to free", || async {
        t.http
            .get(format!("{}/healthz", t.base))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
    })
    .await;
    let text = metrics_text(&t).await;
    assert!(
        text.contains("socialite_connections_refused_total{reason=\"address\"}"),
        "{text}"
    );
}

#[tokio::test]
async fn made_up_grpc_methods_share_one_metric_label() {
    let t = spawn_app().await;
    let channel = tonic::transport::Channel::from_shared(t.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    for n in 0..20 {
        let mut grpc = tonic::client::Grpc::new(channel.clone());
        grpc.ready().await.unwrap();
        let path = format!("/socialite.v1.r{n}/{}", "x".repeat(500));
        let path = tonic::codegen::http::uri::PathAndQuery::try_from(path).unwrap();
        let mut req = tonic::Request::new(socialite_proto::v1::UserRef { id: "a".into() });
        req.metadata_mut()
            .insert("authorization", "garbage".parse().unwrap());
        let codec = tonic_prost::ProstCodec::<
            socialite_proto::v1::UserRef,
            socialite_proto::v1::UserRef,
        >::default();
        let err = grpc.unary(req, path, codec).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::Unauthenticated);
    }
    let text = metrics_text(&t).await;
    assert!(
        !text.contains("socialite.v1.r1"),
        "a made-up method became a label"
    );
    assert!(text.contains("method=\"other\""));
}

#[tokio::test]
async fn smaller_refusals_name_their_problem() {
    let t = spawn_app_configured(|c| c.limits.max_following = 2).await;
    for u in ["alice", "b1", "b2", "b3"] {
        t.put_user(u).await;
    }
    // Two Authorization headers.
    let resp = reqwest::Client::new()
        .get(format!("{}/users/alice", t.base))
        .header("authorization", format!("Bearer {ADMIN_KEY}"))
        .header("authorization", format!("Bearer {}", token_for("alice")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "duplicate_authorization");
    // A write answers with what it wrote, not with what a read would show.
    let (status, _) = t
        .call(
            Method::PUT,
            "/users/alice",
            Some(json!({ "profile": { "secret": 1 } })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let resp = client_with(WRITE_KEY)
        .put(format!("{}/users/alice", t.base))
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["profile"], Value::Null, "{body}");
    let (_, stored) = t.get("/users/alice").await;
    assert_eq!(
        stored["profile"],
        json!({ "secret": 1 }),
        "the put without a body kept it"
    );
    // Control characters in a message.
    for bad in ["nul\u{0}", "\u{1b}[2Jclear"] {
        let (status, body) = t
            .call(
                Method::POST,
                "/users/alice/posts",
                Some(json!({ "message": bad })),
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("control_character"))
        );
    }
    // Follows past the cap; refiling an existing edge is not a new one.
    t.follow("alice", "b1").await;
    t.follow("alice", "b2").await;
    let (status, body) = t.call(Method::PUT, "/users/alice/following/b3", None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("too_many_following"))
    );
    let (status, _) = t.call(Method::PUT, "/users/alice/following/b2", None).await;
    assert_eq!(status, StatusCode::OK);
}

/// Reads a stream until an `end` event arrives; returns its data.
async fn end_of(resp: &mut reqwest::Response, within: Duration) -> String {
    let mut text = String::new();
    let found = tokio::time::timeout(within, async {
        while let Some(chunk) = resp.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(at) = text.find("event: end") {
                return text[at..].to_owned();
            }
        }
        String::new()
    })
    .await;
    found.unwrap_or_else(|_| panic!("no end event; got {text}"))
}

#[tokio::test]
async fn streams_end_with_their_credential_and_are_capped() {
    let t = spawn_app_configured(|c| c.limits.max_streams_per_user = 2).await;
    for u in ["alice", "bob"] {
        t.put_user(u).await;
    }
    let open = |credential: String, user: &'static str| {
        client_with(&credential)
            .get(format!("{}/users/{user}/timeline/stream", t.base))
            .send()
    };
    let mut by_token = open(token_for("alice"), "alice").await.unwrap();
    assert_eq!(by_token.status(), StatusCode::OK);
    let by_key = open(ADMIN_KEY.into(), "alice").await.unwrap();
    assert_eq!(by_key.status(), StatusCode::OK);
    let third = open(ADMIN_KEY.into(), "alice").await.unwrap();
    assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: Value = third.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_many_streams");
    // Revoked: the token's stream ends within a second or two, saying why.
    let (status, _) = t.call(Method::DELETE, "/users/alice/tokens", None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let end = end_of(&mut by_token, Duration::from_secs(5)).await;
    assert!(end.contains("token_revoked"), "{end}");
    // Its place is given back.
    eventually("the ended stream's place to free", || async {
        open(ADMIN_KEY.into(), "alice").await.unwrap().status() == StatusCode::OK
    })
    .await;
    drop(by_key);
    // A token that expires ends its stream at its expiry.
    let short =
        socialite_api::auth::tokens::mint(TOKEN_SECRET.as_bytes(), "bob", Duration::from_secs(2))
            .unwrap();
    let mut expiring = open(short, "bob").await.unwrap();
    assert_eq!(expiring.status(), StatusCode::OK);
    let end = end_of(&mut expiring, Duration::from_secs(6)).await;
    assert!(end.contains("expired_token"), "{end}");
    let text = metrics_text(&t).await;
    assert!(
        text.contains("socialite_live_streams_refused_total{reason=\"user\"} 1"),
        "{text}"
    );
}

async fn metrics_text(t: &TestApp) -> String {
    let resp = t.http.get(format!("{}/metrics", t.base)).send().await;
    resp.unwrap().text().await.unwrap()
}

/// What the HTTP library refuses before any handler runs (a URL over
/// 64 KiB, 150 headers, 500 KB of headers, a malformed request line) is
/// answered with the API's JSON error, and counted.
#[tokio::test]
async fn requests_the_http_library_refuses_get_the_json_error() {
    let t = spawn_app().await;
    let many: String = (0..150).map(|i| format!("x-h{i}: v\r\n")).collect();
    let cases = [
        (
            format!("GET /{} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(70_000)),
            414,
            "uri_too_long",
        ),
        (
            format!("GET / HTTP/1.1\r\nhost: x\r\n{many}\r\n"),
            431,
            "headers_too_large",
        ),
        (
            format!(
                "GET / HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n",
                "v".repeat(500_000)
            ),
            431,
            "headers_too_large",
        ),
        ("BLAH\r\n\r\n".to_owned(), 400, "invalid_request"),
    ];
    for (raw, status, code) in cases {
        let mut s = TcpStream::connect(addr(&t.base)).await.unwrap();
        let _ = s.write_all(raw.as_bytes()).await;
        // Closed after the answer, or at the latest by the idle timeout (5 s):
        // the wait leaves a loaded machine room past it.
        let (text, closed) = read_to_close(&mut s, Duration::from_secs(15)).await;
        assert!(closed, "{text}");
        assert!(text.starts_with(&format!("HTTP/1.1 {status} ")), "{text}");
        let body: Value = serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(body["error"]["code"], code, "{text}");
    }
    let text = metrics_text(&t).await;
    assert!(text.contains("route=\"unparsed\""), "{text}");
}

/// A gRPC stream ends like an SSE one: its token revoked, it ends with the
/// status that says so.
#[tokio::test]
async fn a_grpc_stream_ends_when_its_token_is_revoked() {
    let t = spawn_app().await;
    t.put_user("alice").await;
    let channel = tonic::transport::Channel::from_shared(t.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let token = token_for("alice");
    let bearer = socialite_bench::target::Bearer::new(Some(&token)).unwrap();
    let mut live = socialite_proto::v1::live_client::LiveClient::with_interceptor(channel, bearer);
    let req = socialite_proto::v1::StreamTimelineRequest {
        user: "alice".into(),
        last_event_id: String::new(),
    };
    let mut s = live.stream_timeline(req).await.unwrap().into_inner();
    let (status, _) = t.call(Method::DELETE, "/users/alice/tokens", None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let ended = tokio::time::timeout(Duration::from_secs(5), s.message())
        .await
        .expect("the stream ends within the recheck")
        .unwrap_err();
    assert_eq!(ended.code(), tonic::Code::Unauthenticated);
    assert!(ended.message().starts_with("token_revoked"), "{ended:?}");
}

/// The embedded stores are the users' data: a new data directory is made
/// readable by its owner only, and so are its files.
#[cfg(unix)]
#[tokio::test]
async fn data_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let t = spawn_app_configured(|c| {
        let data = c.storage.embedded.data_dir.join("nested").join("data");
        c.storage.embedded.data_dir = data.clone();
        c.storage.store = format!("embedded://{}", data.display());
        c.storage.event_log = format!("embedded://{}", data.display());
    })
    .await;
    let data = t.dir.path().join("nested").join("data");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    for f in ["content.redb", "log.redb"] {
        assert_eq!(mode(&data.join(f)), 0o600, "{f}");
    }
}
