//! Likes over REST and gRPC on a running server: liked once, counted on the
//! post, likers paged newest first, refusals with their codes, and the same
//! operations through the generated gRPC clients.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use socialite_proto::v1 as pb;
use tonic::Code;

#[tokio::test]
async fn likes_over_rest() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy", "dee"] {
        t.put_user(u).await;
    }
    let post = t.post("ann", "like me").await;
    let like = |user: &str| format!("/users/{user}/likes/{post}");

    let (s, v) = t.call(Method::PUT, &like("bo"), None).await;
    assert_eq!(
        (s, v.clone()),
        (StatusCode::OK, json!({ "liked": true, "changed": true })),
        "{v}"
    );
    let (_, v) = t.call(Method::PUT, &like("bo"), None).await;
    assert_eq!(v, json!({ "liked": true, "changed": false }), "idempotent");
    for u in ["cy", "dee"] {
        let (s, _) = t.call(Method::PUT, &like(u), None).await;
        assert_eq!(s, StatusCode::OK);
    }
    let (_, v) = t.get(&format!("/posts/{post}")).await;
    assert_eq!(v["likes"], 3, "{v}");

    // Likers, newest first, a page at a time with the opaque cursor.
    let (s, first) = t.get(&format!("/posts/{post}/likes?limit=2")).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    assert_eq!(first["likers"].as_array().unwrap().len(), 2);
    assert!(first["likers"][0]["liked_at"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, rest) = t
        .get(&format!("/posts/{post}/likes?limit=2&cursor={cursor}"))
        .await;
    assert!(rest["next_cursor"].is_null(), "{rest}");
    let mut who: Vec<&str> = first["likers"]
        .as_array()
        .unwrap()
        .iter()
        .chain(rest["likers"].as_array().unwrap())
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    who.sort_unstable();
    assert_eq!(who, ["bo", "cy", "dee"]);

    // Undone once; the count follows.
    let (_, v) = t.call(Method::DELETE, &like("cy"), None).await;
    assert_eq!(v, json!({ "liked": false, "changed": true }));
    let (_, v) = t.call(Method::DELETE, &like("cy"), None).await;
    assert_eq!(v, json!({ "liked": false, "changed": false }));
    let (_, v) = t.get(&format!("/posts/{post}")).await;
    assert_eq!(v["likes"], 2);

    // Refusals name the problem.
    let (s, v) = t
        .call(Method::PUT, "/users/bo/likes/00000000000000ff", None)
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("post_not_found"))
    );
    let (s, v) = t
        .call(Method::PUT, "/users/bo/likes/not-a-post", None)
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id"))
    );
    let (s, v) = t.call(Method::PUT, &like("nobody"), None).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("user_not_found"))
    );
    let (s, v) = t.get("/posts/00000000000000ff/likes").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("post_not_found"))
    );
    let (s, v) = t.get(&format!("/posts/{post}/likes?cursor=zz")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_cursor"))
    );
    let (s, _) = t.call(Method::PUT, "/users/ann/blocks/cy", None).await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = t.call(Method::PUT, &like("cy"), None).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("blocked"))
    );

    // A suspended author's post is absent to likers too.
    let (s, _) = t.call(Method::PUT, "/users/ann/suspension", None).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = t.call(Method::PUT, &like("cy"), None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = t.get(&format!("/posts/{post}/likes")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn likes_over_grpc() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    let post = t.post("ann", "like me").await;
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let req = |user: &str, post_id: &str| pb::LikeRequest {
        user: user.into(),
        post_id: post_id.into(),
    };
    let reply = w.like(req("bo", &post)).await.unwrap().into_inner();
    assert_eq!((reply.liked, reply.changed), (true, true));
    let reply = w.like(req("bo", &post)).await.unwrap().into_inner();
    assert_eq!((reply.liked, reply.changed), (true, false));
    let got = r
        .get_post(pb::GetPostRequest {
            id: post.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(got.into_inner().likes, Some(1));
    let likers = r
        .list_likers(pb::ListLikersRequest {
            post_id: post.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(likers.users, ["bo"]);
    assert_eq!(likers.liked_at.len(), 1);
    assert!(likers.next_cursor.is_empty());
    let reply = w.unlike(req("bo", &post)).await.unwrap().into_inner();
    assert_eq!((reply.liked, reply.changed), (false, true));
    let got = r
        .get_post(pb::GetPostRequest {
            id: post.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(got.into_inner().likes, Some(0));

    let missing = w.like(req("bo", "00000000000000ff")).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let bad = w.like(req("bo", "nope")).await.unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(
        bad.message().contains("invalid_post_id"),
        "{}",
        bad.message()
    );
}
