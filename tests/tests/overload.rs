//! Holding the line under load: write budgets per credential, with the
//! IETF `RateLimit` fields and `Retry-After`.

mod common;

use common::*;
use reqwest::StatusCode;
use serde_json::{json, Value};
use socialite_core::budgets::Quota;
use socialite_proto::v1 as pb;
use tonic::Code;

/// A user token spends its account's points (create 3, update 2, delete
/// 1) until the budget is gone; then it is refused with 429, `Retry-After`
/// and the fields naming the exhausted window, on REST and gRPC alike,
/// while another account and the server key write on.
#[tokio::test]
async fn a_write_budget_refuses_past_its_points() {
    let t = spawn_app_configured(|c| {
        c.auth.budgets.user = Quota {
            per_hour: 20,
            per_day: 1000,
        }
    })
    .await;
    for u in ["alice", "bob"] {
        t.put_user(u).await;
    }
    let alice = client_with(&token_for("alice"));
    let post = |n: u32| {
        alice
            .post(format!("{}/users/alice/posts", t.base))
            .json(&json!({ "message": format!("post {n}") }))
            .send()
    };
    // Six posts spend 18 points of 20.
    for n in 0..6 {
        let resp = post(n).await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let policy = resp.headers()["ratelimit-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            policy.contains("\"hour\";q=20;w=3600;qu=\"points\""),
            "{policy}"
        );
        assert!(policy.contains("\"day\";q=1000;w=86400"), "{policy}");
        let left = resp.headers()["ratelimit"].to_str().unwrap().to_owned();
        assert!(left.starts_with("\"hour\";r="), "{left}");
    }
    let resp = post(6).await.unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    // 3 points at 20 an hour: 1 more point takes 180 s.
    let retry: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((150..=541).contains(&retry), "Retry-After {retry}");
    let left = resp.headers()["ratelimit"].to_str().unwrap().to_owned();
    assert!(left.starts_with("\"hour\";r=2;t="), "{left}");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], "write_budget_exceeded");
    // A refused act spent nothing: two deletes (1 point each) still fit;
    // then nothing does.
    let (_, posts) = t.get("/users/alice/posts").await;
    let ids = common::ids(&posts["posts"]);
    let delete = |id: String| alice.delete(format!("{}/posts/{id}", t.base)).send();
    for (n, id) in ids.into_iter().take(3).enumerate() {
        let status = delete(id).await.unwrap().status();
        match n {
            2 => assert_eq!(status, StatusCode::TOO_MANY_REQUESTS),
            _ => assert_eq!(status, StatusCode::NO_CONTENT),
        }
    }
    // Reads spend no points.
    let resp = alice
        .get(format!("{}/users/alice/timeline", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get("ratelimit").is_some());
    // gRPC spends the same budget: RESOURCE_EXHAUSTED with retry-after.
    let (mut ingest, _) = clients_as(&t, &token_for("alice")).await;
    let err = ingest
        .create_post(pb::CreatePostRequest {
            author: "alice".into(),
            message: "over".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.message().contains("write_budget_exceeded"), "{err:?}");
    assert!(err.metadata().get("retry-after").is_some());
    assert!(err.metadata().get("ratelimit").is_some());
    // bob has a budget of his own, and the server key none.
    let bob = client_with(&token_for("bob"));
    let resp = bob
        .post(format!("{}/users/bob/posts", t.base))
        .json(&json!({ "message": "hi" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    for n in 0..10 {
        t.post("alice", &format!("by the backend {n}")).await;
    }
}
