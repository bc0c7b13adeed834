//! Mutes and blocks through the APIs: REST and gRPC, with server keys and
//! user tokens, on the embedded default.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use tonic::Code;

async fn users(t: &TestApp, names: &[&str]) {
    for n in names {
        t.put_user(n).await;
    }
}

async fn group_page(t: &TestApp, query: &str) -> Vec<String> {
    let (s, b) = t.get(&format!("/groups/club/timeline{query}")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    ids(&b["posts"])
}

async fn mentions(t: &TestApp, user: &str) -> Vec<String> {
    let (s, b) = t.get(&format!("/users/{user}/mentions")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    ids(&b["posts"])
}

#[tokio::test]
async fn mutes_and_blocks_over_rest() {
    let t = spawn_app_with(10).await;
    users(&t, &["bob", "alice", "carol"]).await;
    t.follow("bob", "alice").await;
    t.follow("bob", "carol").await;
    t.follow("carol", "bob").await;
    for u in ["alice", "bob", "carol"] {
        let (s, _) = t
            .call(Method::PUT, &format!("/groups/club/members/{u}"), None)
            .await;
        assert_eq!(s, StatusCode::OK);
    }
    let a1 = t.post("alice", "hello @bob").await;
    let c1 = t.post("carol", "hi @bob").await;
    t.wait_idle().await;
    assert_eq!(
        t.timeline("bob", 5).await,
        newest_first(vec![a1.clone(), c1.clone()])
    );

    // A mute: alice leaves bob's home and his view of the group, not his mentions.
    let (s, b) = t.call(Method::PUT, "/users/bob/mutes/alice", None).await;
    assert_eq!(
        (s, b),
        (StatusCode::OK, json!({ "active": true, "changed": true }))
    );
    let (_, b) = t.call(Method::PUT, "/users/bob/mutes/alice", None).await;
    assert_eq!(b["changed"], json!(false), "idempotent");
    let a2 = t.post("alice", "again").await;
    t.wait_idle().await;
    assert_eq!(t.timeline("bob", 5).await, vec![c1.clone()]);
    assert_eq!(group_page(&t, "?viewer=bob").await, vec![c1.clone()]);
    assert_eq!(
        group_page(&t, "").await,
        newest_first(vec![a1.clone(), a2.clone(), c1.clone()]),
        "the whole group without a viewer"
    );
    assert_eq!(
        mentions(&t, "bob").await,
        newest_first(vec![a1.clone(), c1.clone()])
    );
    let (s, b) = t.get("/users/bob/mutes").await;
    assert_eq!((s, &b["users"]), (StatusCode::OK, &json!(["alice"])));
    // The follow stays, and lifting the mute brings alice's posts back.
    assert_eq!(
        t.get("/users/bob/following_count").await.1,
        json!({ "count": 2 })
    );
    let (_, b) = t.call(Method::DELETE, "/users/bob/mutes/alice", None).await;
    assert_eq!(b, json!({ "active": false, "changed": true }));
    t.wait_idle().await;
    assert_eq!(
        t.timeline("bob", 2).await,
        newest_first(vec![a1.clone(), a2.clone(), c1.clone()])
    );

    // A block: the edges go both ways, follows are refused, mentions hidden.
    let (s, b) = t.call(Method::PUT, "/users/carol/blocks/bob", None).await;
    assert_eq!(
        (s, b),
        (StatusCode::OK, json!({ "active": true, "changed": true }))
    );
    t.wait_idle().await;
    assert_eq!(
        t.get("/users/bob/following_count").await.1,
        json!({ "count": 1 })
    );
    assert_eq!(
        t.get("/users/carol/following_count").await.1,
        json!({ "count": 0 })
    );
    for (who, whom) in [("bob", "carol"), ("carol", "bob")] {
        let (s, b) = t
            .call(Method::PUT, &format!("/users/{who}/following/{whom}"), None)
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
        assert_eq!(b["error"]["code"], json!("blocked"), "{b}");
    }
    assert_eq!(
        t.timeline("bob", 5).await,
        newest_first(vec![a1.clone(), a2.clone()])
    );
    assert_eq!(mentions(&t, "bob").await, vec![a1.clone()]);
    assert_eq!(
        group_page(&t, "?viewer=bob&limit=1").await,
        vec![a2.clone()],
        "a page is filled past what is hidden"
    );
    assert_eq!(
        group_page(&t, "?viewer=carol").await,
        newest_first(vec![a1, a2, c1])
    );
    let (_, b) = t.get("/users/carol/blocks").await;
    assert_eq!(b["users"], json!(["bob"]));
    let (_, b) = t
        .call(Method::DELETE, "/users/carol/blocks/bob", None)
        .await;
    assert_eq!(b, json!({ "active": false, "changed": true }));
    t.follow("bob", "carol").await;

    // Bad input: clear errors naming the problem.
    let (s, b) = t.call(Method::PUT, "/users/bob/mutes/bob", None).await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::CONFLICT, &json!("cannot_mute_self"))
    );
    let (s, b) = t.call(Method::PUT, "/users/bob/blocks/nobody", None).await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("user_not_found"))
    );
    let (s, b) = t.call(Method::PUT, "/users/bob/blocks/a%20b", None).await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::BAD_REQUEST, &json!("invalid_user_id"))
    );
    let (s, b) = t.get("/groups/club/timeline?viewer=nobody").await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("user_not_found"))
    );
}

#[tokio::test]
async fn a_user_token_mutes_and_blocks_only_as_its_user() {
    let t = spawn_app().await;
    users(&t, &["bob", "alice"]).await;
    let bob = client_with(&token_for("bob"));
    let call = |m: Method, path: &str| {
        let req = bob.request(m, format!("{}{path}", t.base));
        async move {
            let r = req.send().await.unwrap();
            let s = r.status();
            (s, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (s, _) = call(Method::PUT, "/users/bob/mutes/alice").await;
    assert_eq!(s, StatusCode::OK);
    let (s, b) = call(Method::GET, "/users/bob/mutes").await;
    assert_eq!((s, &b["users"]), (StatusCode::OK, &json!(["alice"])));
    for (m, path) in [
        (Method::PUT, "/users/alice/mutes/bob"),
        (Method::DELETE, "/users/alice/blocks/bob"),
        (Method::GET, "/users/alice/mutes"),
        (Method::GET, "/users/alice/blocks"),
    ] {
        let (s, b) = call(m, path).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(b["error"]["code"], json!("not_your_account"));
    }
    t.call(Method::PUT, "/groups/club/members/alice", None)
        .await;
    let (s, b) = call(Method::GET, "/groups/club/timeline?viewer=alice").await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::FORBIDDEN, &json!("not_your_account"))
    );
    // Without a viewer, a user token reads as its user: alice is muted.
    t.post("alice", "hi").await;
    t.wait_idle().await;
    let (s, b) = call(Method::GET, "/groups/club/timeline").await;
    assert_eq!((s, ids(&b["posts"]).len()), (StatusCode::OK, 0));
}

#[tokio::test]
async fn mutes_and_blocks_over_grpc() {
    let t = spawn_app_with(10).await;
    users(&t, &["bob", "alice"]).await;
    t.follow("bob", "alice").await;
    let a1 = t.post("alice", "one").await;
    t.wait_idle().await;
    assert_eq!(t.timeline("bob", 5).await, vec![a1.clone()]);
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let rel = |user: &str, target: &str| pb::RelationRequest {
        user: user.into(),
        target: target.into(),
        ..Default::default()
    };
    let reply = w.mute(rel("bob", "alice")).await.unwrap().into_inner();
    assert_eq!((reply.active, reply.changed), (true, true));
    t.wait_idle().await;
    assert!(t.timeline("bob", 5).await.is_empty());
    let list = |user: &str| pb::ListUsersRequest {
        user: user.into(),
        ..Default::default()
    };
    let muted = r.list_mutes(list("bob")).await.unwrap().into_inner();
    assert_eq!(muted.users, vec!["alice".to_owned()]);
    w.unmute(rel("bob", "alice")).await.unwrap();
    t.wait_idle().await;
    assert_eq!(t.timeline("bob", 5).await, vec![a1]);

    let reply = w.block(rel("alice", "bob")).await.unwrap().into_inner();
    assert_eq!((reply.active, reply.changed), (true, true));
    let follow = pb::FollowRequest {
        user: "bob".into(),
        target: "alice".into(),
        ..Default::default()
    };
    let err = w.follow(follow.clone()).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
    assert!(err.message().contains("blocked"), "{}", err.message());
    let blocked = r.list_blocks(list("alice")).await.unwrap().into_inner();
    assert_eq!(blocked.users, vec!["bob".to_owned()]);
    w.unblock(rel("alice", "bob")).await.unwrap();
    assert!(w.follow(follow).await.unwrap().into_inner().changed);
    let err = w.block(rel("bob", "bob")).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
}

/// A timeline read again until it holds `want` (a mute's end is swept
/// about once a second); what it held last.
async fn timeline_until(t: &TestApp, user: &str, want: &[String]) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..100 {
        t.wait_idle().await;
        seen = t.timeline(user, 5).await;
        if seen == want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    seen
}

#[tokio::test]
async fn a_timed_mute_ends_by_itself_over_rest() {
    let t = spawn_app().await;
    users(&t, &["bob", "alice"]).await;
    t.follow("bob", "alice").await;
    let a1 = t.post("alice", "one").await;
    t.wait_idle().await;
    for (body, code) in [
        (json!({ "expires_in": 0 }), "invalid_expires_in"),
        (json!({ "expires_in": 31_622_401 }), "invalid_expires_in"),
        (json!({ "expires_in": "soon" }), "invalid_body"),
        (json!({ "for": 1 }), "invalid_body"),
    ] {
        let (s, b) = t
            .call(Method::PUT, "/users/bob/mutes/alice", Some(body))
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code))
        );
    }
    assert_eq!(
        t.timeline("bob", 5).await,
        vec![a1.clone()],
        "refused: no mute"
    );

    // For a year, then for two seconds: the end is replaced.
    let year = json!({ "expires_in": 31_622_400 });
    let (s, b) = t
        .call(Method::PUT, "/users/bob/mutes/alice", Some(year))
        .await;
    assert_eq!(
        (s, &b["active"], &b["changed"]),
        (StatusCode::OK, &json!(true), &json!(true))
    );
    let a_year = b["expires_at"].as_str().unwrap().to_owned();
    let soon = json!({ "expires_in": 2 });
    let (_, b) = t
        .call(Method::PUT, "/users/bob/mutes/alice", Some(soon))
        .await;
    assert_eq!(b["changed"], json!(true), "{b}");
    assert!(b["expires_at"].as_str().unwrap() < a_year.as_str(), "{b}");
    t.wait_idle().await;
    assert!(t.timeline("bob", 5).await.is_empty());
    let a2 = t.post("alice", "two").await;
    t.wait_idle().await;
    assert!(
        t.timeline("bob", 5).await.is_empty(),
        "muted: not delivered"
    );
    let back = newest_first(vec![a1, a2]);
    assert_eq!(
        timeline_until(&t, "bob", &back).await,
        back,
        "the mute ended"
    );
    let (_, muted) = t.get("/users/bob/mutes").await;
    assert_eq!(muted["users"], json!([]), "{muted}");
    let (_, b) = t.call(Method::PUT, "/users/bob/mutes/alice", None).await;
    assert_eq!((&b["changed"], b.get("expires_at")), (&json!(true), None));
}

#[tokio::test]
async fn a_timed_mute_ends_by_itself_over_grpc() {
    let t = spawn_app().await;
    users(&t, &["bob", "alice"]).await;
    t.follow("bob", "alice").await;
    let a1 = t.post("alice", "one").await;
    t.wait_idle().await;
    let (mut w, _) = clients_as(&t, ADMIN_KEY).await;
    let rel = |expires_in| pb::RelationRequest {
        user: "bob".into(),
        target: "alice".into(),
        expires_in,
    };
    let err = w.block(rel(Some(5))).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("for a mute"), "{}", err.message());
    let err = w.mute(rel(Some(0))).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    let reply = w.mute(rel(Some(1))).await.unwrap().into_inner();
    assert!(reply.active && reply.changed && reply.expires_at.is_some());
    t.wait_idle().await;
    assert!(t.timeline("bob", 5).await.is_empty());
    let back = vec![a1];
    assert_eq!(
        timeline_until(&t, "bob", &back).await,
        back,
        "the mute ended"
    );
}

/// A blocked viewer meets the author the same way everywhere they name
/// them: the thread, the post itself, the author's profile, counts and
/// lists all answer 404 (a user token reads as its user, a server key
/// names the viewer), over REST and gRPC; a mute hides none of it.
#[tokio::test]
async fn a_block_hides_the_author_from_every_read_by_name() {
    let t = spawn_app().await;
    users(&t, &["ann", "bob", "cy", "dee"]).await;
    t.follow("bob", "ann").await;
    t.follow("ann", "bob").await;
    let post = t.post("ann", "hello").await;
    t.call(Method::PUT, &format!("/users/bob/reposts/{post}"), None)
        .await;
    let (_, profile) = t.get("/users/bob/posts").await;
    let repost = profile["posts"][0]["position"].as_str().unwrap().to_owned();
    let (s, _) = t.call(Method::PUT, "/users/ann/blocks/cy", None).await;
    assert_eq!(s, StatusCode::OK);
    t.call(Method::PUT, "/users/dee/mutes/ann", None).await;

    let reads = [
        format!("/posts/{post}/thread"),
        format!("/posts/{post}"),
        format!("/posts/{post}/likes"),
        format!("/posts/{repost}"),
        format!("/posts/{repost}/thread"),
        "/users/ann".into(),
        "/users/ann/posts".into(),
        "/users/ann/followers".into(),
        "/users/ann/following".into(),
        "/users/ann/lists".into(),
        "/users/ann/follower_count".into(),
        "/users/ann/following_count".into(),
    ];
    let code = |s: StatusCode, v: &Value| {
        let code = v["error"]["code"].as_str().unwrap_or("ok");
        format!("{} {code}", s.as_u16())
    };
    let (cy, dee) = (
        client_with(&token_for("cy")),
        client_with(&token_for("dee")),
    );
    for path in &reads {
        let want = match path.starts_with("/posts") {
            true => "404 post_not_found",
            false => "404 user_not_found",
        };
        let sep = if path.contains('?') { '&' } else { '?' };
        let (s, v) = t.get(&format!("{path}{sep}viewer=cy")).await;
        assert_eq!(code(s, &v), want, "server key viewing as cy: {path}");
        let resp = cy.get(format!("{}{path}", t.base)).send().await.unwrap();
        let s = resp.status();
        assert_eq!(code(s, &resp.json().await.unwrap()), want, "cy: {path}");
        // A mute hides nothing asked for by name; nor does anything hide
        // without a viewer.
        let resp = dee.get(format!("{}{path}", t.base)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "dee: {path}");
        let (s, _) = t.get(path).await;
        assert_eq!(s, StatusCode::OK, "no viewer: {path}");
    }
    // Several authors: the hidden one adds nothing; bob's repost of her
    // post goes from his profile for cy too.
    let resp = cy
        .get(format!("{}/posts?authors=ann,bob", t.base))
        .send()
        .await
        .unwrap();
    let page: Value = resp.json().await.unwrap();
    assert_eq!(page["posts"], json!([]), "{page}");
    let (_, page) = t.get("/users/bob/posts?viewer=cy").await;
    assert_eq!(page["posts"], json!([]), "{page}");
    // A user token names only its own user.
    let resp = cy
        .get(format!("{}/users/ann?viewer=dee", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);

    // gRPC: the same answers, by the viewer field or a user token.
    let (_, mut r) = clients_as(&t, ADMIN_KEY).await;
    let as_cy = |id: &str| pb::GetUserRequest {
        id: id.into(),
        viewer: "cy".into(),
    };
    let got = r.get_user(as_cy("ann")).await.unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let got = r.follower_count(as_cy("ann")).await.unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let got = r.list_lists(as_cy("ann")).await.unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let got = r
        .get_post(pb::GetPostRequest {
            id: post.clone(),
            viewer: "cy".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let got = r
        .list_posts(pb::ListPostsRequest {
            user: "ann".into(),
            viewer: "cy".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let got = r
        .list_followers(pb::ListUsersRequest {
            user: "ann".into(),
            viewer: "cy".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let got = r
        .list_likers(pb::ListLikersRequest {
            post_id: post.clone(),
            viewer: "cy".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let (_, mut r_cy) = clients_as(&t, &token_for("cy")).await;
    let got = r_cy
        .get_post(pb::GetPostRequest {
            id: post.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let seen = r
        .get_user(pb::GetUserRequest {
            id: "ann".into(),
            viewer: "dee".into(),
        })
        .await
        .unwrap();
    assert_eq!(seen.into_inner().id, "ann");
}

/// bob's notifications as (kind, post) pairs, newest first.
async fn told(t: &TestApp) -> Vec<(String, String)> {
    let (s, b) = t.get("/users/bob/notifications").await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let entries = b["notifications"].as_array().unwrap().iter();
    let pair = |n: &Value| {
        (
            n["kind"].as_str().unwrap().to_owned(),
            n["post"].as_str().unwrap_or("").to_owned(),
        )
    };
    entries.map(pair).collect()
}

#[tokio::test]
async fn a_muted_thread_notifies_no_more_over_rest_and_grpc() {
    let t = spawn_app().await;
    users(&t, &["bob", "alice", "carol"]).await;
    let root = t.post("bob", "a thread").await;
    let body = json!({ "message": "an answer", "in_reply_to": root });
    let (s, b) = t.call(Method::POST, "/users/alice/posts", Some(body)).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let answer = b["id"].as_str().unwrap().to_owned();
    let other = t.post("bob", "elsewhere").await;
    // alice's answer told bob before the mute (a notice is decided when the
    // worker makes it).
    t.wait_idle().await;

    // Muted through alice's answer: the thread is bob's first post.
    for (path, status, code) in [
        (
            "/users/bob/muted-threads/nope",
            StatusCode::BAD_REQUEST,
            "invalid_post_id",
        ),
        (
            "/users/bob/muted-threads/0550f1a2b3c40000",
            StatusCode::NOT_FOUND,
            "post_not_found",
        ),
    ] {
        let (s, b) = t.call(Method::PUT, path, None).await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}"
        );
    }
    let (s, b) = t
        .call(
            Method::PUT,
            &format!("/users/bob/muted-threads/{answer}"),
            None,
        )
        .await;
    assert_eq!(
        (s, b),
        (
            StatusCode::OK,
            json!({ "muted": true, "changed": true, "thread": root })
        )
    );
    let (_, listed) = t.get("/users/bob/muted-threads").await;
    assert_eq!(listed, json!({ "threads": [root], "next_cursor": null }));

    // carol likes and answers in it, and likes bob's other post: only that tells him.
    for post in [&root, &answer, &other] {
        t.call(Method::PUT, &format!("/users/carol/likes/{post}"), None)
            .await;
    }
    let body = json!({ "message": "me too @bob", "in_reply_to": answer });
    t.call(Method::POST, "/users/carol/posts", Some(body)).await;
    t.wait_idle().await;
    let like = |post: &str| ("like".to_owned(), post.to_owned());
    let reply_to_root = ("reply".to_owned(), root.clone());
    assert_eq!(told(&t).await, [like(&other), reply_to_root.clone()]);

    // Over gRPC: listed, unmuted, and it tells him again.
    let (mut w, mut r) = clients_as(&t, &token_for("bob")).await;
    let listed = r
        .list_muted_threads(pb::ListMutedThreadsRequest {
            user: "bob".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.threads, vec![root.clone()]);
    let request = pb::ThreadMuteRequest {
        user: "bob".into(),
        post_id: root.clone(),
    };
    let reply = w.unmute_thread(request.clone()).await.unwrap().into_inner();
    assert_eq!(
        (reply.muted, reply.changed, reply.thread),
        (false, true, root.clone())
    );
    t.call(Method::PUT, &format!("/users/alice/likes/{root}"), None)
        .await;
    t.wait_idle().await;
    assert!(told(&t).await.contains(&like(&root)), "it tells him again");
    let reply = w.mute_thread(request).await.unwrap().into_inner();
    assert!(reply.muted && reply.changed);
    let err = w
        .mute_thread(pb::ThreadMuteRequest {
            user: "alice".into(),
            post_id: root,
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Code::PermissionDenied,
        "bob's token mutes for bob only"
    );
}
