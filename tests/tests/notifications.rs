//! Notifications over REST and gRPC on a running server: grouped entries
//! with counts and actors, paging, the unread count against a marker,
//! hidden actors, refusals, and the live stream's notification event.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use tonic::Code;

fn kinds(page: &Value) -> Vec<&str> {
    page["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn notifications_over_rest() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy", "dee"] {
        t.put_user(u).await;
    }
    // Entries, and the actors within one, are ordered by their notices'
    // ids, which are their times in milliseconds: acts of one millisecond
    // are told apart, not ordered (`notifications::notices::id_at`). A fast machine
    // makes several of these acts within one, so each waits for the next.
    let next_millisecond = || tokio::time::sleep(std::time::Duration::from_millis(2));
    let post = t.post("ann", "hello").await;
    for u in ["bo", "cy", "dee"] {
        next_millisecond().await;
        let (s, _) = t
            .call(Method::PUT, &format!("/users/{u}/likes/{post}"), None)
            .await;
        assert_eq!(s, StatusCode::OK);
    }
    next_millisecond().await;
    t.follow("bo", "ann").await;
    next_millisecond().await;
    t.post("cy", "hi @ann").await;
    let page = t
        .eventually_get("/users/ann/notifications", |v| kinds(v).len() == 3)
        .await;
    assert_eq!(kinds(&page), ["mention", "follow", "like"], "{page}");
    let like = &page["notifications"][2];
    assert_eq!(like["post"], json!(post));
    assert_eq!(like["count"], 3);
    assert_eq!(like["actors"], json!(["dee", "cy", "bo"]));
    assert!(like["latest_at"].as_str().unwrap().ends_with('Z'));
    assert!(
        page["notifications"][1]["post"].is_null(),
        "a follow is about no post"
    );

    // Paged by the entries' ids.
    let (_, first) = t.get("/users/ann/notifications?limit=2").await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (_, rest) = t
        .get(&format!("/users/ann/notifications?limit=2&before={cursor}"))
        .await;
    assert_eq!(kinds(&rest), ["like"]);
    assert!(rest["next_cursor"].is_null());

    // Unread: all three, then none once the newest is marked read.
    let (_, v) = t.get("/users/ann/notifications/unread").await;
    assert_eq!(v, json!({ "unread": 3, "more": false }));
    let newest = page["notifications"][0]["id"].as_str().unwrap();
    let body = json!({ "last_read_id": newest });
    let (s, v) = t
        .call(Method::PUT, "/users/ann/markers/notifications", Some(body))
        .await;
    assert_eq!(
        (s, &v["timeline"]),
        (StatusCode::OK, &json!("notifications")),
        "{v}"
    );
    let (_, v) = t.get("/users/ann/notifications/unread").await;
    assert_eq!(v, json!({ "unread": 0, "more": false }));

    // Hidden actors leave the entry; an unlike takes its notice back.
    t.call(Method::PUT, "/users/ann/mutes/dee", None).await;
    t.call(Method::DELETE, &format!("/users/cy/likes/{post}"), None)
        .await;
    let page = t
        .eventually_get("/users/ann/notifications", |v| {
            v["notifications"][2]["count"] == 1
        })
        .await;
    assert_eq!(page["notifications"][2]["actors"], json!(["bo"]), "{page}");

    // Refusals name the problem; a user token reads only its own.
    let (s, v) = t.get("/users/ann/notifications?before=zz").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id"))
    );
    let (s, v) = t.get("/users/nobody/notifications").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("user_not_found"))
    );
    let body = json!({ "last_read_id": newest });
    let (s, v) = t
        .call(Method::PUT, "/users/ann/markers/later", Some(body))
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_marker_timeline"))
    );
    let bo = client_with(&token_for("bo"));
    let denied = bo
        .get(format!("{}/users/ann/notifications", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn notifications_over_grpc() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    t.follow("bo", "ann").await;
    let (_, mut r) = clients_as(&t, ADMIN_KEY).await;
    let list = || pb::ListPostsRequest {
        user: "ann".into(),
        limit: 10,
        ..Default::default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let page = loop {
        let page = r.list_notifications(list()).await.unwrap().into_inner();
        if !page.notifications.is_empty() || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(page.notifications.len(), 1);
    let n = &page.notifications[0];
    assert_eq!(
        (n.kind.as_str(), n.actors.clone(), n.count),
        ("follow", vec!["bo".to_owned()], 1)
    );
    let unread = r
        .unread_notifications(pb::UserRef { id: "ann".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((unread.unread, unread.more), (1, false));
    let missing = r
        .unread_notifications(pb::UserRef {
            id: "nobody".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
}
