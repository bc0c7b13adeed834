//! Bookmarks over REST and gRPC on a running server: private to their
//! user, newest bookmarked first, paged by a stable cursor, each post once,
//! gone when their post is deleted; refusals with their codes.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;

fn bookmarked(page: &Value) -> Vec<String> {
    let entries = page["bookmarks"].as_array().cloned().unwrap_or_default();
    entries
        .iter()
        .map(|b| b["post"]["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_user_bookmarks_posts_and_reads_them_back_alone() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy"] {
        t.put_user(u).await;
    }
    let mut made = Vec::new();
    for i in 0..4 {
        made.push(t.post("bo", &format!("p{i}")).await);
    }
    let mark = |user: &str, post: &str| format!("/users/{user}/bookmarks/{post}");
    for p in [&made[1], &made[3], &made[0]] {
        // Bookmarks of one millisecond order by post: each in its own.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        let (s, v) = t.call(Method::PUT, &mark("ann", p), None).await;
        assert_eq!(
            (s, v),
            (
                StatusCode::OK,
                json!({ "bookmarked": true, "changed": true })
            )
        );
    }
    let (_, v) = t.call(Method::PUT, &mark("ann", &made[3]), None).await;
    assert_eq!(v, json!({ "bookmarked": true, "changed": false }), "once");

    // Newest bookmarked first, a page at a time.
    let (s, page) = t.get("/users/ann/bookmarks").await;
    assert_eq!(s, StatusCode::OK, "{page}");
    let all = vec![made[0].clone(), made[3].clone(), made[1].clone()];
    assert_eq!(bookmarked(&page), all);
    assert!(page["bookmarks"][0]["bookmarked_at"].as_str().is_some());
    let (_, first) = t.get("/users/ann/bookmarks?limit=2").await;
    assert_eq!(bookmarked(&first), all[..2]);
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    // A bookmark made since does not move the pages after the cursor.
    t.call(Method::PUT, &mark("ann", &made[2]), None).await;
    let (_, rest) = t
        .get(&format!("/users/ann/bookmarks?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(bookmarked(&rest), all[2..]);
    assert!(rest["next_cursor"].is_null(), "{rest}");

    // Removed once; a deleted post is no longer bookmarked.
    let (_, v) = t.call(Method::DELETE, &mark("ann", &made[2]), None).await;
    assert_eq!(v, json!({ "bookmarked": false, "changed": true }));
    let (_, v) = t.call(Method::DELETE, &mark("ann", &made[2]), None).await;
    assert_eq!(v, json!({ "bookmarked": false, "changed": false }));
    t.delete(&format!("/posts/{}", made[3])).await;
    let (_, page) = t.get("/users/ann/bookmarks").await;
    assert_eq!(bookmarked(&page), [made[0].clone(), made[1].clone()]);

    // Only their user reads or changes them.
    let ann = client_with(&token_for("ann"));
    let bo = client_with(&token_for("bo"));
    let url = format!("{}/users/ann/bookmarks", t.base);
    assert_eq!(ann.get(&url).send().await.unwrap().status(), StatusCode::OK);
    let theirs = bo.get(&url).send().await.unwrap();
    assert_eq!(theirs.status(), StatusCode::FORBIDDEN);
    let v: Value = theirs.json().await.unwrap();
    assert_eq!(v["error"]["code"], "not_your_account");
    let write = bo
        .put(format!("{}{}", t.base, mark("ann", &made[0])))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), StatusCode::FORBIDDEN);

    // Refusals.
    let code = |v: &Value| v["error"]["code"].as_str().map(str::to_owned);
    let (s, v) = t
        .call(Method::PUT, &mark("ann", "00000000000000ff"), None)
        .await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::NOT_FOUND, Some("post_not_found".into()))
    );
    let (s, v) = t.call(Method::PUT, &mark("ann", "nope"), None).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id".into()))
    );
    let (s, v) = t.call(Method::PUT, &mark("zed", &made[0]), None).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::NOT_FOUND, Some("user_not_found".into()))
    );
    let (s, v) = t.get("/users/ann/bookmarks?cursor=zz").await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::BAD_REQUEST, Some("invalid_cursor".into()))
    );
    let (s, v) = t.get("/users/zed/bookmarks").await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::NOT_FOUND, Some("user_not_found".into()))
    );
    // A post on the other side of a block is not the user's to bookmark.
    let cys = t.post("cy", "mine").await;
    t.call(Method::PUT, "/users/cy/blocks/ann", None).await;
    let (s, v) = t.call(Method::PUT, &mark("ann", &cys), None).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::NOT_FOUND, Some("post_not_found".into()))
    );
}

#[tokio::test]
async fn bookmarks_over_grpc() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    let first = t.post("bo", "one").await;
    let second = t.post("bo", "two").await;
    let (mut ingest, mut reads) = clients_as(&t, ADMIN_KEY).await;
    let req = |post: &str| pb::BookmarkRequest {
        user: "ann".into(),
        post_id: post.into(),
    };
    for p in [&first, &second] {
        let r = ingest.bookmark(req(p)).await.unwrap().into_inner();
        assert!(r.bookmarked && r.changed);
    }
    let r = ingest.unbookmark(req(&first)).await.unwrap().into_inner();
    assert!(!r.bookmarked && r.changed);
    let list = |user: &str| pb::ListBookmarksRequest {
        user: user.into(),
        limit: 0,
        cursor: String::new(),
    };
    let page = reads
        .list_bookmarks(list("ann"))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<&str> = page.posts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, [second.as_str()]);
    assert_eq!(page.bookmarked_at.len(), 1);
    assert!(page.next_cursor.is_empty());

    let (mut as_bo, mut bo_reads) = clients_as(&t, &token_for("bo")).await;
    let refused = bo_reads.list_bookmarks(list("ann")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let refused = as_bo.bookmark(req(&first)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let missing = ingest.bookmark(req("00000000000000ff")).await.unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
}
