//! The firehose end to end: the network's public acts over SSE and gRPC,
//! resumed from any cursor with nothing lost or repeated, nothing private,
//! filters, the refusals, the caps, a reader that stops reading cut off
//! while another goes on, and the same on MongoDB + Kafka.

mod common;

use common::process::send_as_client;
use common::servers::Servers;
use common::sse::{Sse, SseReader};
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use socialite_proto::v1::firehose_client::FirehoseClient;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn open(base: &str, credential: &str, query: &str, last: Option<&str>) -> reqwest::Response {
    let client = match credential {
        "" => reqwest::Client::new(),
        key => client_with(key),
    };
    let mut req = client.get(format!("{base}/firehose{query}"));
    if let Some(last) = last {
        req = req.header("last-event-id", last);
    }
    req.send().await.unwrap()
}

async fn follow(base: &str, query: &str, last: Option<&str>) -> SseReader {
    SseReader::new(open(base, FIREHOSE_KEY, query, last).await)
}

/// The next `n` acts (checkpoints skipped), as (kind, actor, cursor, data).
async fn acts(s: &mut SseReader, n: usize) -> Vec<Sse> {
    let mut out = Vec::new();
    while out.len() < n {
        let e = s.next().await;
        assert_ne!(e.event, "end", "{e:?}");
        if e.event != "checkpoint" {
            assert_eq!(e.id.as_deref(), e.data["cursor"].as_str(), "{e:?}");
            out.push(e);
        }
    }
    out
}

fn kinds(events: &[Sse]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {}", e.event, e.data["actor"].as_str().unwrap()))
        .collect()
}

/// No act within a second (checkpoints may come).
async fn quiet(s: &mut SseReader) {
    let waited = tokio::time::timeout(Duration::from_secs(1), async {
        loop {
            let e = s.read().await.expect("the stream ended");
            if e.event != "checkpoint" {
                return e;
            }
        }
    })
    .await;
    assert!(waited.is_err(), "unexpected {waited:?}");
}

/// Public and private acts of alice and bob; the public ones, in order.
async fn history(t: &TestApp) -> Vec<&'static str> {
    t.put_user("alice").await;
    t.put_user("bob").await;
    t.follow("bob", "alice").await;
    let post = t.post("alice", "hello @bob").await;
    let (s, _) = t
        .call(Method::PUT, &format!("/users/bob/likes/{post}"), None)
        .await;
    assert_eq!(s, StatusCode::OK);
    // Private: a mute, a block, a marker.
    for path in ["/users/bob/mutes/alice", "/users/alice/blocks/carol"] {
        t.call(Method::PUT, path, None).await;
    }
    t.delete(&format!("/posts/{post}")).await;
    t.call(Method::PUT, "/users/bob/suspension", None).await;
    vec![
        "profile alice",
        "profile bob",
        "follow bob",
        "post alice",
        "like bob",
        "post_deleted alice",
        "account bob",
    ]
}

#[tokio::test]
async fn public_acts_stream_over_sse_and_resume_from_any_cursor() {
    let t = spawn_app().await;
    let mut s = follow(&t.base, "", None).await;
    let want = history(&t).await;
    let got = acts(&mut s, want.len()).await;
    assert_eq!(kinds(&got), want);
    quiet(&mut s).await;
    let post = &got[3].data["post"];
    assert_eq!(post["message"], "hello @bob");
    assert_eq!(post["mentions"], json!(["bob"]));
    assert_eq!(got[4].data["target"], "alice");
    assert_eq!(got[4].data["post_id"], post["id"]);
    assert_eq!(got[6].data["status"], "suspended");
    assert!(got[2].data["at"].as_str().unwrap().ends_with('Z'));
    // From any act's cursor, by query or by Last-Event-ID: the acts after it.
    for k in 0..got.len() {
        let cursor = got[k].id.as_deref().unwrap();
        let mut by_query = follow(&t.base, &format!("?cursor={cursor}"), None).await;
        assert_eq!(
            kinds(&acts(&mut by_query, want.len() - k - 1).await),
            want[k + 1..]
        );
        let mut by_header = follow(&t.base, "", Some(cursor)).await;
        assert_eq!(
            kinds(&acts(&mut by_header, want.len() - k - 1).await),
            want[k + 1..]
        );
        quiet(&mut by_header).await;
    }
    // Filters, in the query and in a body.
    let mut likes = follow(&t.base, "?cursor=1&kinds=like,account", None).await;
    assert_eq!(
        kinds(&acts(&mut likes, 2).await),
        ["like bob", "account bob"]
    );
    let mut of_alice = follow(&t.base, "?cursor=1&authors=alice", None).await;
    assert_eq!(
        kinds(&acts(&mut of_alice, 3).await),
        ["profile alice", "post alice", "post_deleted alice"]
    );
    let body = json!({"cursor": "1", "kinds": ["follow"], "authors": ["bob", "carol"]});
    let resp = client_with(FIREHOSE_KEY)
        .post(format!("{}/firehose", t.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        kinds(&acts(&mut SseReader::new(resp), 1).await),
        ["follow bob"]
    );
}

#[tokio::test]
async fn the_firehose_refuses_clearly_and_is_capped() {
    let t = spawn_app_configured(|c| c.limits.max_firehoses_per_key = 2).await;
    let code = |resp: reqwest::Response| async move {
        let status = resp.status();
        let body: Value = resp.json().await.unwrap();
        (status, body["error"]["code"].as_str().unwrap().to_owned())
    };
    let refused = [
        (ADMIN_KEY, "", StatusCode::FORBIDDEN, "missing_scope"),
        ("", "", StatusCode::UNAUTHORIZED, "unauthenticated"),
        // The credential before anything the request carries.
        (
            "",
            "?kinds=posts",
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        ),
        (
            ADMIN_KEY,
            "?cursor=x",
            StatusCode::FORBIDDEN,
            "missing_scope",
        ),
        (
            FIREHOSE_KEY,
            "?cursor=x",
            StatusCode::BAD_REQUEST,
            "invalid_cursor",
        ),
        (
            FIREHOSE_KEY,
            "?cursor=99999",
            StatusCode::BAD_REQUEST,
            "invalid_cursor",
        ),
        (
            FIREHOSE_KEY,
            "?kinds=posts",
            StatusCode::BAD_REQUEST,
            "invalid_kind",
        ),
        (
            FIREHOSE_KEY,
            "?authors=a%20b",
            StatusCode::BAD_REQUEST,
            "invalid_user_id",
        ),
        (
            FIREHOSE_KEY,
            "?what=1",
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
    ];
    for (key, query, status, want) in refused {
        let got = code(open(&t.base, key, query, None).await).await;
        assert_eq!(got, (status, want.to_owned()), "{key} {query}");
    }
    let token = token_for("alice");
    let got = code(open(&t.base, &token, "", None).await).await;
    assert_eq!(got, (StatusCode::FORBIDDEN, "server_key_required".into()));
    // Authors past the cap, and a body past its limit.
    let post = |body: Value| {
        client_with(FIREHOSE_KEY)
            .post(format!("{}/firehose", t.base))
            .json(&body)
            .send()
    };
    let many: Vec<String> = (0..10_001).map(|i| format!("user{i}")).collect();
    let got = code(post(json!({ "authors": many })).await.unwrap()).await;
    assert_eq!(got, (StatusCode::BAD_REQUEST, "too_many_authors".into()));
    let huge: Vec<String> = (0..20_000).map(|i| format!("{i:064}")).collect();
    let got = code(post(json!({ "authors": huge })).await.unwrap()).await;
    assert_eq!(
        got,
        (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large".into())
    );
    // Two connections per key here; a third waits for one to close.
    let first = follow(&t.base, "", None).await;
    let _second = follow(&t.base, "", None).await;
    let got = code(open(&t.base, FIREHOSE_KEY, "", None).await).await;
    assert_eq!(
        got,
        (StatusCode::TOO_MANY_REQUESTS, "too_many_firehoses".into())
    );
    drop(first);
    let mut reopened = None;
    for _ in 0..50 {
        let resp = open(&t.base, FIREHOSE_KEY, "", None).await;
        if resp.status() == StatusCode::OK {
            reopened = Some(resp);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        reopened.is_some(),
        "a closed connection gives its place back"
    );
}

#[tokio::test]
async fn a_reader_that_stops_reading_is_cut_off_and_another_goes_on() {
    let t = spawn_app_configured(|c| c.limits.firehose_stall = Duration::from_secs(1)).await;
    t.put_user("alice").await;
    // A client that reads the head of the response and then nothing, with
    // a small receive buffer.
    let addr = t.base.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    let head = format!(
        "GET /firehose HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {FIREHOSE_KEY}\r\n\r\n"
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    stalled.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let mut reader = follow(&t.base, "", None).await;
    // Posts of 4 KiB: enough to fill the buffers between the server and the
    // stalled client, and its queue.
    let message = "x".repeat(4000);
    let mut posted = 0;
    let mut ended = None;
    while ended.is_none() && posted < 3000 {
        for _ in 0..50 {
            t.post("alice", &message).await;
            posted += 1;
        }
        let (_, metrics) = t.call(Method::GET, "/metrics", None).await;
        let text = metrics.as_str().unwrap_or_default().to_owned();
        ended = text
            .lines()
            .find(|l| l.contains("firehose_ended_total") && l.contains("slow_reader"))
            .map(str::to_owned);
    }
    assert!(
        ended.is_some(),
        "the stalled client was not cut off after {posted} posts"
    );
    // The reader that reads got every post.
    assert_eq!(acts(&mut reader, posted).await.len(), posted);
}

#[tokio::test]
async fn public_acts_stream_over_grpc_and_resume() {
    let t = spawn_app().await;
    let mut client = FirehoseClient::connect(t.grpc.clone()).await.unwrap();
    let request = |cursor: &str, key: &str| {
        let mut r = tonic::Request::new(pb::FirehoseRequest {
            cursor: cursor.into(),
            kinds: vec![],
            authors: vec![],
        });
        r.metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
        r
    };
    let mut stream = client
        .subscribe(request("", FIREHOSE_KEY))
        .await
        .unwrap()
        .into_inner();
    let want = history(&t).await;
    let mut got = Vec::new();
    while got.len() < want.len() {
        let e = tokio::time::timeout(DEADLINE, stream.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if e.kind != "checkpoint" {
            got.push(e);
        }
    }
    let names: Vec<String> = got
        .iter()
        .map(|e| format!("{} {}", e.kind, e.actor))
        .collect();
    assert_eq!(names, want);
    assert_eq!(got[3].post.as_ref().unwrap().message, "hello @bob");
    assert_eq!(got[6].status, "suspended");
    let mut resumed = client
        .subscribe(request(&got[4].cursor, FIREHOSE_KEY))
        .await
        .unwrap()
        .into_inner();
    let next = resumed.message().await.unwrap().unwrap();
    assert_eq!(
        (next.kind.as_str(), next.cursor.as_str()),
        ("post_deleted", got[5].cursor.as_str())
    );
    let denied = client.subscribe(request("", ADMIN_KEY)).await.unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);
    let bad = client
        .subscribe(request("x", FIREHOSE_KEY))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
}

/// On MongoDB + Kafka, served by a process that runs no producer: every
/// act once, each account's in order, resumable.
#[tokio::test]
async fn the_firehose_follows_kafka_from_a_reading_process() {
    let Some(servers) = Servers::from_env("the_firehose_follows_kafka_from_a_reading_process")
    else {
        return;
    };
    let split = split_on(&servers, "firehose", 3).await;
    let (w, r) = (split.w.clone(), split.r.clone());
    let mut s = follow(&r, "", None).await;
    let http = client_with(ADMIN_KEY);
    let users = ["ann", "ben", "cat", "dan"];
    for u in users {
        let resp = http.put(format!("{w}/users/{u}")).send().await.unwrap();
        assert!(resp.status().is_success());
    }
    for i in 0..12 {
        // While the worker joins its group, the producer may shed writes
        // for fanout's lag: asked again, as a client does.
        let url = format!("{w}/users/{}/posts", users[i % 4]);
        let body = json!({ "message": format!("m{i}") });
        let (status, v) = send_as_client(&http, reqwest::Method::POST, &url, Some(&body)).await;
        assert!(status.is_success(), "{status} {v}");
    }
    let got = acts(&mut s, 16).await;
    // Each account's posts in order (one key of one topic); its profile
    // is on the other topic, so only its presence is asked.
    let of = |events: &[Sse], u: &str, kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.data["actor"] == u && e.event == kind)
            .map(|e| match kind {
                "post" => e.data["post"]["message"].as_str().unwrap().to_owned(),
                other => other.to_owned(),
            })
            .collect()
    };
    for (i, u) in users.iter().enumerate() {
        let posts: Vec<String> = (0..12)
            .filter(|j| j % 4 == i)
            .map(|j| format!("m{j}"))
            .collect();
        assert_eq!(of(&got, u, "post"), posts, "{u}");
        assert_eq!(of(&got, u, "profile"), ["profile"], "{u}");
    }
    // Resumed after the eighth act: exactly the eight after it (a log of
    // several partitions may interleave accounts otherwise).
    let mut resumed = follow(&r, "", got[7].id.as_deref()).await;
    // Each act as itself: the cursors differ (each is its reader's own).
    let sorted = |events: &[Sse]| {
        let mut v: Vec<String> = events
            .iter()
            .map(|e| {
                let mut data = e.data.clone();
                data.as_object_mut().unwrap().remove("cursor");
                data.to_string()
            })
            .collect();
        v.sort();
        v
    };
    let rest = acts(&mut resumed, 8).await;
    assert_eq!(sorted(&rest), sorted(&got[8..]));
    quiet(&mut resumed).await;
}

/// A cursor behind what the log keeps (here 3 events behind fanout) is
/// refused, naming the oldest cursor there is, which is taken.
#[tokio::test]
async fn a_cursor_the_log_no_longer_keeps_is_refused_naming_the_oldest() {
    let t = spawn_app_configured(|c| c.storage.embedded.log_retention = 3).await;
    t.put_user("alice").await;
    for i in 0..10 {
        t.post("alice", &format!("p{i}")).await;
    }
    let mut oldest = None;
    for _ in 0..100 {
        let resp = open(&t.base, FIREHOSE_KEY, "?cursor=1", None).await;
        if resp.status() == StatusCode::CONFLICT {
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["code"], "cursor_too_old");
            let message = body["error"]["message"].as_str().unwrap().to_owned();
            oldest = message
                .split("the oldest cursor there is is ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .map(str::to_owned);
            break;
        }
        // Fanout commits, and the log drops what is behind the retention.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let oldest = oldest.expect("the log kept everything");
    let mut s = follow(&t.base, &format!("?cursor={oldest}"), None).await;
    let e = acts(&mut s, 1).await;
    assert_eq!(e[0].event, "post");
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text message that is not a checkpoint, as JSON.
async fn next_json(ws: &mut Ws) -> Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let m = tokio::time::timeout(DEADLINE, ws.next()).await.unwrap();
        let Some(Ok(Message::Text(text))) = m else {
            continue;
        };
        let v: Value = serde_json::from_str(text.as_str()).unwrap();
        if v["kind"] != "checkpoint" {
            return v;
        }
    }
}

/// Over a WebSocket: acts as text messages, filters replaced while
/// connected (answered among the acts, every act after the answer passing
/// them), a bad filters message refused with the old ones kept.
#[tokio::test]
async fn a_websocket_changes_its_filters_while_connected() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::Message;
    let t = spawn_app().await;
    t.put_user("alice").await;
    t.put_user("bob").await;
    let url = format!(
        "{}/firehose/ws?kinds=post",
        t.base.replace("http://", "ws://")
    );
    let request = |key: &str| {
        let mut r = url.as_str().into_client_request().unwrap();
        let bearer = format!("Bearer {key}").parse().unwrap();
        r.headers_mut().insert("authorization", bearer);
        r
    };
    let (mut ws, _) = tokio_tungstenite::connect_async(request(FIREHOSE_KEY))
        .await
        .unwrap();
    let one = t.post("alice", "one").await;
    let got = next_json(&mut ws).await;
    assert_eq!(
        (got["kind"].as_str(), got["post"]["id"].as_str()),
        (Some("post"), Some(one.as_str()))
    );
    // New filters: likes by bob only; what comes before the answer passed
    // the old ones.
    let change = json!({"kinds": ["like"], "authors": ["bob"]}).to_string();
    ws.send(Message::Text(change.into())).await.unwrap();
    let two = t.post("alice", "two").await;
    loop {
        let v = next_json(&mut ws).await;
        if v["kind"] == "filters" {
            assert_eq!(
                (v["kinds"].clone(), v["authors"].clone()),
                (json!(["like"]), json!(1))
            );
            break;
        }
        assert_eq!(v["kind"], "post", "{v}");
    }
    t.call(Method::PUT, &format!("/users/alice/likes/{two}"), None)
        .await;
    t.post("bob", "three").await;
    t.call(Method::PUT, &format!("/users/bob/likes/{two}"), None)
        .await;
    let v = next_json(&mut ws).await;
    assert_eq!(
        (v["kind"].as_str(), v["actor"].as_str()),
        (Some("like"), Some("bob"))
    );
    // A bad filters message: refused, the filters kept.
    ws.send(Message::Text(r#"{"kinds":["likes"]}"#.into()))
        .await
        .unwrap();
    let v = next_json(&mut ws).await;
    assert_eq!(
        (v["kind"].as_str(), v["code"].as_str()),
        (Some("error"), Some("invalid_kind"))
    );
    t.call(Method::DELETE, &format!("/users/bob/likes/{two}"), None)
        .await;
    t.call(Method::PUT, &format!("/users/bob/likes/{two}"), None)
        .await;
    let v = next_json(&mut ws).await;
    assert_eq!(
        (v["kind"].as_str(), v["actor"].as_str()),
        (Some("like"), Some("bob"))
    );
    // Without the scope, or without the handshake: refused, no upgrade.
    assert!(tokio_tungstenite::connect_async(request(ADMIN_KEY))
        .await
        .is_err());
    let plain = open(&t.base, FIREHOSE_KEY, "/ws", None).await;
    let body: Value = plain.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_websocket");
}
