//! The production topology, process by process, on Kafka and MongoDB (see
//! `common/servers.rs`): the producer, two fanout workers in one consumer
//! group and the timeline-api, each its own binary. Posts fan out while one
//! worker is killed with SIGKILL mid-stream: every acknowledged post reaches
//! every active follower's cache exactly once, because the survivor takes
//! over the dead worker's partitions and replays what it had not committed.

mod common;

use common::process::send_as_client;
use common::servers::Servers;
use common::{client_with, test_auth, ADMIN_KEY};
use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span as ExportedSpan;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use socialite_e2e::tls::TlsServers;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

// Enough for the doomed worker to die holding work it has not committed,
// with posts of its partitions still to come; more only made the test
// longer (the MongoDB stand-in applies a follow or a post's deliveries in
// tens of milliseconds each).
const AUTHORS: usize = 12;
const READERS: usize = 24;
/// A multiple of AUTHORS: each writes as many.
const POSTS: usize = 144;
/// The worker is killed after this many posts.
const KILL_AFTER: usize = 48;

/// The service binaries, compiled from their packages' sources as binaries
/// of this test package (see tests/Cargo.toml), so built before the tests:
/// the path of the one a package names.
fn service_binary(package: &str) -> PathBuf {
    PathBuf::from(match package {
        "socialite" => env!("CARGO_BIN_EXE_e2e-socialite"),
        "socialite-producer" => env!("CARGO_BIN_EXE_e2e-socialite-producer"),
        "socialite-fanout-worker" => env!("CARGO_BIN_EXE_e2e-socialite-fanout-worker"),
        "socialite-timeline-api" => env!("CARGO_BIN_EXE_e2e-socialite-timeline-api"),
        other => panic!("no service binary {other}"),
    })
}

fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// A child process, killed when the test ends however it ends.
struct Service {
    name: &'static str,
    child: Child,
    log: PathBuf,
    /// The address serving /readyz.
    http: String,
}

impl Service {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Topology {
    dir: tempfile::TempDir,
    store: String,
    event_log: String,
    /// The workers' consumer group, of this test alone.
    group: String,
    /// More environment for every process.
    env: Vec<(&'static str, String)>,
}

impl Topology {
    fn spawn(&self, name: &'static str, binary: &str, args: &[&str], http: String) -> Service {
        let data = self.dir.path().join(name);
        let log = self.dir.path().join(format!("{name}.log"));
        let child = Command::new(service_binary(binary))
            .args(args)
            .args(["--store", &self.store, "--event-log", &self.event_log])
            .arg("--data-dir")
            .arg(&data)
            .args(["--cache-size", "500"])
            .env("RUST_LOG", "info,librdkafka=warn,rdkafka=warn")
            .env("SOCIALITE_FANOUT_GROUP", &self.group)
            // The services read their keys from their settings.
            .env("SOCIALITE_API_KEYS", test_auth().api_keys.text.unwrap())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {binary}: {e}"));
        Service {
            name,
            child,
            log,
            http,
        }
    }
}

async fn wait_ready(http: &Client, services: &[&Service]) {
    for s in services {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ok = http
                .get(format!("http://{}/readyz", s.http))
                .send()
                .await
                .is_ok_and(|r| r.status() == StatusCode::OK);
            if ok {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} never became ready; its log:\n{}",
                s.name,
                s.log_text()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Sends as a well-behaved client does (a shed write is sent again after
/// its `Retry-After`: a worker just killed leaves fanout behind), and
/// insists on success.
async fn send(http: &Client, method: reqwest::Method, url: String, body: Option<Value>) -> Value {
    let (status, v) = send_as_client(http, method.clone(), &url, body.as_ref()).await;
    assert!(status.is_success(), "{method} {url}: {status} {v}");
    v
}

/// A reader's whole timeline through the timeline-api, and whether the
/// first page came from the cache.
async fn timeline(http: &Client, api: &str, user: &str) -> (Vec<String>, String) {
    let resp = http
        .get(format!("http://{api}/users/{user}/timeline?limit=200"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let source = resp.headers()["x-timeline-source"]
        .to_str()
        .unwrap()
        .to_owned();
    let body: Value = resp.json().await.unwrap();
    let ids = body["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, source)
}

fn follows(reader: usize) -> [usize; 3] {
    [
        reader % AUTHORS,
        (reader + 3) % AUTHORS,
        (reader + 7) % AUTHORS,
    ]
}

/// The partitions of the posts topic named by the last assignment a worker logged.
fn last_assigned_posts_partitions(log: &str) -> usize {
    log.lines()
        .rfind(|l| l.contains("partitions assigned"))
        .map_or(0, |l| l.matches(".posts/").count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_loses_nothing_and_duplicates_nothing() {
    let Some(servers) = Servers::from_env("a_killed_worker_loses_nothing_and_duplicates_nothing")
    else {
        return;
    };
    let store = servers.mongodb_uri(&Servers::unique("e2e"));
    let log = servers.kafka_uri(&Servers::unique("e2e"), 4);
    a_worker_killed_mid_stream(store, log).await;
}

/// The same, every process reaching Kafka and MongoDB through TLS with a
/// client certificate (see `socialite_e2e::tls`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_loses_nothing_over_tls() {
    let Some(tls) = TlsServers::start("a_killed_worker_loses_nothing_over_tls") else {
        return;
    };
    let store = tls.mongodb_uri(&Servers::unique("e2e_tls"));
    let log = tls.kafka_uri(&Servers::unique("e2e_tls"), 4);
    a_worker_killed_mid_stream(store, log).await;
}

async fn a_worker_killed_mid_stream(store: String, event_log: String) {
    let topo = Topology {
        dir: tempfile::tempdir().unwrap(),
        store: store.clone(),
        // tansu 0.6 keeps a dead member's assignment; the workers' opt-in
        // watch for unconsumed partitions recovers them (Kafka needs none).
        // Both after 3 s, not the 10 s of a session's default: the dead
        // worker's partitions move sooner, and nothing else changes.
        event_log: format!("{event_log}&stale_partition_rejoin_ms=3000&session_timeout_ms=3000"),
        group: Servers::unique("fanout"),
        env: Vec::new(),
    };
    let (p_rest, api_rest) = (free_addr(), free_addr());
    let producer = topo.spawn(
        "producer",
        "socialite-producer",
        &[
            "--rest-addr",
            &p_rest,
            "--grpc-addr",
            &free_addr(),
            "--node-id",
            "1",
        ],
        p_rest.clone(),
    );
    // The first process creates the topics and indexes; then the rest start.
    let http = client_with(ADMIN_KEY);
    wait_ready(&http, &[&producer]).await;
    let api = topo.spawn(
        "timeline-api",
        "socialite-timeline-api",
        &["--rest-addr", &api_rest, "--grpc-addr", &free_addr()],
        api_rest.clone(),
    );
    let worker = |name: &'static str| {
        let ops = free_addr();
        topo.spawn(
            name,
            "socialite-fanout-worker",
            &["--ops-addr", &ops, "--fanout-batch", "20"],
            ops.clone(),
        )
    };
    let mut doomed = worker("worker-a");
    let survivor = worker("worker-b");
    // The accounts and follows, through the producer while the others start
    // (the workers take the follow events once they hold the partitions).
    let p = |path: String| format!("http://{p_rest}{path}");
    let put = |path: String| send(&http, reqwest::Method::PUT, p(path), None);
    join_all((0..AUTHORS).map(|a| put(format!("/users/author{a}")))).await;
    join_all((0..READERS).map(|r| async move {
        put(format!("/users/reader{r}")).await;
        for a in follows(r) {
            put(format!("/users/reader{r}/following/author{a}")).await;
        }
    }))
    .await;
    wait_ready(&http, &[&api, &doomed, &survivor]).await;
    // Both workers hold a share of the partitions before the stream starts.
    let deadline = Instant::now() + Duration::from_secs(60);
    while last_assigned_posts_partitions(&doomed.log_text()) == 0
        || last_assigned_posts_partitions(&survivor.log_text()) == 0
        || last_assigned_posts_partitions(&doomed.log_text())
            + last_assigned_posts_partitions(&survivor.log_text())
            != 4
    {
        assert!(
            Instant::now() < deadline,
            "the workers never shared the partitions:\n{}\n{}",
            doomed.log_text(),
            survivor.log_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A first read makes a reader active: fanout writes to their cache.
    let (client, api) = (&http, api_rest.as_str());
    join_all((0..READERS).map(|r| async move {
        timeline(client, api, &format!("reader{r}")).await;
    }))
    .await;

    let mut by_author: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for i in 0..POSTS {
        let a = (i * 7) % AUTHORS;
        let body = send(
            &http,
            reqwest::Method::POST,
            p(format!("/users/author{a}/posts")),
            Some(json!({ "message": format!("post {i}") })),
        )
        .await;
        by_author
            .entry(a)
            .or_default()
            .push(body["id"].as_str().unwrap().to_owned());
        if i + 1 == KILL_AFTER {
            doomed.child.kill().unwrap(); // SIGKILL: no goodbye to the group
            doomed.child.wait().unwrap();
        }
    }

    // Every reader's timeline ends up holding exactly their authors' posts,
    // newest first, served from the cache. Until the survivor has taken the
    // killed worker's partitions, a read past the freshness target merges
    // what fanout has not delivered: such a page is already whole.
    let expected = |r: usize| {
        let mut ids: Vec<String> = follows(r)
            .iter()
            .flat_map(|a| by_author[a].clone())
            .collect();
        ids.sort();
        ids.reverse();
        ids
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    for r in 0..READERS {
        loop {
            let (got, source) = timeline(&http, &api_rest, &format!("reader{r}")).await;
            if source == "late" {
                assert_eq!(got, expected(r), "reader{r}, merged late");
            }
            if got == expected(r) && source == "cache" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "reader{r}: {} of {} posts; survivor's log:\n{}",
                got.len(),
                expected(r).len(),
                survivor.log_text()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    assert_eq!(
        last_assigned_posts_partitions(&survivor.log_text()),
        4,
        "the survivor holds every partition"
    );

    // The stored caches themselves hold no duplicate (reads would hide one).
    let store = socialite_mongo::Db::connect(&store).await.unwrap();
    let caches: Vec<Document> = store
        .timelines
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(caches.len(), READERS);
    for cache in &caches {
        let entries = cache.get_array("entries").unwrap();
        let ids: BTreeSet<i64> = entries
            .iter()
            .map(|e| e.as_document().unwrap().get_i64("p").unwrap())
            .collect();
        assert_eq!(
            ids.len(),
            entries.len(),
            "duplicate entries in {:?}",
            cache.get("_id")
        );
        assert_eq!(entries.len(), 3 * POSTS / AUTHORS, "{:?}", cache.get("_id"));
    }
    drop(producer);
}

/// A tansu broker of the test's own, on a fixed port and data file, so it
/// can be stopped and started again.
struct Broker {
    bin: String,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    /// While the broker is down, its port, held by a listener that never
    /// answers (an outage as a hung broker makes it): no other test's
    /// server (which takes any free port) can start there and take the
    /// producer's appends in the broker's stead.
    held: Option<std::net::TcpListener>,
}

impl Broker {
    fn start(&mut self) {
        self.held = None;
        let url = format!("tcp://127.0.0.1:{}", self.port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("tansu.log"))
            .unwrap();
        // tansu takes the SQLite path relative to its working directory.
        let child = Command::new(&self.bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
            ])
            .args(["--storage-engine", "sqlite://tansu.db"])
            .current_dir(&self.dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting tansu");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "tansu did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
            let held = std::net::TcpListener::bind(("127.0.0.1", self.port))
                .expect("the stopped broker's port is free");
            self.held = Some(held);
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The producer acknowledges a post once MongoDB holds it with its event in
/// the outbox, so a Kafka outage delays fanout but loses nothing: the relay
/// retries until the broker is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_acknowledged_while_kafka_is_down_reach_the_timelines() {
    let test = "posts_acknowledged_while_kafka_is_down_reach_the_timelines";
    let Some(servers) = Servers::from_env(test) else {
        return;
    };
    let Some(bin) = servers.tansu.clone() else {
        if std::env::var("SOCIALITE_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("{test}: SOCIALITE_TEST_TANSU is unset");
        }
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: set SOCIALITE_TEST_TANSU to the tansu binary"
        );
        return;
    };
    if std::env::var_os("RUST_LOG").is_some() {
        socialite_runtime::telemetry::init_logging(false);
    }
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut broker = Broker {
        bin,
        dir: dir.path().to_path_buf(),
        port,
        child: None,
        held: None,
    };
    broker.start();

    let mut storage =
        socialite_runtime::backends::BackendConfig::embedded(socialite_embedded::EmbeddedConfig {
            data_dir: dir.path().join("app"),
            log_retention: 1_000_000,
            feed: Default::default(),
            bulk: false,
        });
    storage.store = servers.mongodb_uri(&Servers::unique("outage"));
    // The producer gives up on an event after 3 s, not 15: the test waits
    // for an append to fail.
    storage.event_log = format!(
        "kafka://127.0.0.1:{port}?partitions=2&topic_prefix={}&delivery_timeout_ms=3000",
        Servers::unique("outage")
    );
    let config = socialite_runtime::AppConfig {
        storage,
        worker: socialite_core::worker::WorkerConfig::default(),
        node_id: 5,
        auth: test_auth(),
        cors_origins: Vec::new(),
        ops_addr: None,
        limits: Default::default(),
        ranking: Default::default(),
        webhooks: Default::default(),
    };
    let rest = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let app = socialite_runtime::start(&socialite_runtime::Service::ALL, &config, rest, Some(grpc))
        .await
        .unwrap();
    let base = app.rest_addr.to_string();
    let http = client_with(ADMIN_KEY);
    let url = |path: &str| format!("http://{base}{path}");
    send(&http, reqwest::Method::PUT, url("/users/alice"), None).await;
    send(&http, reqwest::Method::PUT, url("/users/bob"), None).await;
    send(
        &http,
        reqwest::Method::PUT,
        url("/users/bob/following/alice"),
        None,
    )
    .await;
    timeline(&http, &base, "bob").await; // bob is active from now on
    let post = |m: &str| {
        let (http, url) = (http.clone(), url("/users/alice/posts"));
        let body = json!({ "message": m });
        async move {
            let b = send(&http, reqwest::Method::POST, url, Some(body)).await;
            b["id"].as_str().unwrap().to_owned()
        }
    };
    let wait_for = |want: Vec<String>| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                let (got, _) = timeline(&http, &base, "bob").await;
                if got == want {
                    return;
                }
                let m = socialite_core::metrics::metrics();
                assert!(
                    Instant::now() < deadline,
                    "bob sees {got:?}, expected {want:?}; events relayed {}, failed appends {}, log backlog {}",
                    m.events_published.get(),
                    m.event_publish_failures.get(),
                    m.log_backlog.get()
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    let first = post("before the outage").await;
    wait_for(vec![first.clone()]).await;

    broker.kill();
    let during = [
        post("during the outage 1").await,
        post("during the outage 2").await,
    ];
    // Acknowledged, and waiting in the outbox while the log is away: longer
    // than the producer's delivery timeout, so the relay's append fails and
    // is retried from the outbox.
    let failures = || {
        socialite_core::metrics::metrics()
            .event_publish_failures
            .get()
    };
    let failed_before = failures();
    // (librdkafka gives up on a message after the delivery timeout, 3 s here.)
    let deadline = Instant::now() + Duration::from_secs(45);
    while failures() == failed_before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        failures() > failed_before,
        "the relay's append failed and will be retried"
    );
    assert!(
        app.backends.outbox.backlog().await.unwrap() >= 2,
        "the events wait in the outbox"
    );
    // The source tells a stored page that fanout changed from a read-time
    // merge, which reads the content store and so sees the posts at once.
    let (seen, source) = timeline(&http, &base, "bob").await;
    assert_eq!(seen, vec![first.clone()], "bob's page, from {source}");

    broker.start();
    wait_for(vec![during[1].clone(), during[0].clone(), first]).await;
    app.shutdown().await;
}

/// A service started with a CA that did not sign the broker's certificate
/// stops within seconds, saying which setting to change, instead of
/// retrying behind a ready probe; the SASL password it was given is not in
/// what it prints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_tls_handshake_stops_the_start() {
    let test = "a_refused_tls_handshake_stops_the_start";
    let Some(tls) = TlsServers::start(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let password = dir.path().join("kafka-password");
    std::fs::write(&password, "hunter2-do-not-print").unwrap();
    let topo = Topology {
        store: tls.mongodb_uri(&Servers::unique("refused")),
        event_log: format!(
            "kafka://{}?tls_ca_file={}&sasl_mechanism=PLAIN&sasl_username=app&sasl_password_file={}",
            tls.kafka,
            tls.other_ca.display(),
            password.display()
        ),
        group: Servers::unique("fanout"),
        env: Vec::new(),
        dir,
    };
    let rest = free_addr();
    let mut producer = topo.spawn(
        "producer",
        "socialite-producer",
        &["--rest-addr", &rest, "--grpc-addr", &free_addr()],
        rest.clone(),
    );
    let deadline = Instant::now() + Duration::from_secs(40);
    let status = loop {
        if let Some(status) = producer.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running:\n{}",
            producer.log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let log = producer.log_text();
    assert!(!status.success(), "{log}");
    assert!(log.contains("tls_ca_file"), "{log}");
    assert!(!log.contains("hunter2"), "{log}");
}

/// Spans an in-process OTLP receiver got, with the service that sent each.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, ExportedSpan)>>>;

struct Receiver(Received);

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut got = self.0.lock().unwrap();
        for resource in request.into_inner().resource_spans {
            let service = resource
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|a| a.key == "service.name")
                .and_then(|a| a.value.as_ref())
                .and_then(|v| match &v.value {
                    Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            for scope in resource.scope_spans {
                for span in scope.spans {
                    got.push((service.clone(), span));
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// An OTLP receiver in this process: its endpoint and what it receives.
async fn otlp_receiver() -> (String, Received) {
    let received = Received::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let otlp = format!("http://{}", listener.local_addr().unwrap());
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(Receiver(received.clone())))
            .serve_with_incoming(incoming),
    );
    (otlp, received)
}

/// The environment that turns trace export on, to `otlp`.
fn tracing_env(otlp: String) -> Vec<(&'static str, String)> {
    vec![
        ("SOCIALITE_OTLP_ENDPOINT", otlp),
        // Spans leave every 200 ms instead of every 5 s.
        ("OTEL_BSP_SCHEDULE_DELAY", "200".into()),
        ("RUST_LOG", "info,socialite_core::worker=debug".into()),
    ]
}

/// One post is one trace across processes: the producer's `post.create`
/// span and its store round trip, then, in the worker (another process,
/// over Kafka), a `fanout.deliver` span in the same trace; the worker's
/// batch span links to the post, and its store round trips are its
/// children. The worker's log lines name the batch's trace id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_is_one_trace_from_the_producer_to_the_worker() {
    let test = "a_post_is_one_trace_from_the_producer_to_the_worker";
    let Some(servers) = Servers::from_env(test) else {
        return;
    };
    let (otlp, received) = otlp_receiver().await;
    let topo = Topology {
        dir: tempfile::tempdir().unwrap(),
        store: servers.mongodb_uri(&Servers::unique("traces")),
        event_log: format!(
            "{}&stale_partition_rejoin_ms=10000",
            servers.kafka_uri(&Servers::unique("traces"), 2)
        ),
        group: Servers::unique("fanout"),
        env: tracing_env(otlp),
    };
    let rest = free_addr();
    let producer = topo.spawn(
        "producer",
        "socialite-producer",
        &["--rest-addr", &rest, "--grpc-addr", &free_addr()],
        rest.clone(),
    );
    let http = client_with(ADMIN_KEY);
    wait_ready(&http, &[&producer]).await;
    let ops = free_addr();
    let worker = topo.spawn(
        "worker",
        "socialite-fanout-worker",
        &["--ops-addr", &ops],
        ops.clone(),
    );
    wait_ready(&http, &[&worker]).await;
    let names = ("socialite-producer", "socialite-fanout-worker");
    assert_post_traced(&received, &rest, names, &worker).await;
}

/// The same in the all-in-one process on the embedded default, whose store
/// writes on a thread of its own and whose log is embedded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_is_one_trace_on_the_embedded_default() {
    let (otlp, received) = otlp_receiver().await;
    let topo = Topology {
        dir: tempfile::tempdir().unwrap(),
        store: "embedded://".into(),
        event_log: "embedded://".into(),
        group: Servers::unique("fanout"),
        env: tracing_env(otlp),
    };
    let rest = free_addr();
    let up = ["up", "--rest-addr", &rest, "--grpc-addr", &free_addr()];
    let socialite = topo.spawn("socialite", "socialite", &up, rest.clone());
    wait_ready(&client_with(ADMIN_KEY), &[&socialite]).await;
    assert_post_traced(&received, &rest, ("socialite", "socialite"), &socialite).await;
}

/// A caller's `traceparent` is continued only as W3C Trace Context lets
/// it be: version `ff`, upper-case hex and ids of zeros start a new trace;
/// a later version is read for the fields version 00 has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_trace_is_continued_only_where_w3c_allows_it() {
    let (otlp, received) = otlp_receiver().await;
    let topo = Topology {
        dir: tempfile::tempdir().unwrap(),
        store: "embedded://".into(),
        event_log: "embedded://".into(),
        group: Servers::unique("fanout"),
        env: tracing_env(otlp),
    };
    let rest = free_addr();
    let up = ["up", "--rest-addr", &rest, "--grpc-addr", &free_addr()];
    let socialite = topo.spawn("socialite", "socialite", &up, rest.clone());
    let http = client_with(ADMIN_KEY);
    wait_ready(&http, &[&socialite]).await;
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let span = "b7ad6b7169203331";
    // (request id, traceparent, whether the request joins the caller's trace)
    let cases = [
        ("w3c-ok", format!("00-{trace}-{span}-01"), true),
        ("w3c-later", format!("7f-{trace}-{span}-01-more"), true),
        ("w3c-ff", format!("ff-{trace}-{span}-01"), false),
        (
            "w3c-upper",
            format!("00-{}-{span}-01", trace.to_uppercase()),
            false,
        ),
        (
            "w3c-zeros",
            format!("00-{trace}-0000000000000000-01"),
            false,
        ),
    ];
    for (id, traceparent, _) in &cases {
        let resp = http
            .get(format!("http://{rest}/users/nobody"))
            .header("x-request-id", *id)
            .header("traceparent", traceparent)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for (id, traceparent, joins) in &cases {
        let spans = loop {
            let got = received.lock().unwrap().clone();
            let of_request: Vec<ExportedSpan> = got
                .into_iter()
                .map(|(_, s)| s)
                .filter(|s| {
                    s.attributes.iter().any(|a| {
                        a.key == "request_id"
                            && a.value.as_ref().and_then(|v| v.value.as_ref())
                                == Some(&any_value::Value::StringValue((*id).into()))
                    })
                })
                .collect();
            if !of_request.is_empty() || Instant::now() > deadline {
                break of_request;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(!spans.is_empty(), "no span of {id}: {:?}", names(&received));
        let hex: String = spans[0]
            .trace_id
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex == trace, *joins, "{id} ({traceparent}): trace {hex}");
    }
}

/// Posts through `rest` and waits for the post's trace: `post.create` from
/// the service named first, `fanout.deliver` from the second, a batch
/// linked to it with a store span under it, and the batch's trace id in
/// the log of `worker`.
async fn assert_post_traced(
    received: &Received,
    rest: &str,
    services: (&str, &str),
    worker: &Service,
) {
    let http = client_with(ADMIN_KEY);
    let url = |path: &str| format!("http://{rest}{path}");
    for user in ["ann", "bob"] {
        send(
            &http,
            reqwest::Method::PUT,
            url(&format!("/users/{user}")),
            None,
        )
        .await;
    }
    send(
        &http,
        reqwest::Method::PUT,
        url("/users/bob/following/ann"),
        None,
    )
    .await;
    let body = Some(json!({ "message": "traced" }));
    let post = send(&http, reqwest::Method::POST, url("/users/ann/posts"), body).await;
    let post_id = post["id"].as_str().unwrap().to_owned();

    let deadline = Instant::now() + Duration::from_secs(60);
    let (trace, batch) = loop {
        if let Some(found) = post_trace(received, &post_id, services) {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "no trace joins the post's spans; got {:?}\nlog:\n{}",
            names(received),
            worker.log_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let got = received.lock().unwrap().clone();
    let store_under_producer = got.iter().any(|(service, s)| {
        service == services.0 && s.trace_id == trace && s.name.starts_with("content.")
    });
    assert!(store_under_producer, "no store span in the post's trace");
    let store_under_batch = got
        .iter()
        .any(|(_, s)| s.parent_span_id == batch.span_id && s.name.contains('.'));
    assert!(store_under_batch, "no store span under the batch");
    let hex: String = batch.trace_id.iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        worker.log_text().contains(&format!("trace_id={hex}")),
        "the log does not name the batch's trace {hex}:\n{}",
        worker.log_text()
    );
}

/// The post's trace id and the worker batch span that links to it, once
/// the producer's `post.create` and the worker's `fanout.deliver` for the
/// post are both in.
fn post_trace(
    received: &Received,
    post_id: &str,
    (producer, worker): (&str, &str),
) -> Option<(Vec<u8>, ExportedSpan)> {
    let got = received.lock().unwrap();
    let of_post = |s: &ExportedSpan| {
        s.attributes.iter().any(|a| {
            a.key == "post"
                && a.value.as_ref().and_then(|v| v.value.as_ref())
                    == Some(&any_value::Value::StringValue(post_id.to_owned()))
        })
    };
    let created = got
        .iter()
        .find(|(service, s)| service == producer && s.name == "post.create" && of_post(s))?;
    let trace = created.1.trace_id.clone();
    got.iter().find(|(service, s)| {
        service == worker && s.name == "fanout.deliver" && s.trace_id == trace && of_post(s)
    })?;
    let batch = got
        .iter()
        .find(|(_, s)| s.name == "fanout_batch" && s.links.iter().any(|l| l.trace_id == trace))?;
    Some((trace, batch.1.clone()))
}

fn names(received: &Received) -> Vec<(String, String)> {
    let got = received.lock().unwrap();
    got.iter()
        .map(|(sv, s)| (sv.clone(), s.name.clone()))
        .collect()
}
