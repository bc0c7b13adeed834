//! The REST API end to end: every operation, fanout, the read paths, and every
//! bad-input case.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn users_profiles_and_counts() {
    let t = spawn_app().await;
    let (s, b) = t
        .call(
            Method::PUT,
            "/users/alice",
            Some(json!({ "profile": { "name": "Alice" } })),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(
        b,
        json!({ "id": "alice", "followers": 0, "following": 0, "profile": { "name": "Alice" } })
    );
    // PUT again updates the profile and is not a creation; no body keeps it.
    let (s, b) = t
        .call(
            Method::PUT,
            "/users/alice",
            Some(json!({ "profile": { "name": "Al" } })),
        )
        .await;
    assert_eq!((s, &b["profile"]["name"]), (StatusCode::OK, &json!("Al")));
    let (s, b) = t.call(Method::PUT, "/users/alice", None).await;
    assert_eq!((s, &b["profile"]["name"]), (StatusCode::OK, &json!("Al")));
    t.put_user("bob").await;
    t.put_user("carol").await;
    t.follow("bob", "alice").await;
    t.follow("carol", "alice").await;
    t.follow("bob", "carol").await;
    let (_, b) = t.get("/users/alice").await;
    assert_eq!(
        (b["followers"].as_u64(), b["following"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(
        t.get("/users/bob/following_count").await.1,
        json!({ "count": 2 })
    );
    assert_eq!(
        t.get("/users/alice/follower_count").await.1,
        json!({ "count": 2 })
    );
    // Follow and unfollow are idempotent and keep counts exact.
    let (_, b) = t
        .call(Method::PUT, "/users/bob/following/alice", None)
        .await;
    assert_eq!(b["changed"], json!(false));
    t.unfollow("bob", "alice").await;
    let (_, b) = t
        .call(Method::DELETE, "/users/bob/following/alice", None)
        .await;
    assert_eq!(b["changed"], json!(false));
    assert_eq!(
        t.get("/users/alice/follower_count").await.1,
        json!({ "count": 1 })
    );
    assert_eq!(
        t.get("/users/bob/following_count").await.1,
        json!({ "count": 1 })
    );
    // Deleting a user removes their edges and fixes the counts at the other ends.
    t.delete("/users/carol").await;
    assert_eq!(t.get("/users/carol").await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        t.get("/users/alice/follower_count").await.1,
        json!({ "count": 0 })
    );
    assert_eq!(
        t.get("/users/bob/following_count").await.1,
        json!({ "count": 0 })
    );
    assert_eq!(
        t.get("/users/alice/followers").await.1,
        json!({ "users": [], "next_cursor": null })
    );
    assert_eq!(
        t.call(Method::DELETE, "/users/carol", None).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn follower_lists_page_newest_follow_first_stable_under_new_follows() {
    let t = spawn_app().await;
    t.put_user("star").await;
    let mut fans: Vec<String> = (0..25).map(|i| format!("fan{i:02}")).collect();
    for f in &fans {
        t.put_user(f).await;
        t.follow(f, "star").await;
    }
    t.put_user("late").await;
    fans.sort();
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut cursor = String::new();
    loop {
        let (s, b) = t
            .get(&format!(
                "/users/star/followers?limit=10&followed_at=true&cursor={cursor}"
            ))
            .await;
        assert_eq!(s, StatusCode::OK);
        for e in b["edges"].as_array().unwrap() {
            let id = e["id"].as_str().unwrap().to_owned();
            seen.push((id, e["followed_at"].as_str().unwrap().to_owned()));
        }
        let users: Vec<&str> = b["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap())
            .collect();
        assert!(users
            .iter()
            .eq(seen[seen.len() - users.len()..].iter().map(|(u, _)| u)));
        // A follow made while paging is newer than every cursor: it shows
        // on a first page, never shifts the pages being read.
        t.follow("late", "star").await;
        match b["next_cursor"].as_str() {
            Some(c) => cursor = c.to_owned(),
            None => break,
        }
    }
    let mut expected = seen.clone();
    expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!(seen, expected, "newest follow first, ties in id order");
    let mut ids: Vec<String> = seen.into_iter().map(|(u, _)| u).collect();
    ids.sort();
    assert_eq!(ids, fans, "each follower once, the late one on no page");
    let (_, b) = t.get("/users/star/followers?limit=1").await;
    assert_eq!(b["users"], json!(["late"]));
    assert!(b.get("edges").is_none(), "times only when asked");
    let (_, b) = t.get("/users/fan00/following").await;
    assert_eq!(b["users"], json!(["star"]));
    let (s, b) = t.get("/users/star/followers?cursor=zz").await;
    assert_eq!(
        (s.as_u16(), &b["error"]["code"]),
        (400, &json!("invalid_cursor"))
    );
}

#[tokio::test]
async fn posts_are_stored_listed_and_deleted() {
    let t = spawn_app().await;
    t.put_user("ann").await;
    let (s, b) = t
        .call(
            Method::POST,
            "/users/ann/posts",
            Some(json!({ "message": "hi", "data": { "lang": "en" } })),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    let id = b["id"].as_str().unwrap().to_owned();
    assert_eq!(b["author"], "ann");
    assert_eq!(b["data"], json!({ "lang": "en" }));
    assert!(b["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(t.get(&format!("/posts/{id}")).await.1, b);
    let mut ids = vec![id.clone()];
    for i in 0..6 {
        ids.push(t.post("ann", &format!("m{i}")).await);
    }
    let expected = newest_first(ids.clone());
    let (_, page1) = t.get("/users/ann/posts?limit=4").await;
    let cursor = page1["next_cursor"].as_str().unwrap().to_owned();
    let (_, page2) = t
        .get(&format!("/users/ann/posts?limit=4&before={cursor}"))
        .await;
    assert!(page2["next_cursor"].is_null());
    let mut listed = common::ids(&page1["posts"]);
    listed.extend(common::ids(&page2["posts"]));
    assert_eq!(listed, expected);
    t.delete(&format!("/posts/{id}")).await;
    assert_eq!(
        t.get(&format!("/posts/{id}")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        t.call(Method::DELETE, &format!("/posts/{id}"), None)
            .await
            .0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn fanout_reaches_active_followers_and_skips_dormant_ones() {
    let t = spawn_app().await;
    for u in ["author", "reader", "sleeper"] {
        t.put_user(u).await;
    }
    t.follow("reader", "author").await;
    t.follow("sleeper", "author").await;
    // The first read activates the reader (a read-time merge).
    let (page, _, source) = t.timeline_page("reader", 10, None).await;
    assert_eq!((page.len(), source.as_str()), (0, "merge"));
    let p1 = t.post("author", "one").await;
    let p2 = t.post("author", "two").await;
    t.wait_idle().await;
    let (page, next, source) = t.timeline_page("reader", 10, None).await;
    assert_eq!(
        (page, next, source.as_str()),
        (vec![p2.clone(), p1.clone()], None, "cache")
    );
    // The sleeper never read: fanout left them alone; their first read merges.
    assert!(!t.is_active("sleeper").await);
    let (page, _, source) = t.timeline_page("sleeper", 10, None).await;
    assert_eq!((page, source.as_str()), (vec![p2, p1], "merge"));
    assert!(t.is_active("sleeper").await);
}

#[tokio::test]
async fn scrolling_past_the_cache_reaches_the_first_post() {
    let t = spawn_app_with(5).await;
    for u in ["a", "b", "r"] {
        t.put_user(u).await;
    }
    t.follow("r", "a").await;
    t.follow("r", "b").await;
    let mut all = Vec::new();
    for i in 0..9 {
        all.push(
            t.post(if i % 2 == 0 { "a" } else { "b" }, &format!("old {i}"))
                .await,
        );
    }
    t.timeline_page("r", 3, None).await; // activate
    for i in 0..8 {
        all.push(
            t.post(if i % 3 == 0 { "a" } else { "b" }, &format!("new {i}"))
                .await,
        );
    }
    t.wait_idle().await;
    let expected = newest_first(all);
    for limit in [1, 2, 3, 4, 7, 50] {
        assert_eq!(t.timeline("r", limit).await, expected, "page size {limit}");
    }
    let (_, _, source) = t.timeline_page("r", 3, None).await;
    assert_eq!(source, "cache");
    let (_, _, source) = t.timeline_page("r", 8, None).await;
    assert_eq!(source, "past_cache");
}

#[tokio::test]
async fn follow_backfills_and_unfollow_purges() {
    let t = spawn_app().await;
    for u in ["r", "a", "b"] {
        t.put_user(u).await;
    }
    t.follow("r", "a").await;
    let pa = t.post("a", "from a").await;
    let pb1 = t.post("b", "from b 1").await;
    let pb2 = t.post("b", "from b 2").await;
    t.timeline_page("r", 10, None).await; // activate: only a's post
    t.follow("r", "b").await;
    t.wait_idle().await;
    let (page, _, source) = t.timeline_page("r", 10, None).await;
    assert_eq!(
        (page, source.as_str()),
        (newest_first(vec![pa.clone(), pb1, pb2]), "cache")
    );
    t.unfollow("r", "b").await;
    t.wait_idle().await;
    let (page, _, _) = t.timeline_page("r", 10, None).await;
    assert_eq!(page, vec![pa]);
}

#[tokio::test]
async fn deletions_are_retracted_from_timelines() {
    let t = spawn_app().await;
    for u in ["r", "a", "b"] {
        t.put_user(u).await;
    }
    t.follow("r", "a").await;
    t.follow("r", "b").await;
    t.follow("a", "b").await;
    t.timeline_page("r", 10, None).await;
    t.timeline_page("a", 10, None).await;
    let pa = t.post("a", "a1").await;
    let pb = t.post("b", "b1").await;
    let pb2 = t.post("b", "b2").await;
    t.wait_idle().await;
    assert_eq!(
        t.timeline("r", 10).await,
        newest_first(vec![pa.clone(), pb.clone(), pb2.clone()])
    );
    t.delete(&format!("/posts/{pb}")).await;
    t.wait_idle().await;
    assert_eq!(
        t.timeline("r", 10).await,
        newest_first(vec![pa.clone(), pb2.clone()])
    );
    // Deleting b retracts b's posts from every follower's cache.
    t.delete("/users/b").await;
    t.wait_idle().await;
    assert_eq!(t.timeline("r", 10).await, vec![pa.clone()]);
    // a keeps only its own post.
    assert_eq!(t.timeline("a", 10).await, vec![pa]);
    assert_eq!(
        t.get(&format!("/posts/{pb2}")).await.0,
        StatusCode::NOT_FOUND
    );
    // A deleted reader's cache is dropped.
    t.delete("/users/r").await;
    t.wait_idle().await;
    assert!(!t.is_active("r").await);
    assert_eq!(t.get("/users/r/timeline").await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_input_gets_a_4xx_with_an_error_body() {
    let t = spawn_app().await;
    t.put_user("u").await;
    t.put_user("v").await;
    let long = format!("{{\"message\": \"{}\"}}", "x".repeat(4097));
    let huge = format!("{{\"message\": \"{}\"}}", "y".repeat(70_000));
    let cases: Vec<(Method, String, Option<&str>, u16, &str)> = vec![
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{\"message\": "),
            400,
            "invalid_json",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{}"),
            400,
            "invalid_body",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{\"message\": 5}"),
            400,
            "invalid_body",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{\"message\": \"\"}"),
            400,
            "empty_message",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{\"message\": \"  \"}"),
            400,
            "empty_message",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some(&long),
            400,
            "message_too_long",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some(&huge),
            413,
            "body_too_large",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{\"message\": \"m\", \"data\": [1]}"),
            400,
            "invalid_json_field",
        ),
        (
            Method::POST,
            "/users/u/posts".into(),
            Some("{\"message\": \"m\", \"extra\": 1}"),
            400,
            "invalid_body",
        ),
        (
            Method::POST,
            "/users/nobody/posts".into(),
            Some("{\"message\": \"m\"}"),
            404,
            "user_not_found",
        ),
        (
            Method::POST,
            "/users/bad%20id/posts".into(),
            Some("{\"message\": \"m\"}"),
            400,
            "invalid_user_id",
        ),
        (
            Method::PUT,
            format!("/users/{}", "a".repeat(65)),
            None,
            400,
            "invalid_user_id",
        ),
        (
            Method::PUT,
            "/users/u".into(),
            Some("{\"profile\": 3}"),
            400,
            "invalid_json_field",
        ),
        (
            Method::PUT,
            "/users/u".into(),
            Some("not json"),
            400,
            "invalid_json",
        ),
        (
            Method::PUT,
            "/users/u/following/u".into(),
            None,
            409,
            "cannot_follow_self",
        ),
        (
            Method::PUT,
            "/users/u/following/ghost".into(),
            None,
            404,
            "user_not_found",
        ),
        (
            Method::PUT,
            "/users/ghost/following/u".into(),
            None,
            404,
            "user_not_found",
        ),
        (
            Method::DELETE,
            "/users/u/following/ghost".into(),
            None,
            404,
            "user_not_found",
        ),
        (
            Method::GET,
            "/users/ghost".into(),
            None,
            404,
            "user_not_found",
        ),
        (
            Method::GET,
            "/users/ghost/timeline".into(),
            None,
            404,
            "user_not_found",
        ),
        (
            Method::GET,
            "/users/u/timeline?limit=0".into(),
            None,
            400,
            "invalid_limit",
        ),
        (
            Method::GET,
            "/users/u/timeline?limit=201".into(),
            None,
            400,
            "invalid_limit",
        ),
        (
            Method::GET,
            "/users/u/timeline?limit=-1".into(),
            None,
            400,
            "invalid_query",
        ),
        (
            Method::GET,
            "/users/u/timeline?limit=ten".into(),
            None,
            400,
            "invalid_query",
        ),
        (
            Method::GET,
            "/users/u/timeline?before=zz".into(),
            None,
            400,
            "invalid_post_id",
        ),
        (
            Method::GET,
            "/users/u/posts?before=123".into(),
            None,
            400,
            "invalid_post_id",
        ),
        (
            Method::GET,
            "/users/u/followers?cursor=zz".into(),
            None,
            400,
            "invalid_cursor",
        ),
        (
            Method::GET,
            "/users/u/following?limit=500".into(),
            None,
            400,
            "invalid_limit",
        ),
        (
            Method::GET,
            "/posts/not-an-id".into(),
            None,
            400,
            "invalid_post_id",
        ),
        (
            Method::GET,
            "/posts/0000000000000001".into(),
            None,
            404,
            "post_not_found",
        ),
        (
            Method::DELETE,
            "/posts/0000000000000001".into(),
            None,
            404,
            "post_not_found",
        ),
        (
            Method::GET,
            "/no/such/route".into(),
            None,
            404,
            "no_such_route",
        ),
        (
            Method::PATCH,
            "/users/u".into(),
            None,
            405,
            "method_not_allowed",
        ),
    ];
    for (method, path, body, status, code) in cases {
        let mut req = t
            .http
            .request(method.clone(), format!("{}{}", t.base, path));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_owned());
        }
        let resp = req.send().await.unwrap();
        let got = resp.status().as_u16();
        let v: serde_json::Value = resp.json().await.unwrap_or_default();
        assert_eq!(
            (got, v["error"]["code"].as_str()),
            (status, Some(code)),
            "{method} {path}: {v}"
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{method} {path}: {v}"
        );
    }
    // A body not declared JSON is 415, whatever it holds, and nothing is stored.
    for (method, path, ctype) in [
        (Method::POST, "/users/u/posts", None),
        (Method::POST, "/users/u/posts", Some("text/plain")),
        (Method::PUT, "/users/u415", Some("text/plain")),
        (Method::PUT, "/users/u415", Some("image/png")),
        (Method::PUT, "/users/u415", None),
    ] {
        let mut req = t
            .http
            .request(method.clone(), format!("{}{path}", t.base))
            .body("{\"message\":\"m\",\"profile\":{}}");
        if let Some(c) = ctype {
            req = req.header("content-type", c);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let v: serde_json::Value = resp.json().await.unwrap_or_default();
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                Some("unsupported_media_type")
            ),
            "{method} {path} {ctype:?}"
        );
    }
    assert_eq!(t.get("/users/u415").await.0, StatusCode::NOT_FOUND);
    // `null` is no body, as the contract's optional body allows.
    let resp = t
        .http
        .put(format!("{}/users/unull", t.base))
        .header("content-type", "application/json")
        .body("null")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    // After all that, the service is fine.
    assert_eq!(t.get("/healthz").await.0, StatusCode::OK);
}

/// The contract is served, generated from the routes this process serves.
#[tokio::test]
async fn the_openapi_document_is_served_and_names_every_route() {
    let t = spawn_app().await;
    let (status, doc) = t.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/users/{id}", "put"),
        ("/users/{id}/timeline", "get"),
        ("/users/{id}/following/{target}", "delete"),
        ("/posts/{id}", "delete"),
        ("/openapi.json", "get"),
    ] {
        assert!(paths[path][method].is_object(), "{method} {path} missing");
    }
    let limit = &doc["paths"]["/users/{id}/timeline"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "limit")
        .unwrap()["schema"];
    assert_eq!(
        (limit["minimum"].as_u64(), limit["maximum"].as_u64()),
        (Some(1), Some(200))
    );
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
}

/// A put answers from its own write: a deletion of the same id racing it
/// never turns the put into a 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_racing_a_delete_of_the_same_user_never_answers_404() {
    let t = spawn_app().await;
    for round in 0..150 {
        let put = t.call(
            Method::PUT,
            "/users/racer",
            Some(json!({ "profile": { "n": round } })),
        );
        let delete = t.call(Method::DELETE, "/users/racer", None);
        let ((put_status, user), (delete_status, _)) = tokio::join!(put, delete);
        assert!(
            put_status == StatusCode::CREATED || put_status == StatusCode::OK,
            "round {round}: PUT answered {put_status}: {user}"
        );
        assert_eq!(
            user["profile"]["n"], round,
            "the put's own profile comes back"
        );
        assert!(
            delete_status == StatusCode::NO_CONTENT || delete_status == StatusCode::NOT_FOUND,
            "round {round}: DELETE answered {delete_status}"
        );
    }
}

/// Values a client could not get back as sent are refused: ids that URL
/// normalisation erases, messages that show nothing, numbers beyond exact.
#[tokio::test]
async fn values_that_would_not_round_trip_are_refused() {
    let t = spawn_app().await;
    t.put_user("v").await;
    for (path, body, code) in [
        (
            "/users/v/posts",
            json!({ "message": "\u{200B}\u{200D}\u{FEFF}" }),
            "empty_message",
        ),
        (
            "/users/v/posts",
            json!({ "message": "\u{0007}\u{0008}" }),
            "empty_message",
        ),
    ] {
        let (status, v) = t.call(Method::POST, path, Some(body)).await;
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code))
        );
    }
    let resp = t
        .http
        .post(format!("{}/users/v/posts", t.base))
        .header("content-type", "application/json")
        .body(r#"{"message":"m","data":{"n":123456789012345678901234567890}}"#)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_json_field"))
    );
    let (status, v) = t
        .call(
            Method::POST,
            "/users/v/posts",
            Some(json!({ "message": "m", "data": { "n": u64::MAX } })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        v["data"]["n"].as_u64(),
        Some(u64::MAX),
        "64-bit integers come back exact"
    );
}

/// Own posts are in the author's home timeline (the default): delivered to
/// an active author's cache, merged for a dormant one, retracted on delete;
/// `--own-posts false` leaves them out.
#[tokio::test]
async fn own_posts_are_in_the_home_timeline_unless_turned_off() {
    let t = spawn_app().await;
    for u in ["o_author", "o_followee"] {
        t.put_user(u).await;
    }
    t.follow("o_author", "o_followee").await;
    let dormant_mine = t.post("o_author", "mine, while dormant").await;
    let theirs = t.post("o_followee", "theirs").await;
    t.wait_idle().await;
    let (page, _, source) = t.timeline_page("o_author", 10, None).await;
    assert_eq!(source, "merge");
    assert_eq!(
        page,
        newest_first(vec![dormant_mine.clone(), theirs.clone()])
    );
    let mine = t.post("o_author", "mine, while active").await;
    t.wait_idle().await;
    let (page, _, source) = t.timeline_page("o_author", 10, None).await;
    assert_eq!(source, "cache");
    assert_eq!(
        page,
        newest_first(vec![mine.clone(), dormant_mine.clone(), theirs.clone()])
    );
    t.delete(&format!("/posts/{mine}")).await;
    t.wait_idle().await;
    assert_eq!(
        t.timeline("o_author", 10).await,
        newest_first(vec![dormant_mine, theirs.clone()])
    );

    let t = spawn_app_configured(|c| c.storage.embedded.feed.own_posts = false).await;
    for u in ["o_author", "o_followee"] {
        t.put_user(u).await;
    }
    t.follow("o_author", "o_followee").await;
    t.post("o_author", "mine").await;
    let theirs = t.post("o_followee", "theirs").await;
    t.wait_idle().await;
    assert_eq!(t.timeline("o_author", 10).await, vec![theirs]);
}
