//! `spawn_app()`: the all-in-one app on port 0 over a fresh data directory,
//! with a typed REST client. Waiting is polling with a deadline, never a sleep
//! standing in for synchronisation.
#![allow(dead_code)]

#[allow(unused_imports)] // used by the tests that need servers only
pub use socialite_e2e::servers;

pub mod ports;
pub mod process;
pub mod receiver;
pub mod sse;

use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};
use socialite_api::auth::keys::StoredKey;
use socialite_api::auth::rate::Rates;
use socialite_api::auth::Source;
use socialite_core::budgets::{BudgetConfig, Quota};
use socialite_core::feed::config::FeedConfig;
use socialite_core::worker::WorkerConfig;
use socialite_domain::accounts::access::Scopes;
use socialite_embedded::EmbeddedConfig;
use socialite_runtime::backends::BackendConfig;
use socialite_runtime::{start, App, AppConfig, AuthConfig, Service};
use std::path::Path;
use std::time::Duration;

pub const DEADLINE: Duration = Duration::from_secs(20);

pub struct TestApp {
    pub app: Option<App>,
    pub base: String,
    pub grpc: String,
    pub http: Client,
    pub dir: tempfile::TempDir,
    pub cache_size: usize,
    /// The operators' address, when they are served apart.
    pub ops: Option<String>,
    /// Changes to the tests' settings, applied at every start.
    pub tweak: fn(&mut AppConfig),
}

/// The tests' server API keys: one per scope and one with write, read and
/// admin.
pub const ADMIN_KEY: &str = "slk_a000000000000000000000000000000000000000000000000000000000000001";
pub const WRITE_KEY: &str = "slk_a000000000000000000000000000000000000000000000000000000000000002";
pub const READ_KEY: &str = "slk_a000000000000000000000000000000000000000000000000000000000000003";
pub const OPS_KEY: &str = "slk_a000000000000000000000000000000000000000000000000000000000000004";
pub const FIREHOSE_KEY: &str =
    "slk_a000000000000000000000000000000000000000000000000000000000000005";
/// The secret the tests' user tokens are signed with.
pub const TOKEN_SECRET: &str = "test-secret-test-secret-test-secret-0001";

/// Checks on, with the tests' keys and secret, no rate limits and no
/// write budgets.
pub fn test_auth() -> AuthConfig {
    let keys = [
        ("admin", "write,read,admin", ADMIN_KEY),
        ("writer", "write", WRITE_KEY),
        ("reader", "read", READ_KEY),
        ("ops", "admin", OPS_KEY),
        ("follower", "firehose", FIREHOSE_KEY),
    ]
    .map(|(name, scopes, key)| StoredKey::line(name, Scopes::parse(scopes).unwrap(), key))
    .join(";");
    AuthConfig {
        checks: true,
        api_keys: Source {
            file: None,
            text: Some(keys),
        },
        token_secrets: Source {
            file: None,
            text: Some(TOKEN_SECRET.into()),
        },
        public_reads: true,
        rates: Rates {
            per_user: 0,
            per_key: 0,
        },
        budgets: BudgetConfig {
            user: Quota::default(),
            key: Quota::default(),
        },
    }
}

/// A user token for `user`, valid for an hour.
pub fn token_for(user: &str) -> String {
    socialite_api::auth::tokens::mint(TOKEN_SECRET.as_bytes(), user, Duration::from_secs(3600))
        .unwrap()
}

/// An HTTP client that sends `credential` with every request.
pub fn client_with(credential: &str) -> Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {credential}").parse().unwrap(),
    );
    Client::builder().default_headers(headers).build().unwrap()
}

/// gRPC clients whose calls carry `credential` (none if empty).
pub async fn clients_as(
    t: &TestApp,
    credential: &str,
) -> (
    socialite_proto::v1::ingest_client::IngestClient<socialite_bench::target::Authed>,
    socialite_proto::v1::reads_client::ReadsClient<socialite_bench::target::Authed>,
) {
    clients_as_at(&t.grpc, credential).await
}

/// [`clients_as`] for the gRPC server at `grpc` (`http://HOST:PORT`).
pub async fn clients_as_at(
    grpc: &str,
    credential: &str,
) -> (
    socialite_proto::v1::ingest_client::IngestClient<socialite_bench::target::Authed>,
    socialite_proto::v1::reads_client::ReadsClient<socialite_bench::target::Authed>,
) {
    let channel = tonic::transport::Channel::from_shared(grpc.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let credential = Some(credential).filter(|c| !c.is_empty());
    let bearer = socialite_bench::target::Bearer::new(credential).unwrap();
    (
        socialite_proto::v1::ingest_client::IngestClient::with_interceptor(
            channel.clone(),
            bearer.clone(),
        ),
        socialite_proto::v1::reads_client::ReadsClient::with_interceptor(channel, bearer),
    )
}

/// The fanout group of the app over `dir`: its own, so apps of other tests on
/// the same Kafka never share a group (a member that died with its test
/// would hold partitions of it), and the same across the app's restarts.
pub fn fanout_group(dir: &Path) -> String {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    format!("fanout-{}", name.trim_start_matches('.'))
}

pub fn config(dir: &Path, cache_size: usize) -> AppConfig {
    AppConfig {
        storage: BackendConfig::embedded(EmbeddedConfig {
            data_dir: dir.to_path_buf(),
            log_retention: 1_000_000,
            feed: FeedConfig {
                cache_size,
                ..FeedConfig::default()
            },
            bulk: false,
        }),
        worker: WorkerConfig {
            group: fanout_group(dir),
            batch: 500,
            ..WorkerConfig::default()
        },
        node_id: 0,
        auth: test_auth(),
        cors_origins: Vec::new(),
        ops_addr: None,
        // The read guard holds writes back by the reads' measured latency,
        // which on a shared test machine is anyone's: tests that write
        // quickly while reading would be refused at random. Its own test
        // turns it on (tests/tests/overload.rs).
        // Shedding by fanout's lag likewise: under a busy test run a debug
        // build's fanout can fall seconds behind, and writes of tests about
        // anything else would be shed. Its own tests set a target
        // (tests/tests/overload.rs).
        limits: socialite_api::limits::Limits {
            reads_first: socialite_core::reads_first::ReadsFirstConfig::OFF,
            freshness_target: std::time::Duration::ZERO,
            ..Default::default()
        },
        // A deadline no test machine misses (tests of the deadline set
        // their own).
        ranking: socialite_core::reads::ranked::Ranking {
            deadline: std::time::Duration::from_secs(60),
            ..Default::default()
        },
        // Test receivers listen on loopback; retries come quickly. The
        // refusal of internal addresses has its own test.
        webhooks: socialite_core::webhooks::WebhookConfig {
            allow_internal: true,
            schedule: socialite_core::webhooks::schedule::Schedule::parse("200ms,400ms,800ms")
                .unwrap(),
            timeout: std::time::Duration::from_secs(3),
            ..Default::default()
        },
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(50).await
}

pub async fn spawn_app_with(cache_size: usize) -> TestApp {
    spawn_app_in(tempfile::tempdir().unwrap(), cache_size).await
}

/// The app over an existing data directory.
pub async fn spawn_app_in(dir: tempfile::TempDir, cache_size: usize) -> TestApp {
    spawn(dir, cache_size, |_| {}).await
}

/// The app with the tests' settings changed by `tweak`.
pub async fn spawn_app_configured(tweak: fn(&mut AppConfig)) -> TestApp {
    spawn(tempfile::tempdir().unwrap(), 50, tweak).await
}

async fn spawn(dir: tempfile::TempDir, cache_size: usize, tweak: fn(&mut AppConfig)) -> TestApp {
    let mut t = TestApp {
        app: None,
        base: String::new(),
        grpc: String::new(),
        http: client_with(ADMIN_KEY),
        dir,
        cache_size,
        ops: None,
        tweak,
    };
    t.start().await;
    t
}

impl TestApp {
    pub async fn start(&mut self) {
        let rest = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut config = config(self.dir.path(), self.cache_size);
        (self.tweak)(&mut config);
        let app = start(&Service::ALL, &config, rest, Some(grpc))
            .await
            .unwrap();
        self.base = format!("http://{}", app.rest_addr);
        self.ops = app.ops_addr.map(|a| format!("http://{a}"));
        self.grpc = format!("http://{}", app.grpc_addr.expect("gRPC is served"));
        self.app = Some(app);
    }

    /// Stops the app in order and starts it again over the same data.
    pub async fn restart(&mut self) {
        self.app.take().unwrap().shutdown().await;
        self.start().await;
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{}{}", self.base, path));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None).await
    }

    /// Reads `path` (200) until `done` holds of the answer, or a deadline
    /// passes: fanout and notifications are applied asynchronously.
    pub async fn eventually_get(&self, path: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let (s, v) = self.get(path).await;
            assert_eq!(s, StatusCode::OK, "{v}");
            if done(&v) || std::time::Instant::now() > deadline {
                return v;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    pub async fn put_user(&self, id: &str) {
        let (s, b) = self.call(Method::PUT, &format!("/users/{id}"), None).await;
        assert!(s.is_success(), "PUT /users/{id}: {s} {b}");
    }

    pub async fn follow(&self, user: &str, target: &str) {
        let (s, b) = self
            .call(
                Method::PUT,
                &format!("/users/{user}/following/{target}"),
                None,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{user} follows {target}: {b}");
    }

    pub async fn unfollow(&self, user: &str, target: &str) {
        let (s, b) = self
            .call(
                Method::DELETE,
                &format!("/users/{user}/following/{target}"),
                None,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{user} unfollows {target}: {b}");
    }

    /// Posts and returns the new post id.
    pub async fn post(&self, author: &str, message: &str) -> String {
        let (s, b) = self
            .call(
                Method::POST,
                &format!("/users/{author}/posts"),
                Some(json!({ "message": message })),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "post by {author}: {b}");
        b["id"].as_str().unwrap().to_owned()
    }

    pub async fn delete(&self, path: &str) {
        let (s, b) = self.call(Method::DELETE, path, None).await;
        assert_eq!(s, StatusCode::NO_CONTENT, "DELETE {path}: {b}");
    }

    /// One timeline page: post ids, next cursor, and the source header.
    pub async fn timeline_page(
        &self,
        user: &str,
        limit: usize,
        before: Option<&str>,
    ) -> (Vec<String>, Option<String>, String) {
        let mut url = format!("{}/users/{user}/timeline?limit={limit}", self.base);
        if let Some(b) = before {
            url.push_str(&format!("&before={b}"));
        }
        let resp = self.http.get(url).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let source = resp.headers()["x-timeline-source"]
            .to_str()
            .unwrap()
            .to_owned();
        let body: Value = resp.json().await.unwrap();
        (
            ids(&body["posts"]),
            body["next_cursor"].as_str().map(str::to_owned),
            source,
        )
    }

    /// The whole timeline, paging with `limit`.
    pub async fn timeline(&self, user: &str, limit: usize) -> Vec<String> {
        let mut all = Vec::new();
        let mut before: Option<String> = None;
        loop {
            let (page, next, _) = self.timeline_page(user, limit, before.as_deref()).await;
            assert!(page.len() <= limit);
            all.extend(page);
            match next {
                Some(n) => before = Some(n),
                None => return all,
            }
        }
    }

    /// Waits until every acknowledged write has been relayed and fanned out.
    pub async fn wait_idle(&self) {
        let b = &self.app.as_ref().unwrap().backends;
        eventually("the pipeline to drain", || async {
            let outbox_empty = b.outbox.pending(1).await.unwrap().is_empty();
            let backlog = b
                .log
                .consumer(&fanout_group(self.dir.path()))
                .await
                .unwrap()
                .backlog()
                .await
                .unwrap();
            outbox_empty && backlog == 0
        })
        .await;
    }

    /// Whether the user has a timeline cache.
    pub async fn is_active(&self, user: &str) -> bool {
        let b = &self.app.as_ref().unwrap().backends;
        let id = socialite_core::ids::UserId::parse(user).unwrap();
        let home = socialite_core::ids::TimelineId::home(&id);
        b.timelines.coverage(&home).await.unwrap().is_some()
    }
}

pub fn ids(posts: &Value) -> Vec<String> {
    posts
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Polls a check until it holds, failing after the testkit's deadline (as
/// long as [`DEADLINE`]).
pub use socialite_testkit::eventually;

/// Newest first, as timelines are.
pub fn newest_first(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids.reverse();
    ids
}

/// A user token signed the way any backend's JWT library signs one.
pub fn hs256(claims: &Value) -> String {
    use base64ct::{Base64UrlUnpadded, Encoding};
    use hmac::{Hmac, Mac};
    let header = Base64UrlUnpadded::encode_string(br#"{"alg":"HS256","typ":"JWT"}"#);
    let body = Base64UrlUnpadded::encode_string(claims.to_string().as_bytes());
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(TOKEN_SECRET.as_bytes()).unwrap();
    mac.update(format!("{header}.{body}").as_bytes());
    let sig = Base64UrlUnpadded::encode_string(&mac.finalize().into_bytes());
    format!("{header}.{body}.{sig}")
}

/// The production topology in one test: a writing process (producer and
/// fanout worker) and a reading one (timeline API) sharing MongoDB and
/// Kafka stand-ins, under names of their own.
pub struct Split {
    pub writer: App,
    pub reader: App,
    /// The REST bases of the writer and the reader.
    pub w: String,
    pub r: String,
    /// What both were started with, for more processes beside them.
    pub config: AppConfig,
    _dir: tempfile::TempDir,
}

pub async fn split_on(servers: &servers::Servers, name: &str, partitions: u32) -> Split {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 20);
    config.storage.store = servers.mongodb_uri(&servers::Servers::unique(name));
    config.storage.event_log = servers.kafka_uri(&servers::Servers::unique(name), partitions);
    let listen = || async { tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap() };
    let writes = [Service::Producer, Service::FanoutWorker];
    let writer = start(&writes, &config, listen().await, None).await.unwrap();
    let reader = start(&[Service::TimelineApi], &config, listen().await, None)
        .await
        .unwrap();
    Split {
        w: format!("http://{}", writer.rest_addr),
        r: format!("http://{}", reader.rest_addr),
        writer,
        reader,
        config,
        _dir: dir,
    }
}

/// A whole export stream: the header, `lines`, and the end line that
/// counts them.
pub fn export_stream(lines: &[String]) -> String {
    let mut out = vec![
        json!({"kind": "header", "format": "socialite-export", "version": 2, "exported_at_ms": 1})
            .to_string(),
    ];
    out.extend(lines.iter().cloned());
    out.push(json!({"kind": "end", "records": lines.len()}).to_string());
    out.join("\n") + "\n"
}
