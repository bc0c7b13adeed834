//! Who may call what, end to end: every REST route and gRPC method against
//! every kind of credential (a table: route × credential → status), bad
//! credentials, key and secret rotation without a restart, rate limits per
//! credential, and CORS.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use std::time::Duration;
use tonic::Code;

/// The credentials of the table's columns, in order.
fn columns() -> Vec<(&'static str, String)> {
    vec![
        ("none", String::new()),
        ("admin key", ADMIN_KEY.into()),
        ("write key", WRITE_KEY.into()),
        ("read key", READ_KEY.into()),
        ("admin-only key", OPS_KEY.into()),
        ("alice's token", token_for("alice")),
        ("bob's token", token_for("bob")),
    ]
}

/// REST: method, path as called, path as documented, whether it takes a
/// body, and the expected status per column. `{post}` is a fresh post by
/// alice and `{victim}` a fresh user, made before each call, so that a call
/// that succeeds changes nothing the next one needs.
#[rustfmt::skip]
const REST_TABLE: &[(&str, &str, &str, bool, [u16; 7])] = &[
    //                                                                                    none admin write read ops alice bob
    ("PUT", "/users/alice", "/users/{id}", false,                                         [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/{victim}", "/users/{id}", false,                                   [401, 204, 403, 403, 204, 403, 403]),
    ("PUT", "/users/alice/following/bob", "/users/{id}/following/{target}", false,        [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/alice/following/carol", "/users/{id}/following/{target}", false,   [401, 200, 200, 403, 403, 200, 403]),
    ("POST", "/users/alice/following", "/users/{id}/following", true,                     [401, 200, 200, 403, 403, 200, 403]),
    ("PUT", "/users/alice/mutes/{victim}", "/users/{id}/mutes/{target}", false,           [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/alice/mutes/{victim}", "/users/{id}/mutes/{target}", false,        [401, 200, 200, 403, 403, 200, 403]),
    ("PUT", "/users/alice/blocks/{victim}", "/users/{id}/blocks/{target}", false,         [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/alice/blocks/{victim}", "/users/{id}/blocks/{target}", false,      [401, 200, 200, 403, 403, 200, 403]),
    ("GET", "/users/alice/mutes", "/users/{id}/mutes", false,                             [401, 200, 403, 200, 403, 200, 403]),
    ("GET", "/users/alice/blocks", "/users/{id}/blocks", false,                           [401, 200, 403, 200, 403, 200, 403]),
    ("POST", "/users/alice/posts", "/users/{id}/posts", true,                             [401, 201, 201, 403, 403, 201, 403]),
    ("DELETE", "/posts/{post}", "/posts/{id}", false,                                     [401, 204, 204, 403, 204, 204, 403]),
    ("GET", "/users/alice", "/users/{id}", false,                                         [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/followers", "/users/{id}/followers", false,                     [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/following", "/users/{id}/following", false,                     [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/follower_count", "/users/{id}/follower_count", false,           [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/following_count", "/users/{id}/following_count", false,         [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/posts", "/users/{id}/posts", false,                             [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/posts/{post}", "/posts/{id}", false,                                        [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/posts/{post}/likes", "/posts/{id}/likes", false,                            [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/posts/{post}/thread", "/posts/{id}/thread", false,                          [401, 200, 403, 200, 403, 200, 200]),
    ("PUT", "/users/alice/likes/{post}", "/users/{id}/likes/{post_id}", false,            [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/alice/likes/{post}", "/users/{id}/likes/{post_id}", false,         [401, 200, 200, 403, 403, 200, 403]),
    ("PUT", "/users/bob/reposts/{post}", "/users/{id}/reposts/{post_id}", false,          [401, 200, 200, 403, 403, 403, 200]),
    ("DELETE", "/users/bob/reposts/{post}", "/users/{id}/reposts/{post_id}", false,       [401, 200, 200, 403, 403, 403, 200]),
    ("PUT", "/users/alice/markers/home", "/users/{id}/markers/{timeline}", true,          [401, 200, 200, 403, 403, 200, 403]),
    ("GET", "/users/alice/markers", "/users/{id}/markers", false,                         [401, 200, 403, 200, 403, 200, 403]),
    ("PUT", "/users/alice/muted-threads/{post}", "/users/{id}/muted-threads/{post_id}", false, [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/alice/muted-threads/{post}", "/users/{id}/muted-threads/{post_id}", false, [401, 200, 200, 403, 403, 200, 403]),
    ("GET", "/users/alice/muted-threads", "/users/{id}/muted-threads", false,             [401, 200, 403, 200, 403, 200, 403]),
    ("POST", "/users/alice/filters", "/users/{id}/filters", true,                         [401, 201, 201, 403, 403, 201, 403]),
    ("GET", "/users/alice/filters", "/users/{id}/filters", false,                         [401, 200, 403, 200, 403, 200, 403]),
    ("GET", "/users/alice/filters/1", "/users/{id}/filters/{filter_id}", false,           [401, 200, 403, 200, 403, 200, 403]),
    ("PATCH", "/users/alice/filters/1", "/users/{id}/filters/{filter_id}", true,          [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/users/alice/filters/2", "/users/{id}/filters/{filter_id}", false,        [401, 200, 200, 403, 403, 200, 403]),
    ("GET", "/users/alice/notifications", "/users/{id}/notifications", false,             [401, 200, 403, 200, 403, 200, 403]),
    ("GET", "/users/alice/notifications/unread", "/users/{id}/notifications/unread", false, [401, 200, 403, 200, 403, 200, 403]),
    ("GET", "/users/alice/timeline", "/users/{id}/timeline", false,                       [401, 200, 403, 200, 403, 200, 403]),
    ("GET", "/users/alice/suggestions", "/users/{id}/suggestions", false,                 [401, 200, 403, 200, 403, 200, 403]),
    ("GET", "/users/alice/relationship/bob", "/users/{id}/relationship/{other}", false,   [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/posts?authors=alice,bob", "/posts", false,                                  [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/lists", "/users/{id}/lists", false,                             [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/users/alice/lists/work/timeline", "/users/{id}/lists/{list}/timeline", false, [401, 200, 403, 200, 403, 200, 403]),
    ("PUT", "/users/alice/lists/work", "/users/{id}/lists/{list}", true,                 [401, 200, 200, 403, 403, 200, 403]),
    ("GET", "/users/alice/mentions", "/users/{id}/mentions", false,                       [401, 200, 403, 200, 403, 200, 403]),
    ("PUT", "/groups/club/members/alice", "/groups/{group}/members/{id}", false,          [401, 200, 200, 403, 403, 200, 403]),
    ("DELETE", "/groups/other/members/alice", "/groups/{group}/members/{id}", false,      [401, 200, 200, 403, 403, 200, 403]),
    ("GET", "/groups/club", "/groups/{group}", false,                                     [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/groups/club/members", "/groups/{group}/members", false,                     [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/groups/club/timeline", "/groups/{group}/timeline", false,                   [401, 200, 403, 200, 403, 200, 200]),
    ("GET", "/metrics", "/metrics", false,                                                [401, 200, 403, 403, 200, 403, 403]),
    ("GET", "/status", "/status", false,                                                  [401, 200, 403, 403, 200, 403, 403]),
    ("GET", "/", "/", false,                                                              [401, 200, 403, 403, 200, 403, 403]),
    ("GET", "/healthz", "/healthz", false,                                                [200, 200, 200, 200, 200, 200, 200]),
    ("GET", "/readyz", "/readyz", false,                                                  [200, 200, 200, 200, 200, 200, 200]),
    ("GET", "/openapi.json", "/openapi.json", false,                                      [200, 200, 200, 200, 200, 200, 200]),
];

async fn network(t: &TestApp) {
    for u in ["alice", "bob", "carol"] {
        t.put_user(u).await;
    }
    // alice follows carol, and bob filed under her list "work" (the table
    // follows bob again, keeping the list, and unfollows carol); she is in
    // "club".
    t.follow("alice", "carol").await;
    let (s, b) = t
        .call(
            Method::PUT,
            "/users/alice/following/bob",
            Some(json!({ "lists": ["work"] })),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = t
        .call(Method::PUT, "/groups/club/members/alice", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

/// A fresh post by alice and a fresh user, made with the admin key.
async fn fresh(t: &TestApp, n: usize) -> (String, String) {
    let victim = format!("victim{n}");
    t.put_user(&victim).await;
    (t.post("alice", "fresh").await, victim)
}

#[tokio::test]
async fn every_rest_route_answers_each_credential_as_the_table_says() {
    let t = spawn_app().await;
    network(&t).await;
    let doc: Value = t.get("/openapi.json").await.1;
    let mut n = 0;
    for (method, template, documented, body, expected) in REST_TABLE {
        for ((who, credential), want) in columns().iter().zip(expected) {
            n += 1;
            let (post, victim) = fresh(&t, n).await;
            let path = template
                .replace("{post}", &post)
                .replace("{victim}", &victim);
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let mut req =
                reqwest::Client::new().request(method.clone(), format!("{}{path}", t.base));
            if !credential.is_empty() {
                req = req.bearer_auth(credential);
            }
            if *body && template.ends_with("/following") {
                req = req.json(&json!({ "edges": [{ "target": "bob" }] }));
            } else if *body && template.contains("/lists/") {
                req = req.json(&json!({ "exclusive": true }));
            } else if *body && template.contains("/filters") {
                req = req.json(&json!({ "phrases": [{ "text": "x" }] }));
            } else if *body && template.contains("/markers/") {
                req = req.json(&json!({ "last_read_id": post }));
            } else if *body {
                req = req.json(&json!({ "message": "hello" }));
            }
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap();
            assert_eq!(status, *want, "{method} {template} with {who}: {text}");
            if status == 401 || status == 403 {
                let v: Value = serde_json::from_str(&text).unwrap();
                let code = v["error"]["code"].as_str().unwrap_or_default();
                assert!(!code.is_empty(), "{method} {template} with {who}: {text}");
            }
        }
        // The contract declares who may call each route.
        let op = &doc["paths"][documented][method.to_lowercase()];
        let open = expected[0] / 100 == 2;
        assert_eq!(
            op["security"].is_array(),
            !open,
            "{method} {template}: the document's security does not match who may call it"
        );
        if !open {
            for status in ["401", "403", "429"] {
                assert!(
                    op["responses"][status].is_object(),
                    "{method} {template} documents no {status}"
                );
            }
        }
    }
}

#[tokio::test]
async fn refusals_name_the_problem() {
    let t = spawn_app().await;
    network(&t).await;
    let expired = {
        // Minted by hand with an expiry an hour ago.
        use std::time::{SystemTime, UNIX_EPOCH};
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        hs256(&json!({ "sub": "alice", "exp": now - 3600 }))
    };
    let cases = [
        ("Bearer slk_0000", "invalid_api_key"),
        ("Bearer not-a-token", "invalid_token"),
        ("Bearer a.b.c", "invalid_token"),
        (&*format!("Bearer {expired}"), "expired_token"),
        ("Token abc", "invalid_authorization"),
        ("Bearer", "invalid_authorization"),
    ];
    for (header, code) in cases {
        let resp = reqwest::Client::new()
            .get(format!("{}/users/alice", t.base))
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{header}");
        assert!(resp.headers().contains_key("www-authenticate"), "{header}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], code, "{header}: {v}");
        assert!(v["error"]["request_id"].is_string(), "{v}");
    }
    // Signed with a secret the server does not have.
    let forged = socialite_api::auth::tokens::mint(
        b"another-secret-another-secret-another",
        "alice",
        Duration::from_secs(60),
    )
    .unwrap();
    let (s, v) = as_credential(&t, &forged, Method::GET, "/users/alice/timeline").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (401, Some("invalid_token"))
    );
    // The status page asks a browser for credentials (Basic; the password
    // is the key), and takes them.
    let resp = reqwest::Client::new()
        .get(format!("{}/status", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let challenge = resp.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("Basic"), "{challenge}");
    let resp = reqwest::Client::new()
        .get(format!("{}/status", t.base))
        .basic_auth("operator", Some(OPS_KEY))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // Without a credential, a post that does not exist is not revealed.
    let resp = reqwest::Client::new()
        .delete(format!("{}/posts/00000000000000ff", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // A token acting for another user is told why.
    let (s, v) = as_credential(&t, &token_for("bob"), Method::POST, "/users/alice/posts").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("not_your_account"))
    );
    let (s, v) = as_credential(&t, READ_KEY, Method::POST, "/users/alice/posts").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("missing_scope"))
    );
}

async fn as_credential(t: &TestApp, credential: &str, method: Method, path: &str) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .request(method, format!("{}{path}", t.base))
        .bearer_auth(credential)
        .json(&json!({ "message": "hi" }))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_token_from_a_backend_acts_as_its_user_only() {
    let t = spawn_app().await;
    network(&t).await;
    // A token made the way a product's backend makes one: HS256 over
    // {"sub","iat","exp"} with the shared secret.
    let iat = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = hs256(&json!({ "sub": "alice", "iat": iat, "exp": iat + 600 }));
    let (s, post) = as_credential(&t, &token, Method::POST, "/users/alice/posts").await;
    assert_eq!(s, 201, "{post}");
    let id = post["id"].as_str().unwrap().to_owned();
    // bob cannot delete it; alice can.
    let (s, _) = as_credential(
        &t,
        &token_for("bob"),
        Method::DELETE,
        &format!("/posts/{id}"),
    )
    .await;
    assert_eq!(s, 403);
    let (s, _) = as_credential(&t, &token, Method::DELETE, &format!("/posts/{id}")).await;
    assert_eq!(s, 204);
}

#[tokio::test]
async fn user_tokens_read_only_their_own_timelines_when_public_reads_are_off() {
    let t = spawn_app_configured(|c| c.auth.public_reads = false).await;
    network(&t).await;
    let alice = token_for("alice");
    let (s, v) = as_credential(&t, &alice, Method::GET, "/users/bob").await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (403, Some("public_reads_off"))
    );
    // Her own timelines stay hers to read: home, lists and mentions.
    for own in [
        "/users/alice/timeline",
        "/users/alice/lists/work/timeline",
        "/users/alice/mentions",
    ] {
        let (s, v) = as_credential(&t, &alice, Method::GET, own).await;
        assert_eq!(s, 200, "{own}: {v}");
    }
}

/// gRPC: method, and the expected code per column.
#[tokio::test]
async fn every_grpc_method_answers_each_credential_as_the_table_says() {
    let t = spawn_app().await;
    network(&t).await;
    use Code::{Ok as Y, PermissionDenied as F, Unauthenticated as U};
    let table: [(&str, [Code; 7]); 51] = [
        //                   none admin write read ops alice bob
        ("PutUser", [U, Y, Y, F, F, Y, F]),
        ("DeleteUser", [U, Y, F, F, Y, F, F]),
        ("Follow", [U, Y, Y, F, F, Y, F]),
        ("Unfollow", [U, Y, Y, F, F, Y, F]),
        ("ChangeFollows", [U, Y, Y, F, F, Y, F]),
        ("CreatePost", [U, Y, Y, F, F, Y, F]),
        ("DeletePost", [U, Y, Y, F, Y, Y, F]),
        ("GetUser", [U, Y, F, Y, F, Y, Y]),
        ("ListFollowers", [U, Y, F, Y, F, Y, Y]),
        ("ListFollowing", [U, Y, F, Y, F, Y, Y]),
        ("FollowerCount", [U, Y, F, Y, F, Y, Y]),
        ("FollowingCount", [U, Y, F, Y, F, Y, Y]),
        ("GetPost", [U, Y, F, Y, F, Y, Y]),
        ("ListPosts", [U, Y, F, Y, F, Y, Y]),
        ("GetTimeline", [U, Y, F, Y, F, Y, F]),
        ("GetRankedTimeline", [U, Y, F, Y, F, Y, F]),
        ("ListFeedPreferences", [U, Y, F, Y, F, Y, F]),
        ("SetFeedPreference", [U, Y, Y, F, F, Y, F]),
        ("ShowLess", [U, Y, Y, F, F, Y, F]),
        ("ListSuggestions", [U, Y, F, Y, F, Y, F]),
        ("GetRelationship", [U, Y, F, Y, F, Y, Y]),
        ("JoinGroup", [U, Y, Y, F, F, Y, F]),
        ("LeaveGroup", [U, Y, Y, F, F, Y, F]),
        ("GetGroup", [U, Y, F, Y, F, Y, Y]),
        ("ListGroupMembers", [U, Y, F, Y, F, Y, Y]),
        ("GetGroupTimeline", [U, Y, F, Y, F, Y, Y]),
        ("ListLists", [U, Y, F, Y, F, Y, Y]),
        ("GetListTimeline", [U, Y, F, Y, F, Y, F]),
        ("ListMentions", [U, Y, F, Y, F, Y, F]),
        ("ListPostsByAuthors", [U, Y, F, Y, F, Y, Y]),
        ("Mute", [U, Y, Y, F, F, Y, F]),
        ("Unmute", [U, Y, Y, F, F, Y, F]),
        ("Block", [U, Y, Y, F, F, Y, F]),
        ("Unblock", [U, Y, Y, F, F, Y, F]),
        ("ListMutes", [U, Y, F, Y, F, Y, F]),
        ("ListBlocks", [U, Y, F, Y, F, Y, F]),
        ("Like", [U, Y, Y, F, F, Y, F]),
        ("Unlike", [U, Y, Y, F, F, Y, F]),
        ("ListLikers", [U, Y, F, Y, F, Y, Y]),
        ("GetThread", [U, Y, F, Y, F, Y, Y]),
        ("ListNotifications", [U, Y, F, Y, F, Y, F]),
        ("UnreadNotifications", [U, Y, F, Y, F, Y, F]),
        ("Repost", [U, Y, Y, F, F, F, Y]),
        ("Unrepost", [U, Y, Y, F, F, F, Y]),
        ("SetMarker", [U, Y, Y, F, F, Y, F]),
        ("ListMarkers", [U, Y, F, Y, F, Y, F]),
        ("CreateFilter", [U, Y, Y, F, F, Y, F]),
        ("ListFilters", [U, Y, F, Y, F, Y, F]),
        ("MuteThread", [U, Y, Y, F, F, Y, F]),
        ("SetListExclusive", [U, Y, Y, F, F, Y, F]),
        ("ListMutedThreads", [U, Y, F, Y, F, Y, F]),
    ];
    let mut n = 0;
    for (method, expected) in table {
        for ((who, credential), want) in columns().iter().zip(expected) {
            n += 1;
            let (post, victim) = fresh(&t, n).await;
            let (mut ingest, mut reads) = clients_as(&t, credential).await;
            let user = || pb::UserRef { id: "alice".into() };
            let named = || pb::GetUserRequest {
                id: "alice".into(),
                ..Default::default()
            };
            let edge = |target: &str| pb::FollowRequest {
                user: "alice".into(),
                target: target.into(),
                ..Default::default()
            };
            let list = || pb::ListUsersRequest {
                user: "alice".into(),
                limit: 10,
                cursor: String::new(),
                ..Default::default()
            };
            let membership = |group: &str| pb::MembershipRequest {
                group: group.into(),
                user: "alice".into(),
            };
            let relation = |target: &str| pb::RelationRequest {
                user: "alice".into(),
                target: target.into(),
                ..Default::default()
            };
            let club = || pb::GroupRef {
                group: "club".into(),
            };
            let posts = || pb::ListPostsRequest {
                user: "alice".into(),
                limit: 10,
                before: String::new(),
                ..Default::default()
            };
            let code = |r: Result<(), tonic::Status>| r.err().map_or(Code::Ok, |s| s.code());
            let got = match method {
                "PutUser" => code(
                    ingest
                        .put_user(pb::PutUserRequest {
                            id: "alice".into(),
                            profile_json: String::new(),
                        })
                        .await
                        .map(drop),
                ),
                "DeleteUser" => code(
                    ingest
                        .delete_user(pb::UserRef { id: victim })
                        .await
                        .map(drop),
                ),
                "Follow" => code(ingest.follow(edge("bob")).await.map(drop)),
                "Unfollow" => code(ingest.unfollow(edge("carol")).await.map(drop)),
                "ChangeFollows" => code(
                    ingest
                        .change_follows(pb::ChangeFollowsRequest {
                            user: "alice".into(),
                            edges: vec![pb::EdgeChange {
                                target: "bob".into(),
                                ..Default::default()
                            }],
                        })
                        .await
                        .map(drop),
                ),
                "CreatePost" => code(
                    ingest
                        .create_post(pb::CreatePostRequest {
                            author: "alice".into(),
                            message: "hi".into(),
                            data_json: String::new(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "DeletePost" => code(ingest.delete_post(pb::PostRef { id: post }).await.map(drop)),
                "GetUser" => code(reads.get_user(named()).await.map(drop)),
                "ListFollowers" => code(reads.list_followers(list()).await.map(drop)),
                "ListFollowing" => code(reads.list_following(list()).await.map(drop)),
                "FollowerCount" => code(reads.follower_count(named()).await.map(drop)),
                "FollowingCount" => code(reads.following_count(named()).await.map(drop)),
                "GetPost" => code(
                    reads
                        .get_post(pb::GetPostRequest {
                            id: post,
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListPosts" => code(reads.list_posts(posts()).await.map(drop)),
                "GetTimeline" => code(reads.get_timeline(posts()).await.map(drop)),
                "ListFeedPreferences" => code(
                    reads
                        .list_feed_preferences(pb::UserRef { id: "alice".into() })
                        .await
                        .map(drop),
                ),
                "ShowLess" => code(
                    ingest
                        .show_less(pb::ShowLessRequest {
                            user: "alice".into(),
                            post_id: post.clone(),
                            on: true,
                        })
                        .await
                        .map(drop),
                ),
                "SetFeedPreference" => code(
                    ingest
                        .set_feed_preference(pb::FeedPreference {
                            user: "alice".into(),
                            author: "bob".into(),
                            priority: 1,
                        })
                        .await
                        .map(drop),
                ),
                "GetRankedTimeline" => code(
                    reads
                        .get_ranked_timeline(pb::RankedTimelineRequest {
                            user: "alice".into(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListSuggestions" => code(
                    reads
                        .list_suggestions(pb::ListSuggestionsRequest {
                            user: "alice".into(),
                            limit: 5,
                        })
                        .await
                        .map(drop),
                ),
                "GetRelationship" => code(
                    reads
                        .get_relationship(pb::RelationshipRequest {
                            user: "alice".into(),
                            other: "bob".into(),
                        })
                        .await
                        .map(drop),
                ),
                "ListPostsByAuthors" => code(
                    reads
                        .list_posts_by_authors(pb::ListPostsByAuthorsRequest {
                            authors: vec!["alice".into(), "bob".into()],
                            limit: 5,
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "Mute" => code(ingest.mute(relation(&victim)).await.map(drop)),
                "Unmute" => code(ingest.unmute(relation(&victim)).await.map(drop)),
                "Block" => code(ingest.block(relation(&victim)).await.map(drop)),
                "Unblock" => code(ingest.unblock(relation(&victim)).await.map(drop)),
                "ListMutes" => code(reads.list_mutes(list()).await.map(drop)),
                "ListBlocks" => code(reads.list_blocks(list()).await.map(drop)),
                "Like" | "Unlike" => {
                    let like = pb::LikeRequest {
                        user: "alice".into(),
                        post_id: post.clone(),
                    };
                    let done = match method {
                        "Like" => ingest.like(like).await,
                        _ => ingest.unlike(like).await,
                    };
                    code(done.map(drop))
                }
                "Repost" | "Unrepost" => {
                    // bob's repost of alice's post: bob's to make.
                    let repost = pb::RepostRequest {
                        user: "bob".into(),
                        post_id: post.clone(),
                    };
                    let done = match method {
                        "Repost" => ingest.repost(repost).await,
                        _ => ingest.unrepost(repost).await,
                    };
                    code(done.map(drop))
                }
                "SetMarker" => code(
                    ingest
                        .set_marker(pb::SetMarkerRequest {
                            user: "alice".into(),
                            timeline: "home".into(),
                            last_read_id: post.clone(),
                            force: false,
                        })
                        .await
                        .map(drop),
                ),
                "ListMarkers" => code(reads.list_markers(user()).await.map(drop)),
                "CreateFilter" => code(
                    ingest
                        .create_filter(pb::FilterRequest {
                            user: "alice".into(),
                            phrases: Some(pb::FilterPhrases {
                                phrases: vec![pb::FilterPhrase {
                                    text: "x".into(),
                                    whole_word: true,
                                }],
                            }),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListFilters" => code(reads.list_filters(user()).await.map(drop)),
                "SetListExclusive" => code(
                    ingest
                        .set_list_exclusive(pb::ListExclusiveRequest {
                            user: "alice".into(),
                            list: "work".into(),
                            exclusive: true,
                        })
                        .await
                        .map(drop),
                ),
                "MuteThread" => code(
                    ingest
                        .mute_thread(pb::ThreadMuteRequest {
                            user: "alice".into(),
                            post_id: post.clone(),
                        })
                        .await
                        .map(drop),
                ),
                "ListMutedThreads" => code(
                    reads
                        .list_muted_threads(pb::ListMutedThreadsRequest {
                            user: "alice".into(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListNotifications" => code(reads.list_notifications(posts()).await.map(drop)),
                "UnreadNotifications" => code(reads.unread_notifications(user()).await.map(drop)),
                "GetThread" => code(
                    reads
                        .get_thread(pb::ThreadRequest {
                            post_id: post.clone(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListLikers" => code(
                    reads
                        .list_likers(pb::ListLikersRequest {
                            post_id: post.clone(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "JoinGroup" => code(ingest.join_group(membership("club")).await.map(drop)),
                "LeaveGroup" => code(ingest.leave_group(membership("other")).await.map(drop)),
                "GetGroup" => code(reads.get_group(club()).await.map(drop)),
                "ListGroupMembers" => code(
                    reads
                        .list_group_members(pb::ListGroupMembersRequest {
                            group: "club".into(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "GetGroupTimeline" => code(
                    reads
                        .get_group_timeline(pb::GroupTimelineRequest {
                            group: "club".into(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListLists" => code(reads.list_lists(named()).await.map(drop)),
                "GetListTimeline" => code(
                    reads
                        .get_list_timeline(pb::ListTimelineRequest {
                            user: "alice".into(),
                            list: "work".into(),
                            ..Default::default()
                        })
                        .await
                        .map(drop),
                ),
                "ListMentions" => code(reads.list_mentions(posts()).await.map(drop)),
                other => unreachable!("{other}"),
            };
            assert_eq!(got, want, "{method} with {who}");
        }
    }
}

#[tokio::test]
async fn keys_and_secrets_rotate_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, secrets) = (
        dir.path().join("api-keys"),
        dir.path().join("token-secrets"),
    );
    let line = |name: &str, key: &str| {
        socialite_api::auth::keys::StoredKey::line(
            name,
            socialite_domain::accounts::access::Scopes::ALL,
            key,
        )
    };
    let (old_key, new_key) = (
        socialite_api::auth::keys::new_key().unwrap(),
        socialite_api::auth::keys::new_key().unwrap(),
    );
    let (old_secret, new_secret) = ("o".repeat(40), "n".repeat(40));
    std::fs::write(&keys, line("old", &old_key)).unwrap();
    std::fs::write(&secrets, &old_secret).unwrap();
    // Files named by the settings, read by the app: a static so the
    // tweak (a plain function) can find them.
    static FILES: std::sync::OnceLock<(std::path::PathBuf, std::path::PathBuf)> =
        std::sync::OnceLock::new();
    FILES.set((keys.clone(), secrets.clone())).unwrap();
    let t = spawn_app_configured(|c| {
        let (k, s) = FILES.get().unwrap();
        c.auth.api_keys.file = Some(k.clone());
        c.auth.token_secrets.file = Some(s.clone());
    })
    .await;
    let status = |credential: String| {
        let url = format!("{}/users/nobody", t.base);
        async move {
            let resp = reqwest::Client::new()
                .get(url)
                .bearer_auth(credential)
                .send()
                .await;
            resp.unwrap().status().as_u16()
        }
    };
    let token = |secret: &str| {
        socialite_api::auth::tokens::mint(secret.as_bytes(), "nobody", Duration::from_secs(60))
            .unwrap()
    };
    assert_eq!(status(old_key.clone()).await, 404, "the old key works");
    assert_eq!(status(new_key.clone()).await, 401);
    assert_eq!(status(token(&old_secret)).await, 404);
    // Both valid at once, then the old one removed.
    write_replacing(
        &keys,
        &format!("{}\n{}\n", line("old", &old_key), line("new", &new_key)),
    );
    write_replacing(&secrets, &format!("{new_secret}\n{old_secret}\n"));
    eventually("the new key to be accepted", || async {
        status(new_key.clone()).await == 404
    })
    .await;
    assert_eq!(
        status(old_key.clone()).await,
        404,
        "both keys are valid during the change"
    );
    eventually("the new secret to be accepted", || async {
        status(token(&new_secret)).await == 404
    })
    .await;
    write_replacing(&keys, &line("new", &new_key));
    write_replacing(&secrets, &new_secret);
    eventually("the old key to be refused", || async {
        status(old_key.clone()).await == 401
    })
    .await;
    eventually("the old secret to be refused", || async {
        status(token(&old_secret)).await == 401
    })
    .await;
    assert_eq!(status(new_key.clone()).await, 404);
    // A malformed line is skipped: the well-formed lines stay in force,
    // and a key whose line was removed does not, even beside a typo.
    let both = format!("{}\n{}", line("new", &new_key), line("old", &old_key));
    write_replacing(&keys, &both);
    eventually("the old key back", || async {
        status(old_key.clone()).await == 404
    })
    .await;
    write_replacing(&keys, &format!("not a key line\n{}", line("new", &new_key)));
    eventually(
        "the removed key to be refused beside a malformed line",
        || async { status(old_key.clone()).await == 401 },
    )
    .await;
    assert_eq!(status(new_key.clone()).await, 404);
}

/// Replaces a file's content with a new modification time, as an editor or
/// a deployment does.
fn write_replacing(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(1);
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(later)
        .unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[tokio::test]
async fn each_credential_is_rate_limited_on_its_own() {
    let t = spawn_app_configured(|c| c.auth.rates.per_user = 5).await;
    network(&t).await;
    let alice = client_with(&token_for("alice"));
    let mut limited = None;
    for _ in 0..40 {
        let resp = alice
            .get(format!("{}/users/alice/timeline", t.base))
            .send()
            .await
            .unwrap();
        if resp.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(resp);
            break;
        }
    }
    let resp = limited.expect("a user token over its rate is refused");
    // gRPC shares the bucket: RESOURCE_EXHAUSTED with retry-after.
    let (_, mut reads) = clients_as(&t, &token_for("alice")).await;
    let err = reads
        .get_user(pb::GetUserRequest {
            id: "alice".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.metadata().get("retry-after").is_some());
    let retry: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], "rate_limited");
    // Another user, and the server key, are not slowed by alice.
    let (s, _) = as_credential(&t, &token_for("bob"), Method::GET, "/users/bob/timeline").await;
    assert_eq!(s, 200);
    assert_eq!(t.get("/users/alice").await.0, StatusCode::OK);
}

#[tokio::test]
async fn cors_is_off_unless_origins_are_configured() {
    let preflight = |t: &TestApp, origin: &str| {
        reqwest::Client::new()
            .request(Method::OPTIONS, format!("{}/users/alice/posts", t.base))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,content-type",
            )
            .send()
    };
    let t = spawn_app().await;
    let resp = preflight(&t, "https://app.example").await.unwrap();
    assert!(resp.headers().get("access-control-allow-origin").is_none());

    let t = spawn_app_configured(|c| c.cors_origins = vec!["https://app.example".into()]).await;
    let resp = preflight(&t, "https://app.example").await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "https://app.example");
    let allowed = h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    assert!(allowed.contains("authorization"), "{allowed}");
    let resp = preflight(&t, "https://evil.example").await.unwrap();
    assert!(resp.headers().get("access-control-allow-origin").is_none());
    // A real request from the allowed origin may read the request id.
    let resp = t
        .http
        .get(format!("{}/healthz", t.base))
        .header("origin", "https://app.example")
        .send()
        .await
        .unwrap();
    let exposed = resp.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    assert!(exposed.contains("x-request-id"), "{exposed}");
}

#[tokio::test]
async fn operators_endpoints_on_their_own_address_need_no_credential() {
    let t = spawn_app_configured(|c| c.ops_addr = Some("127.0.0.1:0".parse().unwrap())).await;
    let ops = t.ops.clone().unwrap();
    let plain = reqwest::Client::new();
    for path in ["/metrics", "/status", "/healthz"] {
        let resp = plain.get(format!("{ops}{path}")).send().await.unwrap();
        assert_eq!(
            resp.status(),
            StatusCode::OK,
            "{path} on the operators' address"
        );
    }
    // And they are no longer on the API's address.
    assert_eq!(t.get("/metrics").await.0, StatusCode::NOT_FOUND);
    let doc: Value = t.get("/openapi.json").await.1;
    assert!(doc["paths"]["/metrics"].is_null());
}
