//! Replies and threads over REST and gRPC on a running server: a reply
//! counts on the post answered and reaches only the followers who follow
//! both; a thread gives the ancestors and a page of replies, without what
//! the viewer hides; refusals with their codes.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use tonic::Code;

async fn reply(t: &TestApp, author: &str, to: &str, message: &str) -> (StatusCode, Value) {
    let body = json!({ "message": message, "in_reply_to": to });
    t.call(Method::POST, &format!("/users/{author}/posts"), Some(body))
        .await
}

/// A GET with `credential` instead of the app's own key.
async fn get_as(t: &TestApp, credential: &str, path: &str) -> (StatusCode, Value) {
    let resp = client_with(credential)
        .get(format!("{}{path}", t.base))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn ids(posts: &Value) -> Vec<&str> {
    posts
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn replies_and_threads_over_rest() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy", "dee"] {
        t.put_user(u).await;
    }
    // cy follows bo only; dee follows both.
    for (f, g) in [("cy", "bo"), ("dee", "bo"), ("dee", "ann")] {
        t.follow(f, g).await;
    }
    for u in ["cy", "dee"] {
        t.get(&format!("/users/{u}/timeline")).await;
    }
    let root = t.post("ann", "question").await;
    let (s, answer) = reply(&t, "bo", &root, "answer").await;
    assert_eq!(s, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["in_reply_to"], json!(root));
    assert_eq!(answer["in_reply_to_author"], "ann");
    let a1 = answer["id"].as_str().unwrap().to_owned();
    let (_, follow_up) = reply(&t, "ann", &a1, "thanks").await;
    let a2 = follow_up["id"].as_str().unwrap().to_owned();
    for n in 0..3 {
        let (s, _) = reply(&t, "cy", &root, &format!("me too {n}")).await;
        assert_eq!(s, StatusCode::CREATED);
    }
    let (_, v) = t.get(&format!("/posts/{root}")).await;
    assert_eq!(v["replies"], 4, "{v}");
    t.wait_idle().await;

    // bo's reply to ann reaches dee, who follows both, and not cy.
    let (_, dee) = t.get("/users/dee/timeline").await;
    assert!(ids(&dee["posts"]).contains(&a1.as_str()), "{dee}");
    let (_, cy) = t.get("/users/cy/timeline").await;
    assert!(!ids(&cy["posts"]).contains(&a1.as_str()), "{cy}");

    // The thread of bo's answer: ann's question above, ann's thanks below.
    let (s, thread) = t.get(&format!("/posts/{a1}/thread")).await;
    assert_eq!(s, StatusCode::OK, "{thread}");
    assert_eq!(ids(&thread["ancestors"]), [root.as_str()]);
    assert_eq!(thread["post"]["id"], json!(a1));
    assert_eq!(ids(&thread["replies"]), [a2.as_str()]);
    assert_eq!(thread["ancestors"][0]["replies"], 4);
    // The root's replies, oldest first, two at a time.
    let (_, first) = t.get(&format!("/posts/{root}/thread?limit=2")).await;
    assert_eq!(ids(&first["ancestors"]).len(), 0);
    assert_eq!(ids(&first["replies"])[0], a1);
    assert_eq!(first["replies"][0]["replies"], 1, "bo's answer has a reply");
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, second) = t
        .get(&format!("/posts/{root}/thread?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(ids(&second["replies"]).len(), 2);
    assert!(second["next_cursor"].is_null(), "{second}");
    // dee mutes cy: cy's replies leave dee's view of the thread.
    t.call(Method::PUT, "/users/dee/mutes/cy", None).await;
    let (_, viewed) = t.get(&format!("/posts/{root}/thread?viewer=dee")).await;
    assert_eq!(ids(&viewed["replies"]), [a1.as_str()]);
    let dee = token_for("dee");
    let (s, mine) = get_as(&t, &dee, &format!("/posts/{root}/thread")).await;
    assert_eq!(
        (s, ids(&mine["replies"])),
        (StatusCode::OK, vec![a1.as_str()])
    );
    let (s, v) = get_as(&t, &dee, &format!("/posts/{root}/thread?viewer=cy")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("not_your_account"))
    );

    // Refusals name the problem.
    let (s, v) = reply(&t, "bo", "00000000000000ff", "to nothing").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("post_not_found"))
    );
    let (s, v) = reply(&t, "bo", "nope", "bad").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id"))
    );
    t.call(Method::PUT, "/users/ann/blocks/cy", None).await;
    let (s, v) = reply(&t, "cy", &root, "blocked").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("blocked"))
    );
    let (s, v) = t.get("/posts/00000000000000ff/thread").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("post_not_found"))
    );

    // A deleted reply leaves the count and the thread.
    t.call(Method::DELETE, &format!("/posts/{a2}"), None).await;
    let (_, v) = t.get(&format!("/posts/{a1}/thread")).await;
    assert_eq!(
        (v["post"]["replies"].as_u64(), ids(&v["replies"]).len()),
        (Some(0), 0)
    );
}

#[tokio::test]
async fn replies_and_threads_over_grpc() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    let root = t.post("ann", "question").await;
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let answer = w
        .create_post(pb::CreatePostRequest {
            author: "bo".into(),
            message: "answer".into(),
            in_reply_to: root.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (
            answer.in_reply_to.as_str(),
            answer.in_reply_to_author.as_str()
        ),
        (root.as_str(), "ann")
    );
    let thread = r
        .get_thread(pb::ThreadRequest {
            post_id: answer.id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(thread.ancestors.len(), 1);
    assert_eq!(thread.ancestors[0].id, root);
    assert_eq!(thread.ancestors[0].replies, Some(1));
    assert_eq!(thread.post.unwrap().id, answer.id);
    let missing = w
        .create_post(pb::CreatePostRequest {
            author: "bo".into(),
            message: "to nothing".into(),
            in_reply_to: "00000000000000ff".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let bad = r
        .get_thread(pb::ThreadRequest {
            post_id: "nope".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
}
