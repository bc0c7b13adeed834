//! The gRPC API end to end, through the generated clients.

mod common;

use common::*;
use socialite_bench::target::Authed;
use socialite_proto::v1 as pb;
use socialite_proto::v1::ingest_client::IngestClient;
use socialite_proto::v1::reads_client::ReadsClient;
use tonic::transport::Channel;
use tonic::Code;

async fn clients(t: &TestApp) -> (IngestClient<Authed>, ReadsClient<Authed>) {
    clients_as(t, ADMIN_KEY).await
}

fn user(id: &str) -> pb::UserRef {
    pb::UserRef { id: id.into() }
}

fn named(id: &str) -> pb::GetUserRequest {
    pb::GetUserRequest {
        id: id.into(),
        ..Default::default()
    }
}

fn edge(user: &str, target: &str) -> pb::FollowRequest {
    pb::FollowRequest {
        user: user.into(),
        target: target.into(),
        ..Default::default()
    }
}

fn timeline(user: &str, limit: u32, before: &str) -> pb::ListPostsRequest {
    pb::ListPostsRequest {
        user: user.into(),
        limit,
        before: before.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn the_whole_api_over_grpc() {
    let t = spawn_app_with(3).await;
    let (mut w, mut r) = clients(&t).await;
    let alice = w
        .put_user(pb::PutUserRequest {
            id: "alice".into(),
            profile_json: r#"{"name":"Alice"}"#.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (alice.id.as_str(), alice.profile_json.as_str()),
        ("alice", r#"{"name":"Alice"}"#)
    );
    for u in ["bob", "carol"] {
        w.put_user(pb::PutUserRequest {
            id: u.into(),
            profile_json: String::new(),
        })
        .await
        .unwrap();
    }
    assert!(
        w.follow(edge("bob", "alice"))
            .await
            .unwrap()
            .into_inner()
            .changed
    );
    assert!(
        !w.follow(edge("bob", "alice"))
            .await
            .unwrap()
            .into_inner()
            .changed
    );
    w.follow(edge("bob", "carol")).await.unwrap();
    assert_eq!(
        r.follower_count(named("alice"))
            .await
            .unwrap()
            .into_inner()
            .count,
        1
    );
    assert_eq!(
        r.following_count(named("bob"))
            .await
            .unwrap()
            .into_inner()
            .count,
        2
    );
    // Newest follow first (carol, unless both follows fell in one
    // millisecond: then in id order), a page at a time, with the times.
    let first = r
        .list_following(pb::ListUsersRequest {
            user: "bob".into(),
            limit: 1,
            with_followed_at: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let rest = r
        .list_following(pb::ListUsersRequest {
            user: "bob".into(),
            limit: 1,
            cursor: first.next_cursor.clone(),
            with_followed_at: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rest.next_cursor, "");
    let edges: Vec<(String, String)> = [first, rest]
        .into_iter()
        .flat_map(|p| p.users.into_iter().zip(p.followed_at))
        .collect();
    let mut expected = edges.clone();
    expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!(edges, expected);
    let mut who: Vec<&str> = edges.iter().map(|(u, _)| u.as_str()).collect();
    who.sort();
    assert_eq!(who, ["alice", "carol"]);

    // Activate bob, then post: fanout reaches him; paging crosses the cache.
    r.get_timeline(timeline("bob", 5, "")).await.unwrap();
    let mut posted = Vec::new();
    for i in 0..7 {
        let author = if i % 2 == 0 { "alice" } else { "carol" };
        let p = w
            .create_post(pb::CreatePostRequest {
                author: author.into(),
                message: format!("m{i}"),
                data_json: r#"{"i":1}"#.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(p.data_json, r#"{"i":1}"#);
        posted.push(p.id);
    }
    t.wait_idle().await;
    let mut seen = Vec::new();
    let mut before = String::new();
    loop {
        let page = r
            .get_timeline(timeline("bob", 2, &before))
            .await
            .unwrap()
            .into_inner();
        seen.extend(page.posts.iter().map(|p| p.id.clone()));
        if page.next_cursor.is_empty() {
            break;
        }
        before = page.next_cursor;
    }
    assert_eq!(seen, newest_first(posted.clone()));
    let own = r
        .list_posts(timeline("alice", 10, ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(own.posts.len(), 4);
    let one = r
        .get_post(pb::GetPostRequest {
            id: posted[0].clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((one.author.as_str(), one.message.as_str()), ("alice", "m0"));

    // Deletions over gRPC.
    w.delete_post(pb::PostRef {
        id: posted[6].clone(),
    })
    .await
    .unwrap();
    w.unfollow(edge("bob", "carol")).await.unwrap();
    t.wait_idle().await;
    let page = r
        .get_timeline(timeline("bob", 10, ""))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<String> = page.posts.iter().map(|p| p.id.clone()).collect();
    assert_eq!(
        ids,
        newest_first(vec![
            posted[0].clone(),
            posted[2].clone(),
            posted[4].clone()
        ])
    );
    w.delete_user(user("alice")).await.unwrap();
    assert_eq!(
        r.get_user(named("alice")).await.unwrap_err().code(),
        Code::NotFound
    );
}

#[tokio::test]
async fn bad_input_gets_a_clear_grpc_status() {
    let t = spawn_app().await;
    let (mut w, mut r) = clients(&t).await;
    w.put_user(pb::PutUserRequest {
        id: "u".into(),
        profile_json: String::new(),
    })
    .await
    .unwrap();
    let post = |author: &str, message: String, data: &str| pb::CreatePostRequest {
        author: author.into(),
        message,
        data_json: data.into(),
        ..Default::default()
    };
    let cases: Vec<(tonic::Status, Code, &str)> = vec![
        (
            w.create_post(post("u", String::new(), ""))
                .await
                .unwrap_err(),
            Code::InvalidArgument,
            "empty_message",
        ),
        (
            w.create_post(post("u", "x".repeat(4097), ""))
                .await
                .unwrap_err(),
            Code::InvalidArgument,
            "message_too_long",
        ),
        (
            w.create_post(post("u", "m".into(), "{")).await.unwrap_err(),
            Code::InvalidArgument,
            "invalid_json",
        ),
        (
            w.create_post(post("u", "m".into(), "[1]"))
                .await
                .unwrap_err(),
            Code::InvalidArgument,
            "invalid_json_field",
        ),
        (
            w.create_post(post("ghost", "m".into(), ""))
                .await
                .unwrap_err(),
            Code::NotFound,
            "user_not_found",
        ),
        (
            w.create_post(post("b d", "m".into(), ""))
                .await
                .unwrap_err(),
            Code::InvalidArgument,
            "invalid_user_id",
        ),
        (
            w.follow(edge("u", "u")).await.unwrap_err(),
            Code::FailedPrecondition,
            "cannot_follow_self",
        ),
        (
            w.follow(edge("u", "ghost")).await.unwrap_err(),
            Code::NotFound,
            "user_not_found",
        ),
        (
            w.delete_post(pb::PostRef { id: "nope".into() })
                .await
                .unwrap_err(),
            Code::InvalidArgument,
            "invalid_post_id",
        ),
        (
            r.get_timeline(timeline("u", 201, "")).await.unwrap_err(),
            Code::InvalidArgument,
            "invalid_limit",
        ),
        (
            r.get_timeline(timeline("u", 10, "zz")).await.unwrap_err(),
            Code::InvalidArgument,
            "invalid_post_id",
        ),
        (
            r.get_timeline(timeline("ghost", 10, "")).await.unwrap_err(),
            Code::NotFound,
            "user_not_found",
        ),
        (
            r.list_followers(pb::ListUsersRequest {
                user: "u".into(),
                limit: 5,
                cursor: "zz".into(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
            Code::InvalidArgument,
            "invalid_cursor",
        ),
        (
            r.get_post(pb::GetPostRequest {
                id: "0000000000000001".into(),
                ..Default::default()
            })
            .await
            .unwrap_err(),
            Code::NotFound,
            "post_not_found",
        ),
    ];
    for (status, code, prefix) in cases {
        assert_eq!(status.code(), code, "{status:?}");
        assert!(
            status.message().starts_with(prefix),
            "{status:?} should start with {prefix}"
        );
    }
    // A message over the size limit is refused before it is decoded.
    let err = w
        .create_post(post("u", "z".repeat(100_000), ""))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange, "{err:?}");
}

/// Reflection lists the services the port serves, so clients need no
/// `.proto` files.
#[tokio::test]
async fn reflection_lists_the_services() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let t = spawn_app().await;
    let channel = Channel::from_shared(t.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut replies = client
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let reply = replies.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = reply.message_response else {
        panic!("not a service list: {reply:?}");
    };
    let mut names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "socialite.v1.Firehose",
            "socialite.v1.Ingest",
            "socialite.v1.Live",
            "socialite.v1.Reads",
            "socialite.v1.Webhooks"
        ]
    );
}
