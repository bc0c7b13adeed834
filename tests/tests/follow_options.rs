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
