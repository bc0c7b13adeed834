//! An account's lifecycle against a running server, as an attacker would
//! try it: a token minted before a deletion never acts for the account
//! re-created under the id (nor sheds the blocks on it), one user's tokens
//! are revoked alone, and a
//! suspension refuses, hides and lifts; on the embedded default and on
//! MongoDB, over REST and gRPC.

mod common;

use common::servers::Servers;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_proto::v1 as pb;
use std::time::Duration;
use tonic::Code;

/// The app on the embedded default, and on MongoDB + Kafka when the test
/// servers are there.
async fn apps(test: &str) -> Vec<TestApp> {
    let mut apps = vec![spawn_app().await];
    if Servers::from_env(test).is_some() {
        apps.push(
            spawn_app_configured(|c| {
                let servers = Servers::from_env("accounts").unwrap();
                c.storage.store = servers.mongodb_uri(&Servers::unique("accounts"));
                c.storage.event_log = servers.kafka_uri(&Servers::unique("accounts"), 2);
            })
            .await,
        );
    }
    apps
}

/// `(status, error code)` of a REST call with `credential`.
async fn as_(t: &TestApp, credential: &str, method: Method, path: &str) -> (u16, String) {
    let mut req = client_with(credential).request(method.clone(), format!("{}{path}", t.base));
    if method == Method::POST {
        req = req.json(&json!({ "message": "hello" }));
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let code = body["error"]["code"].as_str().unwrap_or("").to_owned();
    (status, code)
}

/// Waits past the current whole second: a token minted then is issued
/// after anything revoked before.
async fn next_second() {
    tokio::time::sleep(Duration::from_millis(1_100)).await;
}

async fn grpc_timeline(t: &TestApp, credential: &str, user: &str) -> Result<(), tonic::Status> {
    let (_, mut reads) = clients_as(t, credential).await;
    let req = pb::ListPostsRequest {
        user: user.into(),
        ..Default::default()
    };
    reads.get_timeline(req).await.map(drop)
}

#[tokio::test]
async fn a_token_minted_before_a_deletion_never_acts_for_the_account_re_created() {
    for t in apps("a_token_minted_before_a_deletion").await {
        t.put_user("victim").await;
        t.put_user("carol").await;
        let (status, _) = t
            .call(Method::PUT, "/users/carol/blocks/victim", None)
            .await;
        assert_eq!(status, StatusCode::OK);
        let old = token_for("victim");
        assert_eq!(
            as_(&t, &old, Method::GET, "/users/victim/timeline").await.0,
            200
        );
        t.delete("/users/victim").await;
        // Someone registers the id again.
        let (status, _) = t.call(Method::PUT, "/users/victim", None).await;
        assert_eq!(status, StatusCode::CREATED);
        for (method, path) in [
            (Method::GET, "/users/victim/timeline"),
            (Method::POST, "/users/victim/posts"),
            (Method::PUT, "/users/victim"),
            (Method::DELETE, "/users/victim/following/nobody"),
        ] {
            let got = as_(&t, &old, method.clone(), path).await;
            assert_eq!(got, (401, "token_revoked".into()), "{method} {path}");
        }
        let err = grpc_timeline(&t, &old, "victim").await.unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated);
        assert!(err.message().starts_with("token_revoked"), "{err:?}");
        // The id does not shed the block on it.
        let got = as_(&t, ADMIN_KEY, Method::PUT, "/users/victim/following/carol").await;
        assert_eq!(got, (403, "blocked".into()));
        let (_, blocks) = t.get("/users/carol/blocks").await;
        assert_eq!(blocks["users"], json!(["victim"]));
        // The new owner's tokens act.
        next_second().await;
        let new = token_for("victim");
        assert_eq!(
            as_(&t, &new, Method::GET, "/users/victim/timeline").await.0,
            200
        );
        assert!(grpc_timeline(&t, &new, "victim").await.is_ok());
    }
}

#[tokio::test]
async fn one_users_tokens_are_revoked_alone() {
    for t in apps("one_users_tokens_are_revoked_alone").await {
        t.put_user("alice").await;
        t.put_user("bob").await;
        let (alice, bob) = (token_for("alice"), token_for("bob"));
        // Only an admin key revokes.
        let refused = as_(&t, &alice, Method::DELETE, "/users/alice/tokens").await;
        assert_eq!(refused, (403, "server_key_required".into()));
        let (status, _) = t.call(Method::DELETE, "/users/alice/tokens", None).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let got = as_(&t, &alice, Method::GET, "/users/alice/timeline").await;
        assert_eq!(got, (401, "token_revoked".into()));
        assert_eq!(
            as_(&t, &bob, Method::GET, "/users/bob/timeline").await.0,
            200
        );
        next_second().await;
        let fresh = token_for("alice");
        assert_eq!(
            as_(&t, &fresh, Method::GET, "/users/alice/timeline")
                .await
                .0,
            200
        );
        // The same over gRPC.
        let (mut ingest, _) = clients_as(&t, ADMIN_KEY).await;
        let r = pb::UserRef { id: "bob".into() };
        ingest.revoke_tokens(r).await.unwrap();
        let err = grpc_timeline(&t, &bob, "bob").await.unwrap_err();
        assert!(err.message().starts_with("token_revoked"), "{err:?}");
    }
}

#[tokio::test]
async fn a_suspension_refuses_hides_keeps_the_id_and_lifts() {
    for t in apps("a_suspension_refuses_hides_keeps_the_id_and_lifts").await {
        for u in ["alice", "bob", "carol"] {
            t.put_user(u).await;
        }
        t.follow("bob", "alice").await;
        let (status, _) = t.call(Method::PUT, "/users/carol/blocks/alice", None).await;
        assert_eq!(status, StatusCode::OK);
        let post = t.post("alice", "hello @bob").await;
        eventually("the post in bob's timeline", || async {
            t.timeline("bob", 10).await.contains(&post)
        })
        .await;
        let token = token_for("alice");
        let mut stream = client_with(ADMIN_KEY)
            .get(format!("{}/users/alice/timeline/stream", t.base))
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), StatusCode::OK);

        let (status, body) = t.call(Method::PUT, "/users/alice/suspension", None).await;
        assert_eq!(
            (status, &body),
            (StatusCode::OK, &json!({"suspended": true, "changed": true}))
        );
        // Its timeline's streams end, even one a server key opened.
        let end = tokio::time::timeout(Duration::from_secs(5), async {
            let mut text = String::new();
            while let Some(chunk) = stream.chunk().await.unwrap() {
                text.push_str(&String::from_utf8_lossy(&chunk));
                if text.contains("event: end") {
                    break;
                }
            }
            text
        })
        .await
        .unwrap();
        assert!(end.contains("account_suspended"), "{end}");
        // Cannot act, by token or by a server key acting for it.
        let got = as_(&t, &token, Method::GET, "/users/alice/timeline").await;
        assert_eq!(got, (401, "token_revoked".into()));
        next_second().await;
        let fresh = token_for("alice");
        let got = as_(&t, &fresh, Method::POST, "/users/alice/posts").await;
        assert_eq!(got, (403, "account_suspended".into()));
        let got = as_(&t, ADMIN_KEY, Method::POST, "/users/alice/posts").await;
        assert_eq!(got, (403, "account_suspended".into()));
        // Its id cannot be taken, nor followed.
        let got = as_(&t, ADMIN_KEY, Method::PUT, "/users/alice").await;
        assert_eq!(got, (403, "account_suspended".into()));
        let got = as_(&t, ADMIN_KEY, Method::PUT, "/users/bob/following/alice").await;
        assert_eq!(got, (404, "user_not_found".into()));
        // Hidden from every reader.
        assert!(!t.timeline("bob", 10).await.contains(&post));
        assert_eq!(
            t.get(&format!("/posts/{post}")).await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(t.get("/users/alice").await.0, StatusCode::NOT_FOUND);
        let (_, mentions) = t.get("/users/bob/mentions").await;
        assert_eq!(mentions["posts"], json!([]));
        let (_, posts) = t.get("/posts?authors=alice,bob").await;
        assert_eq!(posts["posts"], json!([]));
        // The block on it stays.
        let (_, blocks) = t.get("/users/carol/blocks").await;
        assert_eq!(blocks["users"], json!(["alice"]));

        // Lifted over gRPC: everything is back; the follow never left.
        let (mut ingest, _) = clients_as(&t, ADMIN_KEY).await;
        let lifted = ingest
            .unsuspend(pb::UserRef { id: "alice".into() })
            .await
            .unwrap()
            .into_inner();
        assert!(!lifted.suspended && lifted.changed);
        // Other replicas see it within a second; this one at once.
        assert!(t.timeline("bob", 10).await.contains(&post));
        assert_eq!(t.get(&format!("/posts/{post}")).await.0, StatusCode::OK);
        assert_eq!(
            as_(&t, &fresh, Method::GET, "/users/alice/timeline")
                .await
                .0,
            200
        );
        // A token from before the suspension stays refused.
        let got = as_(&t, &token, Method::GET, "/users/alice/timeline").await;
        assert_eq!(got, (401, "token_revoked".into()));
        // Only admins suspend.
        let got = as_(&t, WRITE_KEY, Method::PUT, "/users/bob/suspension").await;
        assert_eq!(got, (403, "missing_scope".into()));
    }
}

#[tokio::test]
async fn a_deleted_accounts_suspension_keeps_its_id() {
    let t = spawn_app().await;
    t.put_user("spammer").await;
    let (status, _) = t.call(Method::PUT, "/users/spammer/suspension", None).await;
    assert_eq!(status, StatusCode::OK);
    t.delete("/users/spammer").await;
    let got = as_(&t, ADMIN_KEY, Method::PUT, "/users/spammer").await;
    assert_eq!(got, (403, "account_suspended".into()));
    let (status, _) = t
        .call(Method::DELETE, "/users/spammer/suspension", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = t.call(Method::PUT, "/users/spammer", None).await;
    assert_eq!(status, StatusCode::CREATED);
}

/// A token that claims a lifetime of a century, one without `iat`, and one
/// used before its `nbf` are refused.
#[tokio::test]
async fn token_times_are_checked_on_every_call() {
    let t = spawn_app().await;
    t.put_user("alice").await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for (claims, code) in [
        (
            json!({"sub": "alice", "iat": now, "exp": now + 100 * 365 * 86_400}),
            "invalid_token",
        ),
        (json!({"sub": "alice", "exp": now + 60}), "invalid_token"),
        (
            json!({"sub": "alice", "iat": now, "nbf": now + 600, "exp": now + 900}),
            "token_not_yet_valid",
        ),
    ] {
        let got = as_(&t, &hs256(&claims), Method::GET, "/users/alice/timeline").await;
        assert_eq!(got, (401, code.into()), "{claims}");
    }
    let ok = hs256(&json!({"sub": "alice", "iat": now, "nbf": now, "exp": now + 60}));
    assert_eq!(
        as_(&t, &ok, Method::GET, "/users/alice/timeline").await.0,
        200
    );
}
