//! Markers and resuming over REST and gRPC on a running server: a marker
//! moves forward only unless forced, and the home timeline pages forward
//! from it, oldest unseen first, seeing what changed since.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;

fn posts(page: &Value) -> Vec<String> {
    ids(&page["posts"])
}

#[tokio::test]
async fn a_reader_resumes_where_they_stopped() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    t.follow("ann", "bo").await;
    let mut made = Vec::new();
    for i in 0..6 {
        made.push(t.post("bo", &format!("p{i}")).await);
    }
    t.wait_idle().await;
    let set = |id: &str, force: bool| json!({ "last_read_id": id, "force": force });
    let (s, v) = t
        .call(
            Method::PUT,
            "/users/ann/markers/home",
            Some(set(&made[1], false)),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (v["last_read_id"].as_str(), v["changed"].as_bool()),
        (Some(&*made[1]), Some(true))
    );
    assert_eq!(v["timeline"], "home");
    let (_, v) = t.get("/users/ann/markers").await;
    assert_eq!(v["markers"][0]["last_read_id"], made[1]);

    // Forward from the marker, oldest first, a page at a time.
    let (s, page) = t
        .get(&format!("/users/ann/timeline?after={}&limit=2", made[1]))
        .await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(posts(&page), [made[2].clone(), made[3].clone()]);
    assert_eq!(page["next_cursor"], made[3]);
    assert_eq!(page["skipped"], false);
    // A post deleted since is not shown.
    t.delete(&format!("/posts/{}", made[4])).await;
    t.wait_idle().await;
    let (_, page) = t
        .get(&format!("/users/ann/timeline?after={}&limit=2", made[3]))
        .await;
    assert_eq!(posts(&page), [made[5].clone()]);
    assert!(page["next_cursor"].is_null(), "{page}");
    let (_, page) = t
        .get(&format!("/users/ann/timeline?after={}", made[5]))
        .await;
    assert!(posts(&page).is_empty(), "nothing newer");

    // Forward only, unless forced.
    let (_, v) = t
        .call(
            Method::PUT,
            "/users/ann/markers/home",
            Some(set(&made[0], false)),
        )
        .await;
    assert_eq!(
        (v["last_read_id"].as_str(), v["changed"].as_bool()),
        (Some(&*made[1]), Some(false))
    );
    let (_, v) = t
        .call(
            Method::PUT,
            "/users/ann/markers/home",
            Some(set(&made[0], true)),
        )
        .await;
    assert_eq!(
        (v["last_read_id"].as_str(), v["changed"].as_bool()),
        (Some(&*made[0]), Some(true))
    );

    // Refusals name the problem.
    let (s, v) = t
        .call(
            Method::PUT,
            "/users/ann/markers/notes",
            Some(set(&made[0], false)),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_marker_timeline"))
    );
    let (s, v) = t
        .call(
            Method::PUT,
            "/users/ann/markers/home",
            Some(json!({ "last_read_id": "x" })),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id"))
    );
    // A place past every post to come would hide them all as read.
    for ahead in ["ffffffffffffffff", "4000000000000000"] {
        let (s, v) = t
            .call(
                Method::PUT,
                "/users/ann/markers/home",
                Some(set(ahead, true)),
            )
            .await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("time_ahead")),
            "{v}"
        );
    }
    let (s, v) = t
        .call(
            Method::PUT,
            "/users/ann/markers/home",
            Some(json!({ "last_read": made[0] })),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = t
        .get(&format!(
            "/users/ann/timeline?after={}&before={}",
            made[0], made[5]
        ))
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_query"))
    );
    let (s, v) = t.get("/users/ann/timeline?after=nothex").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_post_id"))
    );
    let (s, _) = t
        .call(
            Method::PUT,
            "/users/nobody/markers/home",
            Some(set(&made[0], false)),
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_place_older_than_the_window_starts_at_its_oldest_entry() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    t.follow("ann", "bo").await;
    let first = t.post("bo", "old").await;
    let window = socialite_core::markers::FORWARD_WINDOW;
    let mut made = Vec::new();
    for i in 0..window {
        made.push(t.post("bo", &format!("p{i}")).await);
    }
    t.wait_idle().await;
    let (s, page) = t
        .get(&format!("/users/ann/timeline?after={first}&limit=3"))
        .await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["skipped"], true, "more than the window is newer");
    assert_eq!(
        posts(&page),
        made[..3].to_vec(),
        "the window's oldest first"
    );
    let (_, page) = t
        .get(&format!("/users/ann/timeline?after={}&limit=3", made[0]))
        .await;
    assert_eq!(page["skipped"], false);
    assert_eq!(posts(&page), made[1..4].to_vec());
}

#[tokio::test]
async fn markers_over_grpc() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    t.follow("ann", "bo").await;
    let made = [
        t.post("bo", "a").await,
        t.post("bo", "b").await,
        t.post("bo", "c").await,
    ];
    t.wait_idle().await;
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let reply = w
        .set_marker(pb::SetMarkerRequest {
            user: "ann".into(),
            timeline: "home".into(),
            last_read_id: made[0].clone(),
            force: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.changed);
    assert_eq!(reply.marker.unwrap().last_read_id, made[0]);
    let held = r
        .list_markers(pb::UserRef { id: "ann".into() })
        .await
        .unwrap();
    assert_eq!(held.into_inner().markers[0].last_read_id, made[0]);
    let page = r
        .get_timeline(pb::ListPostsRequest {
            user: "ann".into(),
            after: made[0].clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let got: Vec<&str> = page.posts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(got, [made[1].as_str(), made[2].as_str()]);
    assert!(!page.skipped && page.next_cursor.is_empty());
    let both = r
        .get_timeline(pb::ListPostsRequest {
            user: "ann".into(),
            after: made[0].clone(),
            before: made[2].clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(both.code(), tonic::Code::InvalidArgument);
}
