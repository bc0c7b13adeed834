//! First pages kept whole over REST (`api/src/pages.rs`) are never stale:
//! under a seeded stream of writes of every kind that changes a page
//! (posts, replies, reposts and their undoing, deletions, follows,
//! unfollows, lists, group joins and leaves, mutes, blocks, suspensions,
//! hybrid marks), each reader's first pages of their home, list and group
//! timelines (and the group's whole timeline), read again right after the
//! write has been applied, are the pages the read path makes without the
//! cache (the same page asked from below the largest post id).

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_core::sim::Rng;
use socialite_domain::feed::hybrid::Hybrid;

const USERS: usize = 8;
/// Above every post id: a page from below it is the first page, read
/// without the cache.
const TOP: &str = "ffffffffffffffff";

fn user(i: usize) -> String {
    format!("u{i}")
}

/// The raw answer to `path`: status, the source header, the body.
async fn raw(t: &TestApp, path: &str) -> (StatusCode, String, String) {
    let resp = t
        .http
        .get(format!("{}{path}", t.base))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let source = resp
        .headers()
        .get("x-timeline-source")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, source, resp.text().await.unwrap())
}

/// Reads each first page twice (the second read is the kept page when
/// the first was served by the cache) and compares both with the page read
/// without the cache.
async fn check_pages(t: &TestApp, step: usize, what: &str) {
    for r in 0..USERS {
        for path in [
            format!("/users/{}/timeline?limit=5", user(r)),
            format!("/users/{}/timeline", user(r)),
            format!("/users/{}/lists/close/timeline?limit=5", user(r)),
            format!("/groups/g0/timeline?limit=5&viewer={}", user(r)),
            "/groups/g0/timeline?limit=5".to_owned(),
        ] {
            let sep = if path.contains('?') { '&' } else { '?' };
            let (s0, _, fresh) = raw(t, &format!("{path}{sep}before={TOP}")).await;
            for _ in 0..2 {
                let (s, source, kept) = raw(t, &path).await;
                assert_eq!(s, s0, "step {step} ({what}): {path}");
                if s != StatusCode::OK {
                    continue;
                }
                let kept: Value = serde_json::from_str(&kept).unwrap();
                let fresh: Value = serde_json::from_str(&fresh).unwrap();
                assert_eq!(
                    kept, fresh,
                    "step {step} ({what}): {path} ({source}) differs from the uncached read"
                );
            }
        }
    }
}

/// One write of the stream; returns what it did, for the failure message.
async fn write(t: &TestApp, rng: &mut Rng, posts: &mut Vec<String>) -> String {
    let (a, b) = (user(rng.below(USERS)), user(rng.below(USERS)));
    let (method, path, body) = match rng.below(100) {
        0..=29 => (
            Method::POST,
            format!("/users/{a}/posts"),
            Some(json!({ "message": format!("hi @{b}") })),
        ),
        30..=34 if !posts.is_empty() => {
            let to = &posts[rng.below(posts.len())];
            let body = json!({ "message": "re", "in_reply_to": to });
            (Method::POST, format!("/users/{a}/posts"), Some(body))
        }
        35..=41 if !posts.is_empty() => {
            let p = &posts[rng.below(posts.len())];
            let m = if rng.below(3) == 0 {
                Method::DELETE
            } else {
                Method::PUT
            };
            (m, format!("/users/{a}/reposts/{p}"), None)
        }
        42..=45 if !posts.is_empty() => {
            let p = posts.swap_remove(rng.below(posts.len()));
            (Method::DELETE, format!("/posts/{p}"), None)
        }
        46..=59 => {
            let lists = if rng.below(2) == 0 {
                json!(["close"])
            } else {
                json!([])
            };
            let body = json!({ "lists": lists });
            (Method::PUT, format!("/users/{a}/following/{b}"), Some(body))
        }
        60..=67 => (Method::DELETE, format!("/users/{a}/following/{b}"), None),
        68..=71 => (Method::PUT, format!("/users/{a}/mutes/{b}"), None),
        72..=75 => (Method::DELETE, format!("/users/{a}/mutes/{b}"), None),
        76..=79 => (Method::PUT, format!("/users/{a}/blocks/{b}"), None),
        80..=84 => (Method::DELETE, format!("/users/{a}/blocks/{b}"), None),
        85..=87 => (Method::PUT, format!("/users/{a}/suspension"), None),
        88..=91 => (Method::DELETE, format!("/users/{a}/suspension"), None),
        92..=93 => (Method::PUT, format!("/groups/g0/members/{a}"), None),
        94..=95 => (Method::DELETE, format!("/groups/g0/members/{a}"), None),
        _ => (
            Method::PUT,
            format!("/users/{a}/likes/{}", posts.first().map_or(TOP, |p| p)),
            None,
        ),
    };
    let (s, answer) = t.call(method.clone(), &path, body).await;
    if s == StatusCode::CREATED {
        if let Some(id) = answer["id"].as_str() {
            posts.push(id.to_owned());
        }
    }
    format!("{method} {path}: {s}")
}

async fn churn(t: &TestApp, seed: u64, steps: usize) {
    for i in 0..USERS {
        t.put_user(&user(i)).await;
    }
    // Everyone follows u0 and u1, which hybrid fanout marks where it is on;
    // half of them are in the group.
    for i in 2..USERS {
        t.follow(&user(i), "u0").await;
        t.follow(&user(i), "u1").await;
    }
    for i in (0..USERS).step_by(2) {
        let (s, b) = t
            .call(
                Method::PUT,
                &format!("/groups/g0/members/{}", user(i)),
                None,
            )
            .await;
        assert!(s.is_success(), "{s} {b}");
    }
    let (mut rng, mut posts) = (Rng::new(seed), Vec::new());
    for step in 0..steps {
        let what = write(t, &mut rng, &mut posts).await;
        t.wait_idle().await;
        check_pages(t, step, &what).await;
    }
    let hits = socialite_api::metrics::transport().page_cache_hits.get();
    assert!(hits > 0, "no page was served from the page cache");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_first_pages_match_the_uncached_read_under_churn() {
    let t = spawn_app().await;
    churn(&t, 11, 120).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_first_pages_match_the_uncached_read_with_hybrid_marks() {
    let t = spawn_app_configured(|c| c.storage.embedded.feed.hybrid = Hybrid::Above(4)).await;
    churn(&t, 12, 120).await;
}

/// A marked author's post reaches pages at read time, and so stales the
/// kept first pages of their followers, and only theirs: a marked author
/// posting often otherwise left no page kept anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marked_authors_post_stales_only_their_followers_pages() {
    let t = spawn_app_configured(|c| c.storage.embedded.feed.hybrid = Hybrid::Above(2)).await;
    for i in 0..7 {
        t.put_user(&user(i)).await;
    }
    for i in 1..=4 {
        t.follow(&user(i), "u0").await;
    }
    t.follow("u5", "u6").await;
    // Fanout marks an author as it delivers their post.
    let post = || {
        t.call(
            Method::POST,
            "/users/u0/posts",
            Some(json!({ "message": "hi" })),
        )
    };
    assert_eq!(post().await.0, StatusCode::CREATED);
    t.wait_idle().await;
    let app = t.app.as_ref().unwrap();
    let marked = app.backends.graph.hybrid_authors().await.unwrap();
    assert_eq!(
        marked,
        vec![socialite_core::ids::UserId::parse("u0").unwrap()]
    );
    let stamp = |reader| first_page_stamp(&t, reader);
    let (follower, other) = (stamp("u1").await, stamp("u5").await);
    assert_eq!(post().await.0, StatusCode::CREATED);
    t.wait_idle().await;
    assert_ne!(stamp("u1").await, follower, "a follower's page is stale");
    assert_eq!(stamp("u5").await, other, "another reader's page is not");
}

/// What the reader's first home page is read at, once kept.
async fn first_page_stamp(t: &TestApp, reader: &str) -> socialite_core::feed::stamp::Stamp {
    for _ in 0..2 {
        // Reading the page first makes the reader's timeline ready.
        let (s, b) = t
            .call(Method::GET, &format!("/users/{reader}/timeline"), None)
            .await;
        assert!(s.is_success(), "{s} {b}");
    }
    let caller = socialite_domain::accounts::access::Caller::Trusted;
    let reads = &t.app.as_ref().unwrap().reads;
    let at = reads.first_page_at(&caller, reader, None).await.unwrap();
    at.expect("the page is kept").stamp
}
