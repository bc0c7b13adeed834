//! Live timelines end to end: Server-Sent Events and gRPC streams of the home
//! timeline, resumes from the last event id, a client that falls behind,
//! and a stream held by a replica that runs no fanout worker (Kafka and
//! MongoDB).

mod common;

use common::process::send_as_client;
use common::servers::Servers;
use common::sse::{Sse, SseReader};
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use socialite_core::event::Event;
use socialite_core::ids::{PostId, UserId};
use socialite_core::live::hub::{LiveHub, STREAM_BUFFER};
use socialite_core::live::stream::LiveStream;
use socialite_core::live::LiveEvent;
use socialite_core::model::Post;
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::Caller;
use socialite_proto::v1 as pb;
use socialite_proto::v1::live_client::LiveClient;
use socialite_proto::v1::timeline_event::Kind;

/// A client of one event stream.
struct Stream(SseReader);

impl Stream {
    async fn open(base: &str, credential: &str, user: &str, last: Option<&str>) -> Stream {
        Stream(SseReader::new(
            Self::request(base, credential, user, last).await,
        ))
    }

    async fn request(
        base: &str,
        credential: &str,
        user: &str,
        last: Option<&str>,
    ) -> reqwest::Response {
        let mut req = client_with(credential).get(format!("{base}/users/{user}/timeline/stream"));
        if let Some(last) = last {
            req = req.header("last-event-id", last);
        }
        req.send().await.unwrap()
    }

    async fn next(&mut self) -> Sse {
        self.0.next().await
    }

    /// The next event, which must be an entry; its post id.
    async fn entry(&mut self) -> String {
        let e = self.next().await;
        assert_eq!(e.event, "entry", "{e:?}");
        let id = e.id.clone().unwrap();
        assert_eq!(e.data["id"].as_str(), Some(id.as_str()));
        id
    }
}

#[tokio::test]
async fn a_home_timeline_streams_over_sse_and_resumes_without_gaps_or_duplicates() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "alice", "carol"] {
        t.put_user(u).await;
    }
    t.follow("bob", "alice").await;
    t.follow("bob", "carol").await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "bob", None).await;
    let p1 = t.post("alice", "one").await;
    assert_eq!(s.entry().await, p1);
    let p2 = t.post("carol", "two").await;
    assert_eq!(s.entry().await, p2);
    t.delete(&format!("/posts/{p1}")).await;
    let e = s.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["id"]),
        ("retracted", &Value::from(p1))
    );
    // A mute retracts the author's posts and stops theirs.
    let (st, _) = t.call(Method::PUT, "/users/bob/mutes/carol", None).await;
    assert_eq!(st, StatusCode::OK);
    let e = s.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["author"]),
        ("purged", &Value::from("carol"))
    );
    t.post("carol", "muted").await;
    let p4 = t.post("alice", "four").await;
    assert_eq!(s.entry().await, p4, "carol's post is not pushed to bob");

    // The client dies mid-stream; posts go on; it comes back with the last id.
    drop(s);
    let p5 = t.post("alice", "five").await;
    let p6 = t.post("alice", "six").await;
    t.wait_idle().await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "bob", Some(&p4)).await;
    assert_eq!(s.entry().await, p5);
    assert_eq!(s.entry().await, p6);
    let p7 = t.post("alice", "seven").await;
    assert_eq!(
        s.entry().await,
        p7,
        "exactly the missed entries, then live ones"
    );
    // A block retracts both ways.
    let (st, _) = t.call(Method::PUT, "/users/alice/blocks/bob", None).await;
    assert_eq!(st, StatusCode::OK);
    let e = s.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["author"]),
        ("purged", &Value::from("alice"))
    );

    // Who may open a stream, and bad input.
    let bob = token_for("bob");
    Stream::open(&t.base, &bob, "bob", None).await;
    let denied = Stream::request(&t.base, &bob, "alice", None).await;
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);
    let anonymous = reqwest::get(format!("{}/users/bob/timeline/stream", t.base)).await;
    assert_eq!(anonymous.unwrap().status(), StatusCode::UNAUTHORIZED);
    let bad = Stream::request(&t.base, ADMIN_KEY, "bob", Some("nonsense")).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_post_id");
    let missing = Stream::request(&t.base, ADMIN_KEY, "nobody", None).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let (_, metrics) = t.get("/metrics").await;
    let text = metrics.as_str().unwrap_or_default();
    assert!(text.contains("socialite_live_streams "), "{text}");
    assert!(
        text.contains("socialite_live_push_seconds_bucket"),
        "{text}"
    );
}

/// A repost is pushed as an entry of the post it carries, placed by the
/// repost and naming the reposter; its undoing retracts that place; a
/// resume sends it once; a repost of a post whose author the reader blocks
/// is not pushed.
#[tokio::test]
async fn a_repost_streams_as_its_post_placed_by_the_repost() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "alice", "carol", "dan"] {
        t.put_user(u).await;
    }
    t.follow("bob", "carol").await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "bob", None).await;
    let p1 = t.post("alice", "one").await;
    let repost = format!("/users/carol/reposts/{p1}");
    let (st, _) = t.call(Method::PUT, &repost, None).await;
    assert_eq!(st, StatusCode::OK);
    let e = s.next().await;
    assert_eq!(e.event, "entry", "{e:?}");
    let place = e.id.clone().unwrap();
    assert!(place > p1, "placed by the repost");
    assert_eq!(e.data["id"], Value::from(p1.clone()));
    assert_eq!(e.data["author"], "alice");
    assert_eq!(e.data["message"], "one");
    assert_eq!(e.data["reposted_by"], serde_json::json!(["carol"]));
    assert_eq!(e.data["position"], Value::from(place.clone()));
    t.call(Method::DELETE, &repost, None).await;
    let e = s.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["id"]),
        ("retracted", &Value::from(place))
    );

    // Resumed from before a repost: the missed entry once, at its place.
    drop(s);
    t.call(Method::PUT, &repost, None).await;
    t.wait_idle().await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "bob", Some(&p1)).await;
    let e = s.next().await;
    assert_eq!(
        (e.event.as_str(), &e.data["id"]),
        ("entry", &Value::from(p1.clone()))
    );
    // A post of an author bob blocks, reposted by carol: not pushed.
    t.call(Method::PUT, "/users/bob/blocks/dan", None).await;
    let blocked = t.post("dan", "blocked").await;
    t.call(
        Method::PUT,
        &format!("/users/carol/reposts/{blocked}"),
        None,
    )
    .await;
    let p2 = t.post("carol", "two").await;
    assert_eq!(
        s.entry().await,
        p2,
        "the blocked author's post is not pushed"
    );
}

/// A user's stream tells them of a new notification: its kind, post,
/// actor and id; not of an actor they mute, nor of a thread they muted.
#[tokio::test]
async fn a_stream_carries_notifications() {
    let t = spawn_app_with(20).await;
    for u in ["ann", "bob", "cy"] {
        t.put_user(u).await;
    }
    let post = t.post("ann", "hi").await;
    let quiet = t.post("ann", "a thread she muted").await;
    t.call(Method::PUT, "/users/ann/mutes/cy", None).await;
    let (s, _) = t
        .call(
            Method::PUT,
            &format!("/users/ann/muted-threads/{quiet}"),
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    t.wait_idle().await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "ann", None).await;
    t.call(Method::PUT, &format!("/users/cy/likes/{post}"), None)
        .await;
    t.call(Method::PUT, &format!("/users/bob/likes/{quiet}"), None)
        .await;
    t.call(Method::PUT, &format!("/users/bob/likes/{post}"), None)
        .await;
    let e = s.next().await;
    assert_eq!(e.event, "notification", "{e:?}");
    assert_eq!(
        (&e.data["kind"], &e.data["actor"], &e.data["post"]),
        (
            &Value::from("like"),
            &Value::from("bob"),
            &Value::from(post)
        ),
        "cy is muted, the thread of bob's first like too: his second is the first told"
    );
    assert!(e.data["id"].as_str().is_some_and(|id| id.len() == 16));
}

async fn next(s: &mut tonic::Streaming<pb::TimelineEvent>) -> pb::TimelineEvent {
    let m = tokio::time::timeout(DEADLINE, s.message()).await;
    m.expect("an event within the deadline").unwrap().unwrap()
}

#[tokio::test]
async fn a_home_timeline_streams_over_grpc_and_resumes() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "alice"] {
        t.put_user(u).await;
    }
    t.follow("bob", "alice").await;
    let channel = tonic::transport::Channel::from_shared(t.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let bearer = socialite_bench::target::Bearer::new(Some(ADMIN_KEY)).unwrap();
    let mut live = LiveClient::with_interceptor(channel, bearer);
    let open = |last: &str| pb::StreamTimelineRequest {
        user: "bob".into(),
        last_event_id: last.into(),
    };
    let mut s = live.stream_timeline(open("")).await.unwrap().into_inner();
    let p1 = t.post("alice", "one").await;
    let e = next(&mut s).await;
    assert_eq!(e.id, p1);
    assert!(matches!(e.kind, Some(Kind::Entry(ref p)) if p.message == "one"));
    drop(s);
    let p2 = t.post("alice", "two").await;
    t.wait_idle().await;
    let mut s = live.stream_timeline(open(&p1)).await.unwrap().into_inner();
    assert_eq!(next(&mut s).await.id, p2);
    let p3 = t.post("alice", "three").await;
    assert_eq!(next(&mut s).await.id, p3);
    let err = live.stream_timeline(open("zz")).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
}

/// A client that stops reading is not buffered without bound: past the
/// stream's buffer it is told to reload, and the stream ends.
#[tokio::test]
async fn a_client_that_falls_behind_is_told_to_reload() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "alice"] {
        t.put_user(u).await;
    }
    t.follow("bob", "alice").await;
    let backends = &t.app.as_ref().unwrap().backends;
    let hub = LiveHub::new(backends.stores());
    let reads = Reads::new(backends.stores());
    let mut stream = LiveStream::open(&hub, &reads, &Caller::Trusted, "bob", None)
        .await
        .unwrap();
    let alice = UserId::parse("alice").unwrap();
    for n in 0..STREAM_BUFFER as u64 + 50 {
        let post = Post::written(
            PostId((1 << 40) + n),
            alice.clone(),
            format!("p{n}"),
            None,
            vec![],
        );
        hub.dispatch(&Event::post_created(post)).await;
    }
    assert_eq!(hub.streams(), 0, "the stream was dropped");
    for _ in 0..STREAM_BUFFER {
        assert!(matches!(stream.next().await, Some(LiveEvent::Entry(_))));
    }
    assert_eq!(stream.next().await, Some(LiveEvent::Reload));
    assert_eq!(stream.next().await, None);
}

/// On Kafka and MongoDB, a replica that runs only the timeline-api holds
/// the stream: entries that another process's worker delivered reach it
/// through the applied feed.
#[tokio::test]
async fn a_replica_without_a_worker_streams_what_another_delivered() {
    let Some(servers) =
        Servers::from_env("a_replica_without_a_worker_streams_what_another_delivered")
    else {
        return;
    };
    let split = split_on(&servers, "live", 2).await;
    let (w, r) = (split.w.clone(), split.r.clone());
    let http = client_with(ADMIN_KEY);
    for u in ["bob", "alice"] {
        let resp = http.put(format!("{w}/users/{u}")).send().await.unwrap();
        assert!(resp.status().is_success());
    }
    let resp = http
        .put(format!("{w}/users/bob/following/alice"))
        .send()
        .await;
    assert_eq!(resp.unwrap().status(), StatusCode::OK);
    let mut s = Stream::open(&r, ADMIN_KEY, "bob", None).await;
    // The replica joins the applied feed at its end: posts until one arrives.
    let post = |message: String| {
        let (http, url) = (http.clone(), format!("{w}/users/alice/posts"));
        async move {
            let body = serde_json::json!({ "message": message });
            let (s, v) = send_as_client(&http, Method::POST, &url, Some(&body)).await;
            assert_eq!(s, StatusCode::CREATED, "{v}");
            v["id"].as_str().unwrap().to_owned()
        }
    };
    let started = std::time::Instant::now();
    let first = loop {
        assert!(started.elapsed() < DEADLINE, "nothing reached the replica");
        let id = post("early".into()).await;
        let wait = std::time::Duration::from_millis(500);
        if let Ok(e) = tokio::time::timeout(wait, s.next()).await {
            assert_eq!(e.event, "entry", "{e:?}");
            break e.id.unwrap();
        }
        let _ = id;
    };
    // From then on, every post arrives, in order.
    let mut posted = Vec::new();
    for n in 0..5 {
        posted.push(post(format!("live {n}")).await);
    }
    let mut got = Vec::new();
    while got.len() < posted.len() {
        let id = s.entry().await;
        if id > first && !posted.contains(&id) {
            continue; // an early post that arrived late
        }
        got.push(id);
    }
    assert_eq!(got, posted);
    drop(s);
    split.reader.shutdown().await;
    split.writer.shutdown().await;
}

/// An entry can reach a resuming stream twice: from the timeline, and as
/// the live event the hub received while the timeline was read. It is sent
/// once.
#[tokio::test]
async fn a_resume_racing_the_live_event_sends_each_entry_once() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "alice"] {
        t.put_user(u).await;
    }
    t.follow("bob", "alice").await;
    let p1 = t.post("alice", "one").await;
    let p2 = t.post("alice", "two").await;
    t.wait_idle().await;
    let backends = &t.app.as_ref().unwrap().backends;
    let hub = LiveHub::new(backends.stores());
    let reads = Reads::new(backends.stores());
    let mut stream = LiveStream::open(&hub, &reads, &Caller::Trusted, "bob", Some(&p1))
        .await
        .unwrap();
    let post = |id: PostId, message: &str| {
        Post::written(
            id,
            UserId::parse("alice").unwrap(),
            message.into(),
            None,
            vec![],
        )
    };
    let p2 = PostId::parse(&p2).unwrap();
    let p3 = PostId(p2.0 + 1);
    for p in [post(p2, "two"), post(p3, "three")] {
        hub.dispatch(&Event::post_created(p)).await;
    }
    let mut ids = Vec::new();
    for _ in 0..2 {
        match stream.next().await {
            Some(LiveEvent::Entry(p)) => ids.push(p.position),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(ids, vec![p2, p3]);
}

/// A client that leaves is forgotten at once, even while nothing happens
/// in its timeline.
#[tokio::test]
async fn a_stream_whose_client_left_closes() {
    let t = spawn_app().await;
    t.put_user("bob").await;
    let s = Stream::open(&t.base, ADMIN_KEY, "bob", None).await;
    let hub = t.app.as_ref().unwrap().live.clone().unwrap();
    assert_eq!(hub.streams(), 1);
    drop(s);
    eventually("the stream to close", || async { hub.streams() == 0 }).await;
}

/// A stream applies the reader's keyword filters as a read does: a
/// hiding filter's posts are not pushed, a warning filter's carry it; a
/// filter made while the stream is open holds from then on.
#[tokio::test]
async fn a_stream_applies_the_readers_keyword_filters() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "carol"] {
        t.put_user(u).await;
    }
    t.follow("bob", "carol").await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "bob", None).await;
    let calm = t.post("carol", "calm").await;
    assert_eq!(s.entry().await, calm);
    for body in [
        serde_json::json!({ "phrases": [{ "text": "rain" }] }),
        serde_json::json!({ "phrases": [{ "text": "storm" }], "action": "hide" }),
    ] {
        let (st, v) = t.call(Method::POST, "/users/bob/filters", Some(body)).await;
        assert_eq!(st, StatusCode::CREATED, "{v}");
    }
    t.wait_idle().await;
    t.post("carol", "a storm comes").await;
    let rain = t.post("carol", "Rain again").await;
    let e = s.next().await;
    assert_eq!(
        e.id.as_deref(),
        Some(rain.as_str()),
        "the storm is not pushed"
    );
    assert_eq!(e.data["filtered"][0]["filter"], "1", "{e:?}");
}

/// A stream leaves out the accounts the reader files under an exclusive
/// list, from the moment the list is marked, as a read of home does.
#[tokio::test]
async fn a_stream_leaves_out_the_accounts_of_an_exclusive_list() {
    let t = spawn_app_with(20).await;
    for u in ["bob", "carol", "dan"] {
        t.put_user(u).await;
    }
    let body = serde_json::json!({ "lists": ["news"] });
    t.call(Method::PUT, "/users/bob/following/carol", Some(body))
        .await;
    t.follow("bob", "dan").await;
    let mut s = Stream::open(&t.base, ADMIN_KEY, "bob", None).await;
    let first = t.post("carol", "before").await;
    assert_eq!(s.entry().await, first);
    let mark = serde_json::json!({ "exclusive": true });
    let (st, v) = t
        .call(Method::PUT, "/users/bob/lists/news", Some(mark))
        .await;
    assert_eq!(st, StatusCode::OK, "{v}");
    t.wait_idle().await;
    t.post("carol", "in the list only").await;
    let dan = t.post("dan", "at home").await;
    assert_eq!(s.entry().await, dan, "carol's post is not pushed");
}
