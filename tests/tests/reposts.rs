//! Reposts over REST and gRPC on a running server: a reposted post shows
//! once in a follower's timeline, at the newest repost, naming the
//! reposters; undoing moves it back; counts on the post; refusals with
//! their codes; the live stream carries a repost; the same operations
//! through the generated gRPC clients.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use tonic::Code;

/// The home timeline of `user` as (post, position, reposted_by) of each entry.
async fn entries(t: &TestApp, user: &str) -> Vec<(String, String, Vec<String>)> {
    let path = format!("/users/{user}/timeline");
    let timeline = t.eventually_get(&path, |_| true).await;
    described(&timeline)
}

fn described(page: &Value) -> Vec<(String, String, Vec<String>)> {
    page["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["id"].as_str().unwrap().to_owned();
            let position = p["position"].as_str().unwrap_or(&id).to_owned();
            let by = p["reposted_by"]
                .as_array()
                .map(|a| a.iter().map(|u| u.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            (id, position, by)
        })
        .collect()
}

#[tokio::test]
async fn reposts_over_rest() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy", "dee"] {
        t.put_user(u).await;
    }
    for (f, g) in [("bo", "ann"), ("bo", "cy"), ("bo", "dee")] {
        let (s, _) = t
            .call(Method::PUT, &format!("/users/{f}/following/{g}"), None)
            .await;
        assert_eq!(s, StatusCode::OK);
    }
    // bo reads first: his timeline is stored, and fanout keeps it.
    t.get("/users/bo/timeline").await;
    let post = t.post("ann", "repost me").await;
    let newer = t.post("ann", "newer").await;
    let repost = |user: &str| format!("/users/{user}/reposts/{post}");

    let (s, v) = t.call(Method::PUT, &repost("cy"), None).await;
    assert_eq!(
        (s, v.clone()),
        (StatusCode::OK, json!({ "reposted": true, "changed": true })),
        "{v}"
    );
    let (_, v) = t.call(Method::PUT, &repost("cy"), None).await;
    assert_eq!(
        v,
        json!({ "reposted": true, "changed": false }),
        "idempotent"
    );
    let (s, _) = t.call(Method::PUT, &repost("dee"), None).await;
    assert_eq!(s, StatusCode::OK);
    let (_, v) = t.get(&format!("/posts/{post}")).await;
    assert_eq!(
        (v["reposts"].as_u64(), v["likes"].as_u64()),
        (Some(2), Some(0)),
        "{v}"
    );

    // Once, on top, naming both reposters, newest first; below it, ann's
    // newer post (wait for the page to hold both).
    let timeline = t
        .eventually_get("/users/bo/timeline", |v| {
            let both = v["posts"][0]["reposted_by"]
                .as_array()
                .is_some_and(|a| a.len() == 2);
            both && v["posts"].as_array().is_some_and(|p| p.len() == 2)
        })
        .await;
    let seen = described(&timeline);
    assert_eq!(seen.len(), 2, "{timeline}");
    assert_eq!(
        (seen[0].0.as_str(), &seen[0].2),
        (post.as_str(), &vec!["dee".to_owned(), "cy".to_owned()])
    );
    assert_eq!(timeline["posts"][0]["reposted_by_count"], 2);
    assert_eq!(seen[1].0, newer);
    assert!(
        seen[0].1 > newer,
        "the repost placed it above the newer post"
    );
    // The position pages: below it, only the newer post.
    let (_, below) = t
        .get(&format!("/users/bo/timeline?before={}", seen[0].1))
        .await;
    let below: Vec<String> = described(&below).into_iter().map(|e| e.0).collect();
    assert_eq!(below, std::slice::from_ref(&newer));

    // Undone, it moves back to cy's repost; both undone, to its own place.
    let (_, v) = t.call(Method::DELETE, &repost("dee"), None).await;
    assert_eq!(v, json!({ "reposted": false, "changed": true }));
    let (_, v) = t.call(Method::DELETE, &repost("dee"), None).await;
    assert_eq!(v, json!({ "reposted": false, "changed": false }));
    let timeline = t
        .eventually_get("/users/bo/timeline", |v| {
            v["posts"][0]["reposted_by"] == json!(["cy"])
        })
        .await;
    assert_eq!(described(&timeline)[0].2, ["cy"]);
    t.call(Method::DELETE, &repost("cy"), None).await;
    let timeline = t
        .eventually_get("/users/bo/timeline", |v| {
            v["posts"][0]["id"] == json!(newer)
        })
        .await;
    let ids: Vec<String> = described(&timeline).into_iter().map(|e| e.0).collect();
    assert_eq!(ids, [newer.clone(), post.clone()]);
    assert!(
        timeline["posts"][1].get("reposted_by").is_none(),
        "{timeline}"
    );
    let (_, v) = t.get(&format!("/posts/{post}")).await;
    assert_eq!(v["reposts"], 0);

    // A profile shows its owner's reposts; the repost's own id reads as one.
    t.call(Method::PUT, &repost("cy"), None).await;
    let (_, profile) = t.get("/users/cy/posts").await;
    assert_eq!(profile["posts"][0]["id"], json!(post), "{profile}");
    assert_eq!(profile["posts"][0]["reposted_by"], json!(["cy"]));
    let item = profile["posts"][0]["position"].as_str().unwrap().to_owned();
    let (s, v) = t.get(&format!("/posts/{item}")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (v["author"].as_str(), v["message"].as_str()),
        (Some("cy"), Some(""))
    );
    assert_eq!(
        (v["repost_of"].as_str(), v["repost_of_author"].as_str()),
        (Some(post.as_str()), Some("ann"))
    );

    // Refusals name the problem.
    let refused = |s: StatusCode, v: &Value| (s, v["error"]["code"].as_str().map(str::to_owned));
    let (s, v) = t.call(Method::PUT, &repost("ann"), None).await;
    assert_eq!(
        refused(s, &v),
        (StatusCode::CONFLICT, Some("cannot_repost_own".into()))
    );
    let (s, v) = t
        .call(Method::PUT, "/users/bo/reposts/00000000000000ff", None)
        .await;
    assert_eq!(
        refused(s, &v),
        (StatusCode::NOT_FOUND, Some("post_not_found".into()))
    );
    let (s, v) = t.call(Method::PUT, "/users/bo/reposts/nope", None).await;
    assert_eq!(
        refused(s, &v),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id".into()))
    );
    let (s, v) = t.call(Method::PUT, &repost("nobody"), None).await;
    assert_eq!(
        refused(s, &v),
        (StatusCode::NOT_FOUND, Some("user_not_found".into()))
    );
    t.call(Method::PUT, "/users/ann/blocks/dee", None).await;
    let (s, v) = t.call(Method::PUT, &repost("dee"), None).await;
    assert_eq!(
        refused(s, &v),
        (StatusCode::FORBIDDEN, Some("blocked".into()))
    );

    // The post deleted, its reposts leave every timeline.
    let (s, _) = t
        .call(Method::DELETE, &format!("/posts/{post}"), None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let timeline = t
        .eventually_get("/users/bo/timeline", |v| {
            v["posts"].as_array().is_some_and(|a| a.len() == 1)
        })
        .await;
    assert_eq!(entries(&t, "bo").await.len(), 1, "{timeline}");
    let (_, profile) = t.get("/users/cy/posts").await;
    assert_eq!(profile["posts"], json!([]), "{profile}");
}

#[tokio::test]
async fn reposts_over_grpc() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    let (s, _) = t.call(Method::PUT, "/users/bo/following/ann", None).await;
    assert_eq!(s, StatusCode::OK);
    let post = t.post("ann", "repost me").await;
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let req = |user: &str, post_id: &str| pb::RepostRequest {
        user: user.into(),
        post_id: post_id.into(),
    };
    let reply = w.repost(req("bo", &post)).await.unwrap().into_inner();
    assert_eq!((reply.reposted, reply.changed), (true, true));
    let reply = w.repost(req("bo", &post)).await.unwrap().into_inner();
    assert_eq!((reply.reposted, reply.changed), (true, false));
    let got = r
        .get_post(pb::GetPostRequest {
            id: post.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((got.reposts, got.replies), (Some(1), Some(0)));
    let mine = r
        .list_posts(pb::ListPostsRequest {
            user: "bo".into(),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(mine.posts.len(), 1);
    let entry = &mine.posts[0];
    assert_eq!(
        (entry.id.as_str(), entry.author.as_str()),
        (post.as_str(), "ann")
    );
    assert_eq!(
        (entry.reposted_by.clone(), entry.reposted_by_count),
        (vec!["bo".to_owned()], 1)
    );
    assert!(entry.position > post);
    let reply = w.unrepost(req("bo", &post)).await.unwrap().into_inner();
    assert_eq!((reply.reposted, reply.changed), (false, true));

    let own = w.repost(req("ann", &post)).await.unwrap_err();
    assert_eq!(own.code(), Code::FailedPrecondition, "{own:?}");
    assert!(
        own.message().contains("cannot_repost_own"),
        "{}",
        own.message()
    );
    let missing = w.repost(req("bo", "00000000000000ff")).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let bad = w.repost(req("bo", "nope")).await.unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
}

/// A like of a repost's id likes the post it carries (so a block with that
/// post's author refuses it, as a repost or a reply is refused); once the
/// post is deleted, its repost answers 404 to every read by id and takes
/// no like, over REST and gRPC alike.
#[tokio::test]
async fn a_repost_stands_for_its_post_and_goes_with_it() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy", "dee"] {
        t.put_user(u).await;
    }
    let post = t.post("ann", "repost me").await;
    let (s, _) = t
        .call(Method::PUT, &format!("/users/bo/reposts/{post}"), None)
        .await;
    assert_eq!(s, StatusCode::OK);
    let (_, profile) = t.get("/users/bo/posts").await;
    let item = profile["posts"][0]["position"].as_str().unwrap().to_owned();
    let code = |v: &Value| v["error"]["code"].as_str().unwrap_or("ok").to_owned();

    // Liked through the repost: the original counts it, and its author is
    // told; the repost's item counts nothing.
    let like = |user: &str, id: &str| format!("/users/{user}/likes/{id}");
    let (s, v) = t.call(Method::PUT, &like("dee", &item), None).await;
    assert_eq!((s, v["changed"].as_bool()), (StatusCode::OK, Some(true)));
    let (_, v) = t.get(&format!("/posts/{post}")).await;
    assert_eq!(v["likes"], 1, "{v}");
    let (_, v) = t.get(&format!("/posts/{item}")).await;
    assert_eq!(v["likes"], 0, "{v}");
    let liked = |v: &Value| v["notifications"][0]["kind"] == "like";
    let told = t.eventually_get("/users/ann/notifications", liked).await;
    assert_eq!(told["notifications"][0]["post"], json!(post), "{told}");
    let (_, v) = t.call(Method::PUT, &like("dee", &post), None).await;
    assert_eq!(v["changed"], false, "the same like");
    let (_, v) = t.call(Method::DELETE, &like("dee", &item), None).await;
    assert_eq!(v["changed"], true, "{v}");
    let (_, v) = t.get(&format!("/posts/{post}")).await;
    assert_eq!(v["likes"], 0, "{v}");

    // Blocked by ann, cy can like her post through bo's repost no more
    // than directly.
    t.call(Method::PUT, "/users/ann/blocks/cy", None).await;
    let (s, v) = t.call(Method::PUT, &like("cy", &item), None).await;
    assert_eq!((s, code(&v)), (StatusCode::FORBIDDEN, "blocked".into()));

    // The original deleted: the repost answers 404 to every read by id and
    // takes no like.
    let (s, _) = t
        .call(Method::DELETE, &format!("/posts/{post}"), None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    for path in ["", "/likes", "/thread"] {
        let (s, v) = t.get(&format!("/posts/{item}{path}")).await;
        assert_eq!(
            (s, code(&v)),
            (StatusCode::NOT_FOUND, "post_not_found".into()),
            "{path}: {v}"
        );
    }
    let (s, v) = t.call(Method::PUT, &like("dee", &item), None).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::NOT_FOUND, "post_not_found".into())
    );
    let (_, mut r) = clients_as(&t, ADMIN_KEY).await;
    let got = r
        .get_post(pb::GetPostRequest {
            id: item.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(got.code(), Code::NotFound, "{got:?}");
    let (mut w, _) = clients_as(&t, ADMIN_KEY).await;
    let refused = w
        .like(pb::LikeRequest {
            user: "dee".into(),
            post_id: item.clone(),
        })
        .await
        .unwrap_err();
    assert!(
        refused.message().starts_with("post_not_found"),
        "{refused:?}"
    );
    // No like was ever the reposter's to be told of.
    let (_, told) = t.get("/users/bo/notifications").await;
    assert_eq!(told["notifications"], json!([]), "{told}");
}
