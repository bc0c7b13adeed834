//! Following and unfollowing many accounts in one call, over REST and gRPC:
//! each edge as one follow or unfollow changes it, each with its answer,
//! refused whole only when the caller may not act as the user or the call
//! names no edge or too many.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use tonic::Code;

async fn users(t: &TestApp, ids: &[&str]) {
    for id in ids {
        t.put_user(id).await;
    }
}

#[tokio::test]
async fn many_follows_over_rest_each_with_its_answer() {
    let t = spawn_app().await;
    users(&t, &["a", "b", "c", "d"]).await;
    let by_b = t.post("b", "from b").await;
    let body = json!({ "edges": [
        { "target": "b", "lists": ["work"] },
        { "target": "c", "reposts": false, "notify": true },
        { "target": "nobody" },
        { "target": "a" },
        { "target": "d", "follow": false },
    ]});
    let (s, reply) = t.call(Method::POST, "/users/a/following", Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{reply}");
    let results = reply["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    assert_eq!(
        results[0],
        json!({ "target": "b", "following": true, "changed": true, "lists": ["work"] })
    );
    assert_eq!(
        results[1],
        json!({ "target": "c", "following": true, "changed": true, "lists": [] })
    );
    assert_eq!(
        (
            results[2]["status"].clone(),
            results[2]["error"]["code"].clone()
        ),
        (json!(404), json!("user_not_found"))
    );
    assert_eq!(
        (
            results[3]["status"].clone(),
            results[3]["error"]["code"].clone()
        ),
        (json!(409), json!("cannot_follow_self"))
    );
    assert_eq!(
        results[4],
        json!({ "target": "d", "following": false, "changed": false, "lists": [] })
    );

    // As one follow: counts move, the followee's posts reach the timeline
    // and the list.
    let (_, b) = t.get("/users/b").await;
    assert_eq!(b["followers"], 1);
    t.wait_idle().await;
    assert_eq!(t.timeline("a", 10).await, vec![by_b.clone()]);
    let (_, list) = t.get("/users/a/lists/work/timeline").await;
    assert_eq!(ids(&list["posts"]), vec![by_b]);

    // c's follow came with its options; the unfollow below clears them.
    let (_, rel) = t.get("/users/a/relationship/c").await;
    assert_eq!(
        (&rel["reposts"], &rel["notify"]),
        (&json!(false), &json!(true)),
        "{rel}"
    );
    // Unfollowing in bulk, and a second identical call changes nothing.
    let undo = json!({ "edges": [{ "target": "b", "follow": false }, { "target": "c", "follow": false }] });
    let (_, reply) = t
        .call(Method::POST, "/users/a/following", Some(undo.clone()))
        .await;
    assert_eq!(reply["results"][0]["changed"], true);
    let (_, reply) = t.call(Method::POST, "/users/a/following", Some(undo)).await;
    assert_eq!(
        reply["results"][1],
        json!({ "target": "c", "following": false, "changed": false, "lists": [] })
    );
    let (_, rel) = t.get("/users/a/relationship/c").await;
    assert_eq!(
        (&rel["reposts"], &rel["notify"]),
        (&json!(true), &json!(false)),
        "{rel}"
    );
}

#[tokio::test]
async fn a_bulk_call_is_refused_whole_for_its_caller_or_its_size() {
    let t = spawn_app().await;
    users(&t, &["a", "b"]).await;
    let edges = |n: usize| json!({ "edges": vec![json!({ "target": "b" }); n] });
    for (body, status, code) in [
        (edges(0), StatusCode::BAD_REQUEST, "invalid_edge_count"),
        (edges(101), StatusCode::BAD_REQUEST, "invalid_edge_count"),
        (
            json!({ "edges": [{ "target": "b", "extra": 1 }] }),
            StatusCode::BAD_REQUEST,
            "invalid_body",
        ),
        (
            json!({ "edges": [{ "target": "b", "lists": ["no spaces"] }] }),
            StatusCode::OK,
            "",
        ),
    ] {
        let (s, reply) = t.call(Method::POST, "/users/a/following", Some(body)).await;
        assert_eq!(s, status, "{reply}");
        if !code.is_empty() {
            assert_eq!(reply["error"]["code"], code, "{reply}");
        }
    }
    // A user's token acts for that user only.
    let as_b = client_with(&token_for("b"));
    let resp = as_b
        .post(format!("{}/users/a/following", t.base))
        .json(&edges(1))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = as_b
        .post(format!("{}/users/b/following", t.base))
        .json(&json!({ "edges": [{ "target": "a" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let reply: Value = resp.json().await.unwrap();
    assert_eq!(reply["results"][0]["following"], true);
}

#[tokio::test]
async fn many_follows_over_grpc_each_with_its_answer() {
    let t = spawn_app().await;
    users(&t, &["a", "b", "c"]).await;
    let (mut w, _) = clients_as(&t, ADMIN_KEY).await;
    let edge = |target: &str, unfollow: bool| pb::EdgeChange {
        target: target.into(),
        unfollow,
        lists: vec!["work".into()],
        set_lists: !unfollow,
        replies: Some(true),
        ..Default::default()
    };
    let reply = w
        .change_follows(pb::ChangeFollowsRequest {
            user: "a".into(),
            edges: vec![edge("b", false), edge("nobody", false), edge("c", true)],
        })
        .await
        .unwrap()
        .into_inner();
    let outcomes: Vec<_> = reply
        .results
        .iter()
        .map(|r| (r.target.as_str(), r.outcome.clone().unwrap()))
        .collect();
    use pb::edge_result::Outcome;
    assert!(
        matches!(&outcomes[0], ("b", Outcome::Edge(e)) if e.following && e.changed && e.lists == ["work"])
    );
    assert!(
        matches!(&outcomes[1], ("nobody", Outcome::Error(e)) if e.code == "user_not_found" && e.grpc_code == Code::NotFound as i32)
    );
    assert!(matches!(&outcomes[2], ("c", Outcome::Edge(e)) if !e.following && !e.changed));
    // The follow's options came with it.
    let (_, mut r) = clients_as(&t, ADMIN_KEY).await;
    let rel = pb::RelationshipRequest {
        user: "a".into(),
        other: "b".into(),
    };
    let rel = r.get_relationship(rel).await.unwrap().into_inner();
    assert_eq!((rel.replies, rel.reposts), (Some(true), Some(true)));

    let none = w
        .change_follows(pb::ChangeFollowsRequest {
            user: "a".into(),
            edges: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(none.code(), Code::InvalidArgument);
    let (mut as_b, _) = clients_as(&t, &token_for("b")).await;
    let other = as_b
        .change_follows(pb::ChangeFollowsRequest {
            user: "a".into(),
            edges: vec![edge("c", false)],
        })
        .await
        .unwrap_err();
    assert_eq!(other.code(), Code::PermissionDenied);
}
