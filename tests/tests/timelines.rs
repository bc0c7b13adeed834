//! The timelines beyond home, end to end over REST and gRPC on the whole
//! pipeline: lists on follow edges, groups, mentions, and the relationship
//! with its lists. Each is read cold (a read-time merge), then from the
//! stored timeline that fanout keeps, and bad input gets its documented
//! 4xx.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use socialite_proto::v1 as pb;

/// Files `target` under `lists` as `user` follows them.
async fn file(t: &TestApp, user: &str, target: &str, lists: &[&str]) -> serde_json::Value {
    let (s, b) = t
        .call(
            Method::PUT,
            &format!("/users/{user}/following/{target}"),
            Some(json!({ "lists": lists })),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    b
}

/// Each GET is refused with its status and error code.
async fn refused(t: &TestApp, cases: &[(&str, u16, &str)]) {
    for (path, status, code) in cases {
        let (s, b) = t.get(path).await;
        assert_eq!(
            (s.as_u16(), b["error"]["code"].as_str()),
            (*status, Some(*code)),
            "{path}"
        );
    }
}

/// A write refused with 400 and its error code.
async fn refused_write(
    t: &TestApp,
    method: Method,
    path: &str,
    body: serde_json::Value,
    code: &str,
) {
    let (s, b) = t.call(method, path, Some(body)).await;
    assert_eq!(
        (s.as_u16(), b["error"]["code"].as_str()),
        (400, Some(code)),
        "{path}"
    );
}

#[tokio::test]
async fn lists_file_follows_and_serve_their_timelines() {
    let t = spawn_app().await;
    for u in ["reader", "ann", "ben", "cat"] {
        t.put_user(u).await;
    }
    let b = file(&t, "reader", "ann", &["work", "friends"]).await;
    assert_eq!(
        b,
        json!({ "following": true, "changed": true, "lists": ["friends", "work"] })
    );
    file(&t, "reader", "ben", &["work"]).await;
    t.follow("reader", "cat").await;
    let ann = t.post("ann", "from ann").await;
    let ben = t.post("ben", "from ben").await;
    t.post("cat", "from cat").await;
    t.wait_idle().await;

    let (_, lists) = t.get("/users/reader/lists").await;
    assert_eq!(
        lists,
        json!({ "lists": [{ "name": "friends", "count": 1, "exclusive": false },
                          { "name": "work", "count": 2, "exclusive": false }] })
    );
    let (_, members) = t.get("/users/reader/following?list=work").await;
    assert_eq!(members["users"], json!(["ann", "ben"]));
    let (_, all) = t.get("/users/reader/following").await;
    assert_eq!(all["users"].as_array().unwrap().len(), 3);

    // Cold: merged at read time; then stored, and fanout keeps it.
    let path = "/users/reader/lists/work/timeline";
    let resp = t
        .http
        .get(format!("{}{path}", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-timeline-source"], "merge");
    let page: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(ids(&page["posts"]), vec![ben.clone(), ann.clone()]);
    let later = t.post("ann", "ann again").await;
    eventually("the list's stored timeline gets ann's post", || async {
        let resp = t
            .http
            .get(format!("{}{path}", t.base))
            .send()
            .await
            .unwrap();
        let cached = resp.headers()["x-timeline-source"] == "cache";
        let page: serde_json::Value = resp.json().await.unwrap();
        cached && ids(&page["posts"]) == vec![later.clone(), ben.clone(), ann.clone()]
    })
    .await;
    // Refiled: ann leaves "work", her posts leave its timeline.
    let b = file(&t, "reader", "ann", &["friends"]).await;
    assert_eq!(b["changed"], json!(true));
    eventually("ann's posts leave the list", || async {
        ids(&t.get(path).await.1["posts"]) == vec![ben.clone()]
    })
    .await;
    let (_, rel) = t.get("/users/reader/relationship/ann").await;
    assert_eq!(
        rel,
        json!({ "following": true, "followed_by": false, "lists": ["friends"],
                "reposts": true, "replies": false, "notify": false })
    );
    // A plain follow keeps the lists.
    let (_, b) = t
        .call(Method::PUT, "/users/reader/following/ann", None)
        .await;
    assert_eq!(b["lists"], json!(["friends"]));

    // Bad input.
    refused(
        &t,
        &[
            ("/users/reader/lists/nope/timeline", 404, "list_not_found"),
            ("/users/reader/lists/a.b/timeline", 400, "invalid_list_name"),
            ("/users/reader/following?list=nope", 404, "list_not_found"),
            ("/users/nobody/lists", 404, "user_not_found"),
            (
                "/users/reader/lists/work/timeline?limit=500",
                400,
                "invalid_limit",
            ),
        ],
    )
    .await;
    let nine: Vec<String> = (0..9).map(|i| format!("l{i}")).collect();
    let body = json!({ "lists": nine });
    let path = "/users/reader/following/cat";
    refused_write(&t, Method::PUT, path, body, "too_many_lists").await;
}

/// The post ids of a home page, newest first.
async fn home(t: &TestApp, user: &str) -> Vec<String> {
    let (s, b) = t.get(&format!("/users/{user}/timeline")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    ids(&b["posts"])
}

#[tokio::test]
async fn an_exclusive_list_keeps_its_accounts_out_of_home_over_rest_and_grpc() {
    let t = spawn_app().await;
    for u in ["reader", "ann", "ben"] {
        t.put_user(u).await;
    }
    file(&t, "reader", "ann", &["news"]).await;
    t.follow("reader", "ben").await;
    let ann = t.post("ann", "from ann").await;
    let ben = t.post("ben", "from ben").await;
    t.wait_idle().await;
    assert_eq!(home(&t, "reader").await, vec![ben.clone(), ann.clone()]);

    // Marked exclusive: ann's posts leave home, stored ones included; the
    // list keeps them.
    let path = "/users/reader/lists/news";
    let (s, b) = t
        .call(Method::PUT, path, Some(json!({ "exclusive": true })))
        .await;
    assert_eq!(
        (s, b),
        (
            StatusCode::OK,
            json!({ "list": "news", "exclusive": true, "changed": true })
        )
    );
    assert_eq!(home(&t, "reader").await, vec![ben.clone()]);
    let later = t.post("ann", "ann again").await;
    t.wait_idle().await;
    assert_eq!(home(&t, "reader").await, vec![ben.clone()], "nor new ones");
    let (_, list) = t.get("/users/reader/lists/news/timeline").await;
    assert_eq!(ids(&list["posts"]), vec![later.clone(), ann.clone()]);
    let (_, lists) = t.get("/users/reader/lists").await;
    assert_eq!(lists["lists"][0]["exclusive"], json!(true));
    let theirs: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/users/reader/lists", t.base))
        .bearer_auth(token_for("ben"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        theirs["lists"][0].get("exclusive"),
        None,
        "the reader's own setting"
    );

    // Refused: a list no one is filed under, a bad body, another's token.
    for (path, body, status, code) in [
        (
            "/users/reader/lists/none",
            json!({ "exclusive": true }),
            404,
            "list_not_found",
        ),
        (
            "/users/reader/lists/news",
            json!({ "exclusive": "yes" }),
            400,
            "invalid_body",
        ),
        (
            "/users/reader/lists/a.b",
            json!({ "exclusive": true }),
            400,
            "invalid_list_name",
        ),
    ] {
        let (s, b) = t.call(Method::PUT, path, Some(body)).await;
        assert_eq!(
            (s.as_u16(), b["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}"
        );
    }

    // Over gRPC: unmarked, ann is back in home.
    let (mut ingest, mut reads) = clients_as(&t, &token_for("reader")).await;
    let reply = ingest
        .set_list_exclusive(pb::ListExclusiveRequest {
            user: "reader".into(),
            list: "news".into(),
            exclusive: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!reply.exclusive && reply.changed);
    assert_eq!(home(&t, "reader").await, vec![later, ben, ann]);
    let lists = reads
        .list_lists(pb::GetUserRequest {
            id: "reader".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(lists.lists[0].exclusive, Some(false));
}

#[tokio::test]
async fn groups_hold_their_members_posts_while_they_are_members() {
    let t = spawn_app().await;
    for u in ["ann", "ben"] {
        t.put_user(u).await;
    }
    let early = t.post("ann", "before joining").await;
    let (s, b) = t.call(Method::PUT, "/groups/rust/members/ann", None).await;
    assert_eq!(
        (s, b),
        (StatusCode::OK, json!({ "member": true, "changed": true }))
    );
    let (_, b) = t.call(Method::PUT, "/groups/rust/members/ann", None).await;
    assert_eq!(b["changed"], json!(false), "joining again changes nothing");
    t.call(Method::PUT, "/groups/rust/members/ben", None).await;
    let from_ben = t.post("ben", "in the group").await;
    t.wait_idle().await;
    assert_eq!(
        t.get("/groups/rust").await.1,
        json!({ "name": "rust", "members": 2 })
    );
    assert_eq!(
        t.get("/groups/rust/members?limit=1").await.1["users"],
        json!(["ann"])
    );
    // Joining brought ann's earlier post; the timeline is stored after the
    // first read and fanout keeps it.
    assert_eq!(
        ids(&t.get("/groups/rust/timeline").await.1["posts"]),
        vec![from_ben.clone(), early.clone()]
    );
    let next = t.post("ann", "later").await;
    eventually("the group's timeline gets the new post", || async {
        ids(&t.get("/groups/rust/timeline").await.1["posts"])
            == vec![next.clone(), from_ben.clone(), early.clone()]
    })
    .await;
    // Leaving takes ann's posts away.
    let (_, b) = t
        .call(Method::DELETE, "/groups/rust/members/ann", None)
        .await;
    assert_eq!(b, json!({ "member": false, "changed": true }));
    eventually("ann's posts leave the group", || async {
        ids(&t.get("/groups/rust/timeline").await.1["posts"]) == vec![from_ben.clone()]
    })
    .await;
    // Deleting the post retracts it.
    t.delete(&format!("/posts/{from_ben}")).await;
    eventually("the deleted post leaves the group", || async {
        ids(&t.get("/groups/rust/timeline").await.1["posts"]).is_empty()
    })
    .await;
    refused(
        &t,
        &[
            ("/groups/nobody-here", 404, "group_not_found"),
            ("/groups/nobody-here/timeline", 404, "group_not_found"),
            ("/groups/a.b", 400, "invalid_group_name"),
        ],
    )
    .await;
    let (s, b) = t.call(Method::PUT, "/groups/rust/members/zz", None).await;
    assert_eq!(
        (s.as_u16(), &b["error"]["code"]),
        (404, &json!("user_not_found"))
    );
}

#[tokio::test]
async fn mentions_list_the_posts_that_name_a_user() {
    let t = spawn_app().await;
    for u in ["ann", "ben"] {
        t.put_user(u).await;
    }
    let (s, post) = t
        .call(
            Method::POST,
            "/users/ann/posts",
            Some(json!({ "message": "hi @ben and @ghost, mail me@ann.example" })),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(post["mentions"], json!(["ben"]), "@ghost is no user");
    let id = post["id"].as_str().unwrap().to_owned();
    let second = t.post("ann", "@ben again").await;
    let (_, page) = t.get("/users/ben/mentions?limit=1").await;
    assert_eq!(ids(&page["posts"]), vec![second.clone()]);
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let (_, page) = t
        .get(&format!("/users/ben/mentions?limit=1&before={cursor}"))
        .await;
    assert_eq!(ids(&page["posts"]), vec![id.clone()]);
    assert_eq!(page["posts"][0]["mentions"], json!(["ben"]));
    assert!(t.get("/users/ann/mentions").await.1["posts"]
        .as_array()
        .unwrap()
        .is_empty());
    t.delete(&format!("/posts/{second}")).await;
    assert_eq!(
        ids(&t.get("/users/ben/mentions").await.1["posts"]),
        vec![id]
    );
    let many: String = (0..11).map(|i| format!("@u{i} ")).collect();
    let body = json!({ "message": many });
    refused_write(
        &t,
        Method::POST,
        "/users/ann/posts",
        body,
        "too_many_mentions",
    )
    .await;
}

#[tokio::test]
async fn grpc_serves_lists_groups_and_mentions() {
    let t = spawn_app().await;
    let (mut ingest, mut reads) = clients_as(&t, ADMIN_KEY).await;
    for id in ["ann", "ben"] {
        ingest
            .put_user(pb::PutUserRequest {
                id: id.into(),
                profile_json: String::new(),
            })
            .await
            .unwrap();
    }
    let reply = ingest
        .follow(pb::FollowRequest {
            user: "ben".into(),
            target: "ann".into(),
            lists: vec!["work".into()],
            set_lists: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (reply.following, reply.lists),
        (true, vec!["work".to_owned()])
    );
    let joined = ingest
        .join_group(pb::MembershipRequest {
            group: "club".into(),
            user: "ann".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(joined.member && joined.changed);
    let post = ingest
        .create_post(pb::CreatePostRequest {
            author: "ann".into(),
            message: "hello @ben".into(),
            data_json: String::new(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(post.mentions, vec!["ben".to_owned()]);
    t.wait_idle().await;
    let lists = reads
        .list_lists(pb::GetUserRequest {
            id: "ben".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (lists.lists[0].name.as_str(), lists.lists[0].count),
        ("work", 1)
    );
    let members = reads
        .list_following(pb::ListUsersRequest {
            user: "ben".into(),
            list: "work".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(members.users, vec!["ann".to_owned()]);
    let ids = |l: pb::PostList| l.posts.into_iter().map(|p| p.id).collect::<Vec<_>>();
    let list = reads
        .get_list_timeline(pb::ListTimelineRequest {
            user: "ben".into(),
            list: "work".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ids(list), vec![post.id.clone()]);
    let group = reads
        .get_group_timeline(pb::GroupTimelineRequest {
            group: "club".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ids(group), vec![post.id.clone()]);
    let g = reads
        .get_group(pb::GroupRef {
            group: "club".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((g.name.as_str(), g.members), ("club", 1));
    let mentions = reads
        .list_mentions(pb::ListPostsRequest {
            user: "ben".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ids(mentions), vec![post.id.clone()]);
    let rel = reads
        .get_relationship(pb::RelationshipRequest {
            user: "ben".into(),
            other: "ann".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rel.lists, vec!["work".to_owned()]);
    let err = reads
        .get_list_timeline(pb::ListTimelineRequest {
            user: "ben".into(),
            list: "nope".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound);
    assert!(
        err.message().starts_with("list_not_found"),
        "{}",
        err.message()
    );
    let err = reads
        .get_group(pb::GroupRef {
            group: "a b".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
}
