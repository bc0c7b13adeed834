//! Follow options over REST on a running server: hide one followee's
//! reposts, show all of another's replies; each takes effect for the next
//! read, cached entries included, and an unfollow clears them.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

fn messages(page: &Value) -> Vec<String> {
    page["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap().to_owned())
        .collect()
}

async fn set(t: &TestApp, target: &str, body: Value) -> Value {
    let path = format!("/users/ann/following/{target}");
    let (s, v) = t.call(Method::PUT, &path, Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v
}

#[tokio::test]
async fn a_reader_hides_one_accounts_reposts_and_sees_anothers_replies() {
    let t = spawn_app().await;
    for u in ["ann", "rob", "cat", "far"] {
        t.put_user(u).await;
    }
    for u in ["rob", "cat"] {
        t.follow("ann", u).await;
    }
    let far = t.post("far", "from afar").await;
    let (s, v) = t
        .call(Method::PUT, &format!("/users/rob/reposts/{far}"), None)
        .await;
    assert!(s.is_success(), "{v}");
    let body = json!({ "message": "a reply to far", "in_reply_to": far });
    let (s, v) = t.call(Method::POST, "/users/cat/posts", Some(body)).await;
    assert!(s.is_success(), "{v}");
    t.post("cat", "own post").await;
    t.wait_idle().await;
    // A plain follow: rob's repost shows, cat's reply to far does not.
    let (_, home) = t.get("/users/ann/timeline").await;
    assert_eq!(messages(&home), ["own post", "from afar"]);

    let v = set(&t, "rob", json!({ "reposts": false })).await;
    assert_eq!(
        (v["following"].as_bool(), v["changed"].as_bool()),
        (Some(true), Some(true))
    );
    let v = set(&t, "cat", json!({ "replies": true })).await;
    assert_eq!(v["changed"], true);
    let (_, home) = t.get("/users/ann/timeline").await;
    assert_eq!(messages(&home), ["own post", "a reply to far"]);

    // The relationship shows them to ann (and server keys), not to others.
    let (_, rel) = t.get("/users/ann/relationship/rob").await;
    assert_eq!(
        (&rel["reposts"], &rel["replies"], &rel["notify"]),
        (&json!(false), &json!(false), &json!(false)),
        "{rel}"
    );
    let token = token_for("cat");
    let resp = client_with(&token)
        .get(format!("{}/users/ann/relationship/rob", t.base))
        .send()
        .await
        .unwrap();
    let other: Value = resp.json().await.unwrap();
    assert_eq!(other["following"], true);
    assert!(other.get("reposts").is_none(), "{other}");

    // Sent again, nothing changes; turned back, the repost returns.
    assert_eq!(
        set(&t, "rob", json!({ "reposts": false })).await["changed"],
        false
    );
    set(&t, "rob", json!({ "reposts": true })).await;
    let (_, home) = t.get("/users/ann/timeline").await;
    assert_eq!(messages(&home), ["own post", "a reply to far", "from afar"]);

    // An unfollow clears the options: a follow again starts plain.
    set(&t, "rob", json!({ "reposts": false })).await;
    let (s, _) = t
        .call(Method::DELETE, "/users/ann/following/rob", None)
        .await;
    assert_eq!(s, StatusCode::OK);
    t.follow("ann", "rob").await;
    t.wait_idle().await;
    let (_, home) = t.get("/users/ann/timeline").await;
    assert!(messages(&home).contains(&"from afar".to_owned()), "{home}");

    // Not a boolean: refused.
    let path = "/users/ann/following/cat";
    let (s, v) = t
        .call(Method::PUT, path, Some(json!({ "notify": "yes" })))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
}

#[tokio::test]
async fn follow_options_over_grpc_and_notify() {
    use socialite_proto::v1 as pb;
    let t = spawn_app().await;
    for u in ["ann", "rob", "cat"] {
        t.put_user(u).await;
    }
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let follow = |target: &str, reposts, notify| pb::FollowRequest {
        user: "ann".into(),
        target: target.into(),
        reposts,
        notify,
        ..Default::default()
    };
    w.follow(follow("rob", Some(false), None)).await.unwrap();
    let made = w.follow(follow("cat", None, Some(true))).await.unwrap();
    assert!(made.into_inner().changed);
    let rel = |other: &str| pb::RelationshipRequest {
        user: "ann".into(),
        other: other.into(),
    };
    let got = r.get_relationship(rel("cat")).await.unwrap().into_inner();
    assert_eq!(
        (got.following, got.reposts, got.replies, got.notify),
        (true, Some(true), Some(false), Some(true))
    );
    // Another user's credential reads no options and sets none.
    let (mut w_cat, mut r_cat) = clients_as(&t, &token_for("cat")).await;
    let theirs = r_cat
        .get_relationship(rel("rob"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((theirs.following, theirs.reposts), (true, None));
    let refused = w_cat.follow(follow("rob", Some(true), None)).await;
    assert_eq!(refused.unwrap_err().code(), tonic::Code::PermissionDenied);

    // cat posts: ann is told (kind "post"); rob posts: she is not.
    let cats = t.post("cat", "news").await;
    t.post("rob", "also news").await;
    t.wait_idle().await;
    let page = pb::ListPostsRequest {
        user: "ann".into(),
        ..Default::default()
    };
    let told = r.list_notifications(page).await.unwrap().into_inner();
    let kinds: Vec<(&str, &str, Vec<String>)> = told
        .notifications
        .iter()
        .map(|n| (n.kind.as_str(), n.post_id.as_str(), n.actors.clone()))
        .collect();
    assert_eq!(kinds, [("post", cats.as_str(), vec!["cat".to_owned()])]);
}
