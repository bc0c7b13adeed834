//! Webhooks end to end, against receivers on loopback: every delivery
//! signed so that the official Standard Webhooks library accepts it, in
//! order; a dead and a slow endpoint beside a good one; 410, 429 with
//! `Retry-After`, redirects, huge and endless answers; secret rotation;
//! replay; the admin scope; internal addresses refused; gRPC.

mod common;

use common::process::{required_env, send_as_client};
use common::receiver::{Received, Receiver};
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_core::webhooks::sign;
use std::time::Duration;

async fn register(t: &TestApp, body: Value) -> Value {
    let (status, made) = t.call(Method::POST, "/admin/webhooks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert!(made["secret"].as_str().unwrap().starts_with("whsec_"));
    made
}

/// The ids of the posts a request carried, one or a batch.
fn post_ids(r: &Received) -> Vec<String> {
    let body = r.json();
    let events = match body["type"].as_str() {
        Some("batch") => body["data"]["events"].as_array().unwrap().clone(),
        _ => vec![body["data"].clone()],
    };
    events
        .iter()
        .filter(|e| e["kind"] == "post")
        .map(|e| e["post"]["id"].as_str().unwrap().to_owned())
        .collect()
}

fn verifies(r: &Received, secret: &str) -> bool {
    let ts: u64 = r.header("webhook-timestamp").parse().unwrap();
    let want = sign::signature(secret, r.header("webhook-id"), ts, &r.body).unwrap();
    r.header("webhook-signature").split(' ').any(|s| s == want)
}

/// Has the official library verify `got` with every one of `secrets`, and
/// refuse them changed or stamped ten minutes ago (scripts/verify_webhooks.py).
fn standard_library_accepts(got: &[Received], secrets: &[&str]) {
    let Some(python) = required_env(
        "standard_library_accepts",
        "SOCIALITE_TEST_PYTHON",
        "a python with `standardwebhooks` installed",
    ) else {
        return;
    };
    use base64ct::{Base64, Encoding};
    let file = tempfile::NamedTempFile::new().unwrap();
    let lines: Vec<String> = got
        .iter()
        .map(|r| {
            json!({"headers": r.headers, "body": Base64::encode_string(&r.body), "secrets": secrets})
                .to_string()
        })
        .collect();
    std::fs::write(file.path(), lines.join("\n")).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/verify_webhooks.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the Standard Webhooks library refused a delivery: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Posts as alice until a delivery to `prefix` satisfies `done` (an
/// admin's change reaches delivery within a second); that delivery.
async fn posted_until(
    t: &TestApp,
    rx: &Receiver,
    prefix: &str,
    done: impl Fn(&Received) -> bool,
) -> Received {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let before = rx.at(prefix).len();
        t.post("alice", "probe").await;
        let got = rx.wait_for(prefix, before + 1).await;
        if let Some(r) = got[before..].iter().find(|r| done(r)) {
            return r.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no delivery as expected"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn deliveries(t: &TestApp, id: &str) -> Vec<Value> {
    let (status, log) = t
        .get(&format!("/admin/webhooks/{id}/deliveries?limit=100"))
        .await;
    assert_eq!(status, StatusCode::OK, "{log}");
    log["deliveries"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_are_signed_in_order_and_the_standard_library_accepts_them() {
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let one = register(
        &t,
        json!({"url": format!("{}/ok/one", rx.base), "kinds": ["post"], "description": "search"}),
    )
    .await;
    let batched = register(
        &t,
        json!({"url": format!("{}/ok/batch", rx.base), "authors": ["alice"], "batch": 10}),
    )
    .await;
    t.put_user("alice").await;
    t.put_user("bob").await;
    let mut posted = Vec::new();
    for i in 0..20 {
        posted.push(t.post("alice", &format!("hello {i}")).await);
    }
    t.post("bob", "not alice").await;
    let got = rx.wait_for("/ok/one", 21).await;
    let secret = one["secret"].as_str().unwrap();
    let ids: Vec<String> = got.iter().flat_map(post_ids).collect();
    assert_eq!(ids[..20], posted[..], "alice's posts in order, then bob's");
    for r in &got {
        assert!(verifies(r, secret), "{r:?}");
        assert_eq!(r.json()["type"], "post");
        assert_eq!(r.header("content-type"), "application/json");
    }
    // The batch endpoint: alice's acts only (her profile first), several to
    // a request.
    let deadline = std::time::Instant::now() + DEADLINE;
    let mut batch_ids = Vec::new();
    while batch_ids.len() < 20 && std::time::Instant::now() < deadline {
        batch_ids = rx.at("/ok/batch").iter().flat_map(post_ids).collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(batch_ids, posted);
    let requests = rx.at("/ok/batch");
    assert!(
        requests.len() < 21,
        "{} requests for 21 acts",
        requests.len()
    );
    assert!(requests.iter().all(|r| r.json()["type"] == "batch"));
    let batch_secret = batched["secret"].as_str().unwrap();
    standard_library_accepts(&got, &[secret]);
    standard_library_accepts(&requests, &[batch_secret]);

    // The delivery log and the endpoint's cursor.
    let id = one["id"].as_str().unwrap();
    let log = deliveries(&t, id).await;
    assert_eq!(log.len(), 21);
    assert!(log
        .iter()
        .all(|a| a["outcome"] == "delivered" && a["status"] == 204));
    assert_eq!(
        log[0]["to"],
        t.get(&format!("/admin/webhooks/{id}")).await.1["cursor"]
    );
    // Secrets are shown once.
    let (_, listed) = t.get("/admin/webhooks").await;
    assert!(!listed.to_string().contains("whsec_"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_and_a_slow_endpoint_do_not_delay_a_good_one() {
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let dead = format!("http://127.0.0.1:{}/in", process::free_port());
    for url in [
        dead,
        format!("{}/slow/x", rx.base),
        format!("{}/ok/good", rx.base),
    ] {
        register(&t, json!({"url": url, "kinds": ["post"]})).await;
    }
    t.put_user("alice").await;
    for i in 0..30 {
        t.post("alice", &format!("p{i}")).await;
    }
    rx.wait_for("/ok/good", 30).await;
    // The slow one takes two seconds a request: it has had a few.
    assert!(rx.at("/slow/").len() < 30);
    let (_, listed) = t.get("/admin/webhooks").await;
    let dead_one = &listed["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["url"].as_str().unwrap().ends_with("/in"))
        .unwrap()
        .clone();
    let log = deliveries(&t, dead_one["id"].as_str().unwrap()).await;
    assert!(log.iter().all(|a| a["outcome"] != "delivered"), "{log:?}");
    assert!(
        log[0]["error"].as_str().unwrap().contains("connect"),
        "{log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gone_turns_off_busy_is_honoured_and_redirects_are_not_followed() {
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let gone = register(
        &t,
        json!({"url": format!("{}/gone/x", rx.base), "kinds": ["post"]}),
    )
    .await;
    let busy = register(
        &t,
        json!({"url": format!("{}/busy/x", rx.base), "kinds": ["post"]}),
    )
    .await;
    let moved = register(
        &t,
        json!({"url": format!("{}/redirect/x", rx.base), "kinds": ["post"]}),
    )
    .await;
    let big = register(
        &t,
        json!({"url": format!("{}/big/x", rx.base), "kinds": ["post"]}),
    )
    .await;
    t.put_user("alice").await;
    t.post("alice", "one").await;
    t.post("alice", "two").await;

    let id = |e: &Value| e["id"].as_str().unwrap().to_owned();
    let gone_id = id(&gone);
    let off = t
        .eventually_get(&format!("/admin/webhooks/{gone_id}"), |e| {
            e["enabled"] == false
        })
        .await;
    assert!(
        off["disabled_reason"].as_str().unwrap().contains("410"),
        "{off}"
    );
    assert_eq!(rx.at("/gone/").len(), 1, "nothing after the 410");
    assert_eq!(deliveries(&t, &gone_id).await[0]["outcome"], "gone");

    // 429 with Retry-After: 1 waits a second (the schedule's first retry
    // is 200 ms), then both posts come.
    let busy_got = rx.wait_for("/busy/", 3).await;
    let waited = busy_got[1].at - busy_got[0].at;
    assert!(
        waited >= Duration::from_millis(900),
        "retried after {waited:?}"
    );
    let log = deliveries(&t, &id(&busy)).await;
    assert_eq!(log.last().unwrap()["status"], 429);

    // A redirect is a failure, retried; its target is never called.
    rx.wait_for("/redirect/", 2).await;
    assert!(rx.at("/ok/redirected").is_empty());
    let log = deliveries(&t, &id(&moved)).await;
    assert!(
        log.iter()
            .all(|a| a["status"] == 302 && a["outcome"] != "delivered"),
        "{log:?}"
    );

    // A 20 MiB answer is read only up to the cap: delivered, both posts.
    rx.wait_for("/big/", 2).await;
    let log = t
        .eventually_get(&format!("/admin/webhooks/{}/deliveries", id(&big)), |l| {
            l["deliveries"].as_array().unwrap().len() >= 2
        })
        .await;
    assert!(
        log["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["outcome"] == "delivered"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_answer_times_out_and_tries_run_out() {
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let loris = register(
        &t,
        json!({"url": format!("{}/loris/x", rx.base), "kinds": ["post"]}),
    )
    .await;
    t.put_user("alice").await;
    t.post("alice", "one").await;
    let id = loris["id"].as_str().unwrap();
    // The tests' timeout is 3 s and their schedule three retries: four
    // tries, then the endpoint is off.
    let off = t
        .eventually_get(&format!("/admin/webhooks/{id}"), |e| e["enabled"] == false)
        .await;
    assert!(
        off["disabled_reason"]
            .as_str()
            .unwrap()
            .contains("4 tries failed"),
        "{off}"
    );
    let log = deliveries(&t, id).await;
    assert_eq!(log.len(), 4);
    assert_eq!(log[0]["outcome"], "exhausted");
    assert!(
        log.iter()
            .all(|a| a["error"].as_str().unwrap().contains("timed out")),
        "{log:?}"
    );
    // Turned on again, it is tried at once.
    let (status, on) = t
        .call(
            Method::PATCH,
            &format!("/admin/webhooks/{id}"),
            Some(json!({"enabled": true})),
        )
        .await;
    assert_eq!(
        (status, on["enabled"].clone()),
        (StatusCode::OK, json!(true)),
        "{on}"
    );
    rx.wait_for("/loris/", 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_signs_with_both_secrets_until_its_grace_ends() {
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let made = register(
        &t,
        json!({"url": format!("{}/ok/r", rx.base), "kinds": ["post"]}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    let old = made["secret"].as_str().unwrap().to_owned();
    let path = format!("/admin/webhooks/{id}/rotate-secret");
    let (status, rotated) = t
        .call(Method::POST, &path, Some(json!({"grace_seconds": 600})))
        .await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let new = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    t.put_user("alice").await;
    let both = posted_until(&t, &rx, "/ok/r", |r| verifies(r, &new)).await;
    assert_eq!(both.header("webhook-signature").split(' ').count(), 2);
    assert!(
        verifies(&both, &old),
        "the old secret signs through the grace"
    );
    standard_library_accepts(&[both], &[&new, &old]);
    // Every delivery verifies with the old secret while the grace lasts.
    assert!(rx.at("/ok/r").iter().all(|r| verifies(r, &old)));
    // Without grace, only the newest signs.
    let (_, again) = t
        .call(Method::POST, &path, Some(json!({"grace_seconds": 0})))
        .await;
    let newest = again["secret"].as_str().unwrap().to_owned();
    let last = posted_until(&t, &rx, "/ok/r", |r| verifies(r, &newest)).await;
    assert_eq!(last.header("webhook-signature").split(' ').count(), 1);
    assert!(!verifies(&last, &new));
    let (status, e) = t
        .call(Method::POST, &path, Some(json!({"grace_seconds": 700000})))
        .await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grace")),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_delivers_a_range_again() {
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let made = register(
        &t,
        json!({"url": format!("{}/ok/p", rx.base), "kinds": ["post"]}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    t.put_user("alice").await;
    let mut posted = Vec::new();
    for i in 0..5 {
        posted.push(t.post("alice", &format!("p{i}")).await);
    }
    let got = rx.wait_for("/ok/p", 5).await;
    let from = got[1].json()["data"]["cursor"].as_str().unwrap().to_owned();
    let until = got[3].json()["data"]["cursor"].as_str().unwrap().to_owned();
    // `from` is the cursor after the second post: the third and fourth.
    let (status, e) = t
        .call(
            Method::POST,
            &format!("/admin/webhooks/{id}/replay"),
            Some(json!({"from": from, "until": until})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{e}");
    let got = rx.wait_for("/ok/p", 7).await;
    let again: Vec<String> = got[5..].iter().flat_map(post_ids).collect();
    assert_eq!(again, posted[2..4]);
    assert!(got[5].header("webhook-id").contains("replay"));
    let done = t
        .eventually_get(&format!("/admin/webhooks/{id}"), |e| {
            e.get("replay").is_none()
        })
        .await;
    // The same range again: ids of its own.
    let (status, _) = t
        .call(
            Method::POST,
            &format!("/admin/webhooks/{id}/replay"),
            Some(json!({"from": from, "until": until})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let got = rx.wait_for("/ok/p", 9).await;
    assert_ne!(got[7].header("webhook-id"), got[5].header("webhook-id"));
    t.eventually_get(&format!("/admin/webhooks/{id}"), |e| {
        e.get("replay").is_none()
    })
    .await;
    assert_eq!(done["enabled"], true);
    for (body, code) in [
        (json!({"from": until, "until": from}), "invalid_replay"),
        (json!({"from": "x"}), "invalid_cursor"),
    ] {
        let (status, e) = t
            .call(
                Method::POST,
                &format!("/admin/webhooks/{id}/replay"),
                Some(body),
            )
            .await;
        assert_eq!(
            (status, e["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_admin_key_manages_webhooks_and_bad_input_is_refused() {
    let t = spawn_app().await;
    let body = json!({"url": "https://hooks.example/in"});
    for (credential, status, code) in [
        (WRITE_KEY.to_owned(), 403, "missing_scope"),
        (READ_KEY.to_owned(), 403, "missing_scope"),
        (FIREHOSE_KEY.to_owned(), 403, "missing_scope"),
        (token_for("alice"), 403, "server_key_required"),
    ] {
        let r = client_with(&credential)
            .post(format!("{}/admin/webhooks", t.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), status);
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["code"], code, "{e}");
        let r = client_with(&credential)
            .get(format!("{}/admin/webhooks", t.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), status);
    }
    let r = reqwest::Client::new()
        .get(format!("{}/admin/webhooks", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    for (bad, code) in [
        (json!({"url": "ftp://x.example/"}), "invalid_url"),
        (json!({"url": "https://u:p@x.example/"}), "invalid_url"),
        (
            json!({"url": "https://x.example/", "kinds": ["mute"]}),
            "invalid_kind",
        ),
        (
            json!({"url": "https://x.example/", "batch": 101}),
            "invalid_batch",
        ),
        (
            json!({"url": "https://x.example/", "description": "d".repeat(300)}),
            "invalid_description",
        ),
        (
            json!({"url": "https://x.example/", "authors": ["no good"]}),
            "invalid_user_id",
        ),
        (
            json!({"url": "https://x.example/", "color": "red"}),
            "invalid_body",
        ),
    ] {
        let (status, e) = t
            .call(Method::POST, "/admin/webhooks", Some(bad.clone()))
            .await;
        assert_eq!(
            (status, e["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{bad} {e}"
        );
    }
    let authors: Vec<String> = (0..10_001).map(|i| format!("u{i}")).collect();
    let (status, e) = t
        .call(
            Method::POST,
            "/admin/webhooks",
            Some(json!({"url": "https://x.example/", "authors": authors})),
        )
        .await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("too_many_authors")),
        "{e}"
    );
    let (status, e) = t.get("/admin/webhooks/wh_nothing").await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("webhook_not_found"))
    );
    let (status, e) = t.get("/admin/webhooks/..%2Fx").await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_webhook_id"))
    );
    let (status, e) = t.get("/admin/webhooks/wh_nothing/deliveries?limit=0").await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_limit"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn internal_addresses_are_refused_unless_the_operator_allows_them() {
    let t = spawn_app_configured(|c| c.webhooks.allow_internal = false).await;
    for url in [
        "http://127.0.0.1:9/in",
        "http://localhost:9/in",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/in",
        "http://10.1.2.3/in",
        "http://192.168.0.1/in",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:127.0.0.1]/in",
        "http://0.0.0.0/in",
    ] {
        let (status, e) = t
            .call(Method::POST, "/admin/webhooks", Some(json!({"url": url})))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url} {e}");
        assert_eq!(e["error"]["code"], "webhook_address_refused", "{url} {e}");
    }
    let (status, e) = t
        .call(
            Method::POST,
            "/admin/webhooks",
            Some(json!({"url": "http://no-such-host.invalid/in"})),
        )
        .await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("webhook_host_unresolved")),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_holds() {
    let t = spawn_app_configured(|c| c.webhooks.max_endpoints = 2).await;
    for _ in 0..2 {
        register(&t, json!({"url": "http://127.0.0.1:9/in"})).await;
    }
    let (status, e) = t
        .call(
            Method::POST,
            "/admin/webhooks",
            Some(json!({"url": "http://127.0.0.1:9/in"})),
        )
        .await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("too_many_webhooks")),
        "{e}"
    );
    let (_, listed) = t.get("/admin/webhooks").await;
    let first = listed["endpoints"][0]["id"].as_str().unwrap().to_owned();
    let (status, _) = t
        .call(Method::DELETE, &format!("/admin/webhooks/{first}"), None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    register(&t, json!({"url": "http://127.0.0.1:9/in"})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_manages_webhooks() {
    use socialite_proto::v1 as pb;
    use socialite_proto::v1::webhooks_client::WebhooksClient;
    let t = spawn_app().await;
    let rx = Receiver::start().await;
    let channel = tonic::transport::Channel::from_shared(t.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let auth = |key: &str| {
        let v: tonic::metadata::MetadataValue<_> = format!("Bearer {key}").parse().unwrap();
        move |mut req: tonic::Request<()>| {
            req.metadata_mut().insert("authorization", v.clone());
            Ok(req)
        }
    };
    let mut c = WebhooksClient::with_interceptor(channel.clone(), auth(ADMIN_KEY));
    let made = c
        .create(pb::WebhookSettings {
            url: format!("{}/ok/grpc", rx.base),
            kinds: vec!["post".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(made.secret.starts_with("whsec_") && made.enabled);
    t.put_user("alice").await;
    t.post("alice", "by grpc").await;
    let got = rx.wait_for("/ok/grpc", 1).await;
    assert!(verifies(&got[0], &made.secret));
    let id = made.id.clone();
    let listed = c
        .list(pb::ListWebhooksRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.endpoints.len(), 1);
    assert!(listed.endpoints[0].secret.is_empty());
    let log = c
        .deliveries(pb::WebhookDeliveriesRequest {
            id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(log.attempts[0].outcome, "delivered");
    let off = c
        .update(pb::UpdateWebhookRequest {
            id: id.clone(),
            enabled: Some(false),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!off.enabled && off.disabled_reason.contains("admin"));
    let rotated = c
        .rotate_secret(pb::RotateWebhookSecretRequest {
            id: id.clone(),
            grace_seconds: Some(0),
        })
        .await
        .unwrap()
        .into_inner();
    assert_ne!(rotated.secret, made.secret);
    c.delete(pb::WebhookRef { id: id.clone() }).await.unwrap();
    let gone = c.get(pb::WebhookRef { id }).await.unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);
    let mut writer = WebhooksClient::with_interceptor(channel, auth(WRITE_KEY));
    let refused = writer.list(pb::ListWebhooksRequest {}).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
}

/// `socialite up` with `store` arguments, killed (SIGKILL) while it
/// delivers, then started again over the same data: every acknowledged
/// post reaches the endpoint (some twice: at least once).
async fn a_kill_during_delivery_loses_nothing(store: &[String]) {
    use common::process::{socialite_binary, Server};
    let rx = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = store.iter().map(String::as_str).collect();
    args.extend([
        "--webhook-allow-internal",
        "--webhook-retries",
        "200ms,400ms,800ms,1s,1s,1s",
    ]);
    let http = client_with(ADMIN_KEY);
    let log = |n: u32| dir.path().join(format!("server{n}.log"));
    let mut server = Server::start(&socialite_binary(), &dir.path().join("data"), &args, log(1));
    server.readyz(&http, StatusCode::OK).await;
    let made: Value = http
        .post(format!("{}/admin/webhooks", server.base))
        .json(&json!({"url": format!("{}/ok/k", rx.base), "kinds": ["post"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(made["id"].is_string(), "{made}");
    let put = http
        .put(format!("{}/users/alice", server.base))
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    let mut acked = std::collections::BTreeSet::new();
    let url = format!("{}/users/alice/posts", server.base);
    for i in 0..300 {
        let body = json!({"message": format!("p{i}")});
        let (s, v) = send_as_client(&http, reqwest::Method::POST, &url, Some(&body)).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        acked.insert(v["id"].as_str().unwrap().to_owned());
    }
    // Mid-delivery: some delivered, more on the log.
    rx.wait_for("/ok/k", 50).await;
    server.kill();
    let before = rx.at("/ok/k").len();
    assert!(
        before < acked.len(),
        "everything was delivered before the kill ({before})"
    );
    let server = Server::start(&socialite_binary(), &dir.path().join("data"), &args, log(2));
    server.readyz(&http, StatusCode::OK).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let got: std::collections::BTreeSet<String> =
            rx.at("/ok/k").iter().flat_map(post_ids).collect();
        if acked.is_subset(&got) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} acknowledged posts never delivered; the log:\n{}",
            acked.difference(&got).count(),
            server.log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_during_delivery_loses_nothing_embedded() {
    a_kill_during_delivery_loses_nothing(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_during_delivery_loses_nothing_on_mongodb_and_kafka() {
    let Some(servers) = common::servers::Servers::from_env(
        "a_kill_during_delivery_loses_nothing_on_mongodb_and_kafka",
    ) else {
        return;
    };
    let name = common::servers::Servers::unique("webhook_kill");
    let store = [
        "--store".to_owned(),
        servers.mongodb_uri(&name),
        "--event-log".to_owned(),
        servers.kafka_uri(&name, 2),
    ];
    a_kill_during_delivery_loses_nothing(&store).await;
}

/// The production topology on MongoDB and Kafka (two partitions): the
/// writing process delivers; signed, every post once per endpoint, a dead
/// endpoint beside a good one, 410 turning one off, a rotation signing
/// with both secrets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_on_mongodb_and_kafka() {
    let Some(servers) = common::servers::Servers::from_env("webhooks_on_mongodb_and_kafka") else {
        return;
    };
    let split = split_on(&servers, "webhooks", 2).await;
    let rx = Receiver::start().await;
    let http = client_with(ADMIN_KEY);
    let register = |body: Value| {
        let (http, w) = (http.clone(), split.w.clone());
        async move {
            let r = http
                .post(format!("{w}/admin/webhooks"))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::CREATED);
            r.json::<Value>().await.unwrap()
        }
    };
    let good = register(json!({"url": format!("{}/ok/m", rx.base), "kinds": ["post"]})).await;
    let dead = format!("http://127.0.0.1:{}/in", process::free_port());
    register(json!({"url": dead, "kinds": ["post"]})).await;
    let gone = register(json!({"url": format!("{}/gone/m", rx.base), "kinds": ["post"]})).await;
    let old = good["secret"].as_str().unwrap().to_owned();
    let rotate = format!(
        "{}/admin/webhooks/{}/rotate-secret",
        split.w,
        good["id"].as_str().unwrap()
    );
    let rotated: Value = http
        .post(rotate)
        .json(&json!({"grace_seconds": 600}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let new = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    let mut posted = std::collections::BTreeSet::new();
    for user in ["alice", "bob", "carol"] {
        let r = http
            .put(format!("{}/users/{user}", split.w))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
        for i in 0..5 {
            let url = format!("{}/users/{user}/posts", split.w);
            let body = json!({"message": format!("{user} {i}")});
            let (s, v) = send_as_client(&http, reqwest::Method::POST, &url, Some(&body)).await;
            assert_eq!(s, reqwest::StatusCode::CREATED, "{v}");
            posted.insert(v["id"].as_str().unwrap().to_owned());
        }
    }
    let got = rx.wait_for("/ok/m", 15).await;
    let ids: std::collections::BTreeSet<String> = got.iter().flat_map(post_ids).collect();
    assert_eq!(ids, posted);
    // The old secret signs through the grace (the new one within a second
    // of the rotation: the embedded test holds that).
    assert!(got.iter().all(|r| verifies(r, &old)));
    standard_library_accepts(&got, &[&old]);
    let gone_id = gone["id"].as_str().unwrap();
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let e: Value = http
            .get(format!("{}/admin/webhooks/{gone_id}", split.w))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if e["enabled"] == false {
            assert!(
                e["disabled_reason"].as_str().unwrap().contains("410"),
                "{e}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{e}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(rx.at("/gone/m").len(), 1);

    // A replay over two partitions: from before the first delivery to
    // where delivery is, every post again, nothing else.
    let id = good["id"].as_str().unwrap();
    let log: Value = http
        .get(format!(
            "{}/admin/webhooks/{id}/deliveries?limit=100",
            split.w
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first = log["deliveries"].as_array().unwrap().last().unwrap()["from"].clone();
    let r = http
        .post(format!("{}/admin/webhooks/{id}/replay", split.w))
        .json(&json!({"from": first}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let got = rx.wait_for("/ok/m", 30).await;
    let again: Vec<String> = got[15..].iter().flat_map(post_ids).collect();
    let again_set: std::collections::BTreeSet<String> = again.iter().cloned().collect();
    assert_eq!((again.len(), again_set), (15, posted));
    assert!(got[15..]
        .iter()
        .all(|r| r.header("webhook-id").contains("_replay")));
}
