//! Keyword filters on a running server, over REST and gRPC: a warning
//! marks an entry with the filter and phrase, a hiding filter leaves it
//! out, at the next read (a kept first page included), a filter that
//! expires lets its posts back by itself; the limits refuse with a code
//! each; another user's credential neither reads nor changes them.

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

/// The `filtered` of the entry whose message is `message`.
fn filtered<'a>(page: &'a Value, message: &str) -> &'a Value {
    let posts = page["posts"].as_array().unwrap();
    let entry = posts.iter().find(|p| p["message"] == message).unwrap();
    &entry["filtered"]
}

async fn make(t: &TestApp, body: Value) -> (StatusCode, Value) {
    t.call(Method::POST, "/users/ann/filters", Some(body)).await
}

#[tokio::test]
async fn a_reader_warns_hides_and_lets_a_filter_expire() {
    let t = spawn_app().await;
    for u in ["ann", "rob", "cat"] {
        t.put_user(u).await;
    }
    for u in ["rob", "cat"] {
        t.follow("ann", u).await;
    }
    let spoiler = t.post("rob", "A Spoiler here").await;
    t.post("rob", "weather today").await;
    t.post("cat", "spoilers are words too").await;
    t.wait_idle().await;
    let (_, home) = t.get("/users/ann/timeline").await;
    assert_eq!(messages(&home).len(), 3);

    let (s, f) = make(&t, json!({ "phrases": [{ "text": "spoiler" }] })).await;
    assert_eq!(s, StatusCode::CREATED, "{f}");
    assert_eq!(
        (&f["id"], &f["title"], &f["action"], &f["expires_at"]),
        (&json!("1"), &json!("spoiler"), &json!("warn"), &Value::Null)
    );
    assert_eq!(f["contexts"].as_array().unwrap().len(), 7);
    // Twice: the second read may be a kept page; both see the filter.
    for _ in 0..2 {
        let (_, home) = t.get("/users/ann/timeline").await;
        let hit = json!([{ "filter": "1", "title": "spoiler", "phrase": "spoiler" }]);
        assert_eq!(filtered(&home, "A Spoiler here"), &hit, "{home}");
        assert_eq!(filtered(&home, "spoilers are words too"), &Value::Null);
    }
    // A profile and a group, as their viewer; not for another viewer.
    let (_, posts) = t.get("/users/rob/posts?viewer=ann").await;
    assert_eq!(
        filtered(&posts, "A Spoiler here")[0]["filter"],
        "1",
        "{posts}"
    );
    let (_, posts) = t.get("/users/rob/posts?viewer=cat").await;
    assert_eq!(filtered(&posts, "A Spoiler here"), &Value::Null);
    for u in ["ann", "rob"] {
        let (s, _) = t
            .call(Method::PUT, &format!("/groups/club/members/{u}"), None)
            .await;
        assert!(s.is_success());
    }
    t.post("rob", "club spoiler").await;
    t.wait_idle().await;
    let (_, group) = t.get("/groups/club/timeline?viewer=ann").await;
    assert_eq!(
        filtered(&group, "club spoiler")[0]["filter"],
        "1",
        "{group}"
    );
    // In a thread, as its viewer.
    let body = json!({ "message": "no spoiler, promise", "in_reply_to": spoiler });
    let (s, _) = t.call(Method::POST, "/users/cat/posts", Some(body)).await;
    assert!(s.is_success());
    let (_, thread) = t.get(&format!("/posts/{spoiler}/thread?viewer=ann")).await;
    assert_eq!(
        thread["replies"][0]["filtered"][0]["filter"], "1",
        "{thread}"
    );

    // Hide, at the next read of the kept page.
    let (s, f) = t
        .call(
            Method::PATCH,
            "/users/ann/filters/1",
            Some(json!({ "action": "hide", "contexts": ["home"] })),
        )
        .await;
    assert_eq!((s, &f["action"]), (StatusCode::OK, &json!("hide")), "{f}");
    t.wait_idle().await;
    let (_, home) = t.get("/users/ann/timeline").await;
    assert!(!messages(&home).contains(&"A Spoiler here".to_owned()));
    let (_, thread) = t.get(&format!("/posts/{spoiler}/thread?viewer=ann")).await;
    assert!(thread["replies"][0].get("filtered").is_none(), "home only");

    // A filter for three seconds (time enough to read it on a slow machine): gone by itself.
    let (s, f) = make(
        &t,
        json!({ "phrases": [{ "text": "WEATHER", "whole_word": false }], "action": "hide", "expires_in": 3 }),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{f}");
    let (_, home) = t.get("/users/ann/timeline").await;
    // (cat's reply says "spoiler" too.)
    assert_eq!(messages(&home), ["spoilers are words too"]);
    tokio::time::sleep(std::time::Duration::from_millis(3200)).await;
    let (_, home) = t.get("/users/ann/timeline").await;
    assert!(
        messages(&home).contains(&"weather today".to_owned()),
        "{home}"
    );
    let (_, all) = t.get("/users/ann/filters").await;
    let expired: Vec<&Value> = all["filters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["expired"])
        .collect();
    assert_eq!(expired, [&json!(false), &json!(true)]);

    // Deleted (idempotent): the post is back.
    let (s, v) = t.call(Method::DELETE, "/users/ann/filters/1", None).await;
    assert_eq!((s, &v["deleted"]), (StatusCode::OK, &json!(true)));
    let (_, v) = t.call(Method::DELETE, "/users/ann/filters/1", None).await;
    assert_eq!(v["deleted"], false);
    let (_, home) = t.get("/users/ann/timeline").await;
    assert_eq!(messages(&home).len(), 5);
    let (s, v) = t.get("/users/ann/filters/1").await;
    assert_eq!(
        (s, &v["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("filter_not_found"))
    );
}

#[tokio::test]
async fn filters_refuse_bad_input_and_other_users() {
    let t = spawn_app().await;
    for u in ["ann", "cat"] {
        t.put_user(u).await;
    }
    let phrase = |text: String| json!({ "phrases": [{ "text": text }] });
    let cases = [
        (phrase("x".repeat(65)), "invalid_filter_phrase"),
        (phrase(" ".into()), "invalid_filter_phrase"),
        (json!({ "phrases": [] }), "invalid_filter_phrases"),
        (json!({ "title": "no phrases" }), "invalid_filter_phrases"),
        (
            json!({ "phrases": (0..21).map(|i| json!({ "text": i.to_string() })).collect::<Vec<_>>() }),
            "invalid_filter_phrases",
        ),
        (
            json!({ "phrases": [{ "text": "a" }], "contexts": ["nowhere"] }),
            "invalid_filter_context",
        ),
        (
            json!({ "phrases": [{ "text": "a" }], "contexts": [] }),
            "invalid_filter_context",
        ),
        (
            json!({ "phrases": [{ "text": "a" }], "action": "explode" }),
            "invalid_filter_action",
        ),
        (
            json!({ "phrases": [{ "text": "a" }], "expires_in": 0 }),
            "invalid_expires_in",
        ),
        (
            json!({ "phrases": [{ "text": "a" }], "title": "t".repeat(101) }),
            "invalid_filter_title",
        ),
        (
            json!({ "phrases": [{ "text": "a" }], "regex": ".*" }),
            "invalid_body",
        ),
    ];
    for (body, code) in cases {
        let (s, v) = make(&t, body.clone()).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{body}"
        );
    }
    // A million characters: over the body limit.
    let (s, _) = make(&t, phrase("x".repeat(1_000_000))).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
    let (s, v) = t.get("/users/ann/filters/x").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_filter_id"))
    );

    // The hundred-and-first is refused.
    for i in 0..100 {
        let (s, v) = make(&t, phrase(format!("word{i}"))).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    let (s, v) = make(&t, phrase("one more".into())).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("too_many_filters"))
    );

    // cat's token neither reads nor changes ann's filters.
    let cat = client_with(&token_for("cat"));
    let url = format!("{}/users/ann/filters", t.base);
    let read = cat.get(&url).send().await.unwrap();
    assert_eq!(read.status(), StatusCode::FORBIDDEN);
    let made = cat
        .post(&url)
        .json(&phrase("a".into()))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), StatusCode::FORBIDDEN);
    let gone = cat.delete(format!("{url}/1")).send().await.unwrap();
    assert_eq!(gone.status(), StatusCode::FORBIDDEN);
    // Her own: none.
    let own = cat
        .get(format!("{}/users/cat/filters", t.base))
        .send()
        .await
        .unwrap();
    let own: Value = own.json().await.unwrap();
    assert_eq!(own["filters"], json!([]));
}

#[tokio::test]
async fn filters_over_grpc_in_mentions_and_notifications() {
    use socialite_proto::v1 as pb;
    let t = spawn_app().await;
    for u in ["ann", "cat"] {
        t.put_user(u).await;
    }
    let (mut w, mut r) = clients_as(&t, &token_for("ann")).await;
    let request = |phrases: Option<&[&str]>, action: Option<&str>| pb::FilterRequest {
        user: "ann".into(),
        phrases: phrases.map(|p| pb::FilterPhrases {
            phrases: p
                .iter()
                .map(|t| pb::FilterPhrase {
                    text: t.to_string(),
                    whole_word: true,
                })
                .collect(),
        }),
        action: action.map(str::to_owned),
        contexts: Some(pb::FilterContexts {
            contexts: vec!["mentions".into(), "notifications".into()],
        }),
        ..Default::default()
    };
    let made = w
        .create_filter(request(Some(&["Eclipse"]), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((made.id.as_str(), made.action.as_str()), ("1", "warn"));
    let bad = w.create_filter(request(Some(&[]), None)).await.unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);

    t.post("cat", "@ann the eclipse!").await;
    t.wait_idle().await;
    let page = || pb::ListPostsRequest {
        user: "ann".into(),
        ..Default::default()
    };
    let mentions = r.list_mentions(page()).await.unwrap().into_inner();
    let hit = &mentions.posts[0].filtered[0];
    assert_eq!(
        (hit.filter_id.as_str(), hit.phrase.as_str()),
        ("1", "Eclipse")
    );
    let told = r.list_notifications(page()).await.unwrap().into_inner();
    assert_eq!(told.notifications[0].filtered[0].title, "Eclipse");

    let hide = pb::FilterRequest {
        filter_id: "1".into(),
        ..request(None, Some("hide"))
    };
    let changed = w.update_filter(hide).await.unwrap().into_inner();
    assert_eq!(changed.phrases[0].text, "Eclipse", "kept");
    assert!(r
        .list_mentions(page())
        .await
        .unwrap()
        .into_inner()
        .posts
        .is_empty());
    let told = r.list_notifications(page()).await.unwrap().into_inner();
    assert!(told.notifications.is_empty());

    let listed = r
        .list_filters(pb::UserRef { id: "ann".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.filters.len(), 1);
    // cat's credential: refused.
    let (mut w_cat, mut r_cat) = clients_as(&t, &token_for("cat")).await;
    let theirs = r_cat.list_filters(pb::UserRef { id: "ann".into() }).await;
    assert_eq!(theirs.unwrap_err().code(), tonic::Code::PermissionDenied);
    let del = pb::FilterRef {
        user: "ann".into(),
        filter_id: "1".into(),
    };
    let refused = w_cat.delete_filter(del.clone()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert!(w.delete_filter(del).await.unwrap().into_inner().deleted);
    assert_eq!(
        r.list_mentions(page())
            .await
            .unwrap()
            .into_inner()
            .posts
            .len(),
        1
    );
}
