//! Moving a running embedded deployment onto another store with
//! `socialite migrate`: under a load of every kind of write (posts and
//! their deletion, follows with lists, unfollows, mutes, blocks, groups,
//! profiles, suspensions, revocations, users deleted and made again), no
//! acknowledged write is lost and none is doubled, both sides verify equal,
//! the source refuses writes after the switch-over and after a restart,
//! and `--verify-only` compares again. Embedded → embedded always;
//! embedded → MongoDB + Kafka on the stand-ins.

mod common;

use clap::Parser;
use common::ports::{self, Kind};
use common::servers::Servers;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use socialite_core::backends::Backends;
use socialite_core::error::ErrorKind;
use socialite_core::ids::PostId;
use socialite_core::ids::TimelineId;
use socialite_core::ids::UserId;
use socialite_core::ingest::Ingest;
use socialite_core::ports::Backup;
use socialite_core::ports::CacheRead;
use socialite_core::reads::Reads;
use socialite_core::relay::relay_once;
use socialite_core::sim::Rng;
use socialite_core::transfer::catch_up::{Replayed, Target};
use socialite_core::transfer::import::copy_store;
use socialite_core::transfer::stream::Stream;
use socialite_core::transfer::verify::{compare_timelines, differing, sample, tally};
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::Relation;
use socialite_domain::transfer::record::Record;
use socialite_embedded::backup::{EmbeddedBackup, Position};
use socialite_runtime::backends::{open_backends, open_keeping_embedded, BackendConfig};
use socialite_runtime::migrate::{migrate, MigrateArgs};
use socialite_runtime::transfer::{embedded_config, MOVED};
use socialite_testkit::Opening;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const USERS: usize = 24;

/// `socialite migrate`'s arguments, as its command line gives them.
#[derive(clap::Parser)]
struct Cli {
    #[command(flatten)]
    args: MigrateArgs,
}

fn user(i: usize) -> String {
    format!("u{i}")
}

/// What the load had acknowledged when the source stopped taking writes.
#[derive(Default)]
struct Acked {
    /// Post id → author, of the posts standing.
    posts: BTreeMap<String, String>,
    deleted: BTreeSet<String>,
    writes: u64,
    refused_read_only: bool,
}

/// A seeded stream of writes of every kind against `base`, until the
/// deployment answers `read_only`; `pause` between writes.
async fn load(
    base: String,
    seed: u64,
    pause: Duration,
    acked: Arc<Mutex<Acked>>,
    stop: Arc<AtomicBool>,
) {
    let http = client_with(ADMIN_KEY);
    let mut rng = Rng::new(seed);
    let lists = [vec![], vec!["work"], vec!["close", "work"]];
    while !stop.load(Ordering::Relaxed) {
        let (a, b) = (user(rng.below(USERS)), user(rng.below(USERS)));
        let roll = rng.below(100);
        let (method, path, body) = match roll {
            0..=44 => (
                Method::POST,
                format!("/users/{a}/posts"),
                Some(json!({ "message": format!("hi @{b} {roll}") })),
            ),
            45..=49 => {
                let victim = acked.lock().unwrap().posts.keys().next_back().cloned();
                let Some(victim) = victim else { continue };
                (Method::DELETE, format!("/posts/{victim}"), None)
            }
            50..=61 => {
                let l = &lists[rng.below(3)];
                (
                    Method::PUT,
                    format!("/users/{a}/following/{b}"),
                    Some(json!({ "lists": l })),
                )
            }
            62..=66 => (Method::DELETE, format!("/users/{a}/following/{b}"), None),
            67..=70 => (Method::PUT, format!("/users/{a}/mutes/{b}"), None),
            71..=73 => (Method::DELETE, format!("/users/{a}/mutes/{b}"), None),
            74..=75 => (Method::PUT, format!("/users/{a}/blocks/{b}"), None),
            76..=78 => (Method::DELETE, format!("/users/{a}/blocks/{b}"), None),
            79..=83 => (
                Method::PUT,
                format!("/groups/g{}/members/{a}", rng.below(3)),
                None,
            ),
            84..=86 => (
                Method::DELETE,
                format!("/groups/g{}/members/{a}", rng.below(3)),
                None,
            ),
            87..=91 => (
                Method::PUT,
                format!("/users/{a}"),
                Some(json!({ "profile": { "n": roll, "by": b } })),
            ),
            92 => (Method::PUT, format!("/users/{a}/suspension"), None),
            93..=94 => (Method::DELETE, format!("/users/{a}/suspension"), None),
            95..=96 => (Method::DELETE, format!("/users/{a}/tokens"), None),
            97 => (Method::DELETE, format!("/users/{a}"), None),
            _ => {
                let liked = acked.lock().unwrap().posts.keys().next_back().cloned();
                let Some(liked) = liked else { continue };
                let method = if roll == 98 {
                    Method::PUT
                } else {
                    Method::DELETE
                };
                (method, format!("/users/{a}/likes/{liked}"), None)
            }
        };
        let mut req = http.request(method.clone(), format!("{base}{path}"));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let reply: Value = resp.json().await.unwrap_or_default();
        if status == StatusCode::SERVICE_UNAVAILABLE && reply["error"]["code"] == "read_only" {
            acked.lock().unwrap().refused_read_only = true;
            return;
        }
        assert!(
            !status.is_server_error(),
            "{method} {path}: {status} {reply}"
        );
        if status.is_success() {
            let mut acked = acked.lock().unwrap();
            acked.writes += 1;
            match (&method, roll) {
                (&Method::POST, _) => {
                    let id = reply["id"].as_str().unwrap().to_owned();
                    acked.posts.insert(id, a.clone());
                }
                (&Method::DELETE, 45..=49) => {
                    let id = path.trim_start_matches("/posts/").to_owned();
                    acked.posts.remove(&id);
                    acked.deleted.insert(id);
                }
                // A user's deletion deletes their posts.
                (&Method::DELETE, 97) => {
                    let gone: Vec<String> = acked
                        .posts
                        .iter()
                        .filter(|(_, author)| **author == a)
                        .map(|(id, _)| id.clone())
                        .collect();
                    for id in gone {
                        acked.posts.remove(&id);
                        acked.deleted.insert(id);
                    }
                }
                _ => {}
            }
        }
        tokio::time::sleep(pause).await;
    }
}

/// Every post id of a store (its export).
async fn post_ids(config: &BackendConfig) -> BTreeSet<String> {
    let backends = open_backends(config).await.unwrap();
    let mut stream = Stream::open(&*backends.transfer).await.unwrap();
    let mut ids = BTreeSet::new();
    loop {
        let page = stream.next(1000).await.unwrap();
        if page.is_empty() {
            return ids;
        }
        for r in page {
            if let Record::Post { post: p, .. } = r {
                ids.insert(p.id.to_string());
            }
        }
    }
}

/// Moves a deployment under load to `to` (with `event_log`), and checks.
/// `warm_kept`: the target keeps timelines beyond a process (MongoDB).
async fn moved_under_load(
    to: String,
    event_log: String,
    target: BackendConfig,
    pause: Duration,
    warm_kept: bool,
) {
    let mut t = spawn_app().await;
    for i in 0..USERS {
        t.put_user(&user(i)).await;
    }
    for i in 0..USERS {
        t.follow(&user(i), &user((i + 1) % USERS)).await;
        t.post(&user(i), "before the move").await;
    }
    let acked: Arc<Mutex<Acked>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = tokio::spawn(load(t.base.clone(), 7, pause, acked.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let from = format!("embedded://{}", t.dir.path().display());
    let args = |verify_only: bool, url: &str| {
        let mut argv = vec![
            "migrate",
            "--from",
            &from,
            "--to",
            &to,
            "--event-log",
            &event_log,
        ];
        argv.extend([
            "--url",
            url,
            "--api-key",
            ADMIN_KEY,
            "--sample",
            "24",
            "--batch",
            "100",
        ]);
        argv.extend(["--warm", "5", "--cache-size", "20"]);
        if verify_only {
            argv.push("--verify-only");
        }
        Cli::parse_from(argv).args
    };
    let moved = migrate(args(false, &t.base))
        .await
        .expect("the move verifies");
    assert!(
        moved.replayed.changed > 0,
        "writes made during the copy were carried over: {moved:?}"
    );
    // The load meets the stopped writes and ends.
    tokio::time::timeout(Duration::from_secs(30), writer)
        .await
        .expect("the load stops at the switch-over")
        .unwrap();
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    assert!(
        acked.refused_read_only,
        "the source refused writes after the switch-over"
    );
    assert!(
        acked.writes > 50,
        "a load ran during the move ({} writes)",
        acked.writes
    );

    // Nothing acknowledged lost, nothing deleted back, nothing doubled:
    // every post on the target was made before the move or acknowledged.
    let on_target = post_ids(&target).await;
    if warm_kept {
        let backends = open_backends(&target).await.unwrap();
        // The five who posted last, but for those deleted since.
        assert!((1..=5).contains(&moved.warmed.len()), "{:?}", moved.warmed);
        for u in &moved.warmed {
            let cache = backends
                .timelines
                .read(&TimelineId::home(u), None, 1)
                .await
                .unwrap();
            assert!(
                matches!(cache, CacheRead::Ready { .. }),
                "{u}'s timeline was built"
            );
        }
    }
    let missing: Vec<&String> = acked
        .posts
        .keys()
        .filter(|id| !on_target.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "acknowledged posts missing on the target: {missing:?}"
    );
    let back: Vec<&String> = acked.deleted.intersection(&on_target).collect();
    assert!(
        back.is_empty(),
        "deleted posts back on the target: {back:?}"
    );
    let source = embedded_config(t.dir.path());
    t.app.take().unwrap().shutdown().await;
    let on_source = post_ids(&BackendConfig::embedded(source.clone())).await;
    assert_eq!(
        on_target, on_source,
        "the same posts on both sides, once each"
    );
    for id in &on_target {
        PostId::parse(id).unwrap();
    }

    // The source takes no writes, also once restarted; it still reads.
    assert!(t.dir.path().join(MOVED).exists());
    t.start().await;
    let (s, reply) = t
        .call(
            Method::POST,
            "/users/u1/posts",
            Some(json!({ "message": "late" })),
        )
        .await;
    assert_eq!(
        (s, reply["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("read_only"))
    );
    let (s, _) = t.call(Method::GET, "/users/u1/timeline", None).await;
    assert_eq!(s, StatusCode::OK);
    // Safety acts too, saying where to make them.
    let (s, reply) = t.call(Method::DELETE, "/users/u1/tokens", None).await;
    assert_eq!(
        (s, reply["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("moved"))
    );
    let told = reply["error"]["message"].as_str().unwrap();
    let host = socialite_core::redact::uri(&to);
    assert!(told.contains(&host), "{told} names {host}");
    migrate(args(true, &t.base))
        .await
        .expect("--verify-only compares equal again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_to_another_embedded_directory_under_load_loses_and_doubles_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("moved");
    let to = format!("embedded://{}", moved.display());
    let target = BackendConfig::embedded(embedded_config(&moved));
    moved_under_load(
        to,
        "embedded://".into(),
        target,
        Duration::from_millis(1),
        false,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_to_mongodb_and_kafka_under_load_loses_and_doubles_nothing() {
    let test = "a_move_to_mongodb_and_kafka_under_load_loses_and_doubles_nothing";
    let Some((to, log, target, _dir)) = mongodb_kafka_target(test, "migrate") else {
        return;
    };
    // The stand-in writes a few hundred records a second: a lighter load.
    moved_under_load(to, log, target, Duration::from_millis(20), true).await;
}

/// Stopping writes is the operators' act, and a stop returns once the
/// writes under way are done; writes come back when it is lifted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_admin_key_stops_and_resumes_writes() {
    let t = spawn_app().await;
    t.put_user("alice").await;
    let stop = json!({ "read_only": true });
    for key in [WRITE_KEY, READ_KEY] {
        let resp = client_with(key)
            .put(format!("{}/admin/read-only", t.base))
            .json(&stop)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    }
    let resp = reqwest::Client::new()
        .put(format!("{}/admin/read-only", t.base))
        .bearer_auth(token_for("alice"))
        .json(&stop)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let (s, reply) = t
        .call(Method::PUT, "/admin/read-only", Some(json!({})))
        .await;
    assert_eq!(
        (s, reply["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_body"))
    );
    let (s, reply) = t.call(Method::PUT, "/admin/read-only", Some(stop)).await;
    assert_eq!(
        (s, reply["read_only"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let (s, reply) = t
        .call(
            Method::POST,
            "/users/alice/posts",
            Some(json!({ "message": "x" })),
        )
        .await;
    assert_eq!(
        (s, reply["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("read_only"))
    );
    let (s, _) = t.call(Method::GET, "/users/alice", None).await;
    assert_eq!(s, StatusCode::OK, "reads go on");
    let resume = json!({ "read_only": false });
    let (s, reply) = t.call(Method::PUT, "/admin/read-only", Some(resume)).await;
    assert_eq!(
        (s, reply["read_only"].as_bool()),
        (StatusCode::OK, Some(false))
    );
    let (s, _) = t
        .call(
            Method::POST,
            "/users/alice/posts",
            Some(json!({ "message": "y" })),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
}

/// `n` seeded writes of every kind through the use cases; refusals (a
/// follow across a block, a suspended author) are part of the load.
async fn churn(ingest: &Ingest, rng: &mut Rng, posts: &mut Vec<String>, n: usize) {
    let c = &Caller::Trusted;
    let lists: [&[&str]; 3] = [&[], &["work"], &["close", "work"]];
    for _ in 0..n {
        let (a, b) = (user(rng.below(USERS)), user(rng.below(USERS)));
        let roll = rng.below(100);
        let done = match roll {
            0..=39 => match ingest.create_post(c, &a, format!("hi @{b}"), None).await {
                Ok(p) => {
                    posts.push(p.id.to_string());
                    Ok(())
                }
                Err(e) => Err(e),
            },
            40..=44 => match posts.pop() {
                Some(id) => ingest.delete_post(c, &id).await.map(drop),
                None => Ok(()),
            },
            45..=56 => {
                let l = lists[rng.below(3)];
                ingest.follow(c, &a, &b, Some(l)).await.map(drop)
            }
            57..=61 => ingest.unfollow(c, &a, &b).await.map(drop),
            62..=65 => ingest
                .relation(c, &a, &b, Relation::Mute, true)
                .await
                .map(drop),
            66..=68 => ingest
                .relation(c, &a, &b, Relation::Mute, false)
                .await
                .map(drop),
            69..=70 => ingest
                .relation(c, &a, &b, Relation::Block, true)
                .await
                .map(drop),
            71..=73 => ingest
                .relation(c, &a, &b, Relation::Block, false)
                .await
                .map(drop),
            74..=78 => ingest
                .membership(c, &format!("g{}", rng.below(3)), &a, true)
                .await
                .map(drop),
            79..=81 => ingest
                .membership(c, &format!("g{}", rng.below(3)), &a, false)
                .await
                .map(drop),
            82..=86 => ingest
                .put_user(c, &a, Some(json!({ "n": roll })))
                .await
                .map(drop),
            87 => ingest.suspend(c, &a, true).await.map(drop),
            88..=89 => ingest.suspend(c, &a, false).await.map(drop),
            90..=91 => ingest.revoke_tokens(c, &a).await,
            92..=93 => ingest.delete_user(c, &a).await,
            94..=97 => match posts.get(rng.below(posts.len().max(1))) {
                Some(id) => ingest.like(c, &a, id, roll < 97).await.map(drop),
                None => Ok(()),
            },
            _ => ingest.put_user(c, &a, None).await.map(drop),
        };
        if let Err(e) = done {
            let kind = e.kind();
            assert!(
                !matches!(kind, ErrorKind::Unavailable | ErrorKind::Internal),
                "{e}"
            );
        }
    }
}

/// Moves every event of the outbox onto the log.
async fn relay_all(b: &Backends) {
    while relay_once(&*b.outbox, &*b.log).await.unwrap() > 0 {}
}

/// Where a catch-up's replay starts, before the backup's position in the
/// log: at it, 50 events before, or at the log's start.
#[derive(Clone, Copy, Debug)]
enum Overlap {
    None,
    Some,
    Whole,
}

const EVERY_OVERLAP: [Overlap; 3] = [Overlap::None, Overlap::Some, Overlap::Whole];

/// The catch-up's convergence, seeded: a backup is taken mid-load with
/// events still in the outbox, the load goes on, and the target built from
/// the backup and the log's events after any point at or before the
/// backup's (a replay over a state that holds some of them already) ends
/// with the source's records and timelines; for each of `overlaps`.
async fn catch_up_converges(target: fn() -> Opening, seed: u64, overlaps: &[Overlap]) {
    let config = BackendConfig::embedded(embedded_config(&tempfile::tempdir().unwrap().keep()));
    let (source, (store, log)) = open_keeping_embedded(&config).await.unwrap();
    let (store, log) = (store.unwrap(), log.unwrap());
    let ingest = Ingest::new(&source, 1).await.unwrap();
    for i in 0..USERS {
        ingest
            .put_user(&Caller::Trusted, &user(i), None)
            .await
            .unwrap();
    }
    let (mut rng, mut posts) = (Rng::new(seed), Vec::new());
    churn(&ingest, &mut rng, &mut posts, 400).await;
    relay_all(&source).await;
    // Some events wait in the outbox when the backup is taken.
    churn(&ingest, &mut rng, &mut posts, 30).await;
    let dir = tempfile::tempdir().unwrap();
    let backup = EmbeddedBackup {
        store: Some(store),
        log: Some(log.clone()),
        root: dir.path().into(),
    };
    let (copy, _) = backup.backup_to("mid").await.unwrap();
    let position = Position::read(&copy).unwrap();
    for _ in 0..10 {
        churn(&ingest, &mut rng, &mut posts, 60).await;
        relay_all(&source).await;
    }
    let copy_config = BackendConfig::embedded(embedded_config(&copy));
    let copied = open_backends(&copy_config).await.unwrap();
    let held = tally(&mut Stream::open(&*source.transfer).await.unwrap())
        .await
        .unwrap();
    let reads = Reads::new(source.stores());
    for overlap in overlaps.iter().map(|o| match o {
        Overlap::None => 0,
        Overlap::Some => 50,
        Overlap::Whole => position.log_before,
    }) {
        let to = target().await.unwrap();
        let t = &to.backends;
        copy_store(&*copied.transfer, &*t.transfer, 100, &Default::default())
            .await
            .unwrap();
        let mut from = position.log_before - overlap;
        let mut replayed = Replayed::default();
        let target = Target {
            transfer: &*t.transfer,
            content: &*t.content,
        };
        loop {
            let events = log.read_after(from, 500).unwrap();
            let Some((last, _)) = events.last() else {
                break;
            };
            from = *last;
            target.replay(&events, &mut replayed).await.unwrap();
        }
        assert!(replayed.changed > 100, "{replayed:?}");
        let theirs = tally(&mut Stream::open(&*t.transfer).await.unwrap())
            .await
            .unwrap();
        assert_eq!(
            differing(&held, &theirs),
            vec![],
            "seed {seed}, replayed from {overlap} before the backup: {replayed:?}"
        );
        let all = sample(&held.users, USERS);
        let compared = compare_timelines(&reads, &Reads::new(t.stores()), &all, &held.groups)
            .await
            .unwrap();
        assert!(compared.timelines > USERS as u64);
        assert_eq!(
            compared.mismatches,
            vec![],
            "seed {seed}, overlap {overlap}"
        );
    }
}

fn embedded_target() -> Opening {
    Box::pin(ports::open(
        Kind::Embedded,
        Default::default(),
        "catch_up",
        "catch_up",
    ))
}

fn mongodb_target() -> Opening {
    let test = "the_catch_up_converges_on_mongodb_from_any_earlier_point";
    Box::pin(ports::open(
        Kind::MongoStores,
        Default::default(),
        test,
        "catch_up",
    ))
}

// One test per seed, so that they run side by side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catch_up_converges_from_any_earlier_point_seed_1() {
    catch_up_converges(embedded_target, 1, &EVERY_OVERLAP).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catch_up_converges_from_any_earlier_point_seed_2() {
    catch_up_converges(embedded_target, 2, &EVERY_OVERLAP).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catch_up_converges_from_any_earlier_point_seed_3() {
    catch_up_converges(embedded_target, 3, &EVERY_OVERLAP).await;
}

// One test per overlap: the stand-in replays a few hundred events a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catch_up_converges_on_mongodb_from_the_backup() {
    catch_up_on_mongodb(Overlap::None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catch_up_converges_on_mongodb_from_before_the_backup() {
    catch_up_on_mongodb(Overlap::Some).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catch_up_converges_on_mongodb_from_the_logs_start() {
    catch_up_on_mongodb(Overlap::Whole).await;
}

async fn catch_up_on_mongodb(overlap: Overlap) {
    if Servers::from_env("the_catch_up_converges_on_mongodb_from_any_earlier_point").is_none() {
        return;
    }
    catch_up_converges(mongodb_target, 4, &[overlap]).await;
}

/// The same over gRPC: a backup and a write stop, by an admin key only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backups_and_write_stops_over_grpc() {
    use socialite_proto::v1 as pb;
    let t = spawn_app().await;
    t.put_user("alice").await;
    let (mut w, _) = clients_as(&t, WRITE_KEY).await;
    let stop = pb::ReadOnlyRequest {
        read_only: true,
        ..Default::default()
    };
    let e = w.set_read_only(stop).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied);
    let e = w
        .backup(pb::BackupRequest {
            name: "b".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied);

    let (mut admin, _) = clients_as(&t, ADMIN_KEY).await;
    let made = admin
        .backup(pb::BackupRequest {
            name: "over-grpc".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        made.rows > 0 && made.path.ends_with("backups/over-grpc"),
        "{made:?}"
    );
    let tail = admin
        .backup(pb::BackupRequest {
            name: "tail-over-grpc".into(),
            log_after: Some(0),
        })
        .await
        .unwrap()
        .into_inner();
    let held = std::path::Path::new(&tail.path);
    assert!(
        tail.rows > 0
            && held
                .join(socialite_embedded::backup_tail::TAIL_FILE)
                .exists(),
        "a log tail of every event: {tail:?}"
    );
    let e = admin
        .backup(pb::BackupRequest {
            name: "../x".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    let reply = admin
        .set_read_only(pb::ReadOnlyRequest {
            read_only: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(reply.into_inner().read_only);
    let post = pb::CreatePostRequest {
        author: "alice".into(),
        message: "x".into(),
        ..Default::default()
    };
    let e = admin.create_post(post.clone()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
    assert!(e.message().contains("takes no writes"), "{e:?}");
    admin
        .set_read_only(pb::ReadOnlyRequest {
            read_only: false,
            ..Default::default()
        })
        .await
        .unwrap();
    admin.create_post(post).await.unwrap();
}

/// A deployment no server runs is moved by migrate alone: it relays the
/// events its server left in the outbox, so the last copy's log holds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_deployment_is_moved_with_what_its_outbox_held() {
    let t = spawn_app().await;
    let config = BackendConfig::embedded(embedded_config(t.dir.path()));
    let mut t = t;
    t.app.take().unwrap().shutdown().await;
    // Writes whose events no relay has moved yet.
    let backends = open_backends(&config).await.unwrap();
    let ingest = Ingest::new(&backends, 1).await.unwrap();
    let (mut rng, mut posts) = (Rng::new(9), Vec::new());
    for i in 0..USERS {
        ingest
            .put_user(&Caller::Trusted, &user(i), None)
            .await
            .unwrap();
    }
    churn(&ingest, &mut rng, &mut posts, 200).await;
    assert!(backends.outbox.backlog().await.unwrap() > 0);
    drop((ingest, backends));

    let to_dir = tempfile::tempdir().unwrap();
    let moved = to_dir.path().join("moved");
    let (from, to) = (
        format!("embedded://{}", t.dir.path().display()),
        format!("embedded://{}", moved.display()),
    );
    let args = Cli::parse_from(["migrate", "--from", &from, "--to", &to]).args;
    migrate(args).await.expect("the move verifies");
    assert!(t.dir.path().join(MOVED).exists());
    let on_source = post_ids(&config).await;
    let on_target = post_ids(&BackendConfig::embedded(embedded_config(&moved))).await;
    assert_eq!(on_source, on_target);
    assert!(!on_target.is_empty());
}

/// While writes are stopped for a move, account safety acts go on: a
/// stolen token can be revoked, an account suspended (lifting waits for
/// writes). Once the move is marked final they stop too, told where to go,
/// over REST and gRPC; a move called off takes everything again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn account_safety_acts_go_on_until_the_move_is_final() {
    use socialite_proto::v1 as pb;
    let t = spawn_app().await;
    for u in ["alice", "bob", "cy"] {
        t.put_user(u).await;
    }
    let alice = client_with(&token_for("alice"));
    let code = |s: StatusCode, v: &Value| {
        let code = v["error"]["code"].as_str().unwrap_or("ok");
        format!("{} {code}", s.as_u16())
    };
    let stop = json!({ "read_only": true });
    let (s, _) = t.call(Method::PUT, "/admin/read-only", Some(stop)).await;
    assert_eq!(s, StatusCode::OK);
    let post = json!({ "message": "x" });
    let (s, v) = t
        .call(Method::POST, "/users/bob/posts", Some(post.clone()))
        .await;
    assert_eq!(code(s, &v), "503 read_only");

    // Writes are stopped; a revocation and a suspension are not.
    let (s, _) = t.call(Method::DELETE, "/users/alice/tokens", None).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let resp = alice
        .get(format!("{}/users/bob", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::UNAUTHORIZED,
        "the token is revoked"
    );
    let (s, v) = t.call(Method::PUT, "/users/bob/suspension", None).await;
    assert_eq!((s, &v["suspended"]), (StatusCode::OK, &json!(true)), "{v}");
    let (s, v) = t.call(Method::DELETE, "/users/bob/suspension", None).await;
    assert_eq!(code(s, &v), "503 read_only", "lifting is a write");
    let (mut admin, _) = clients_as(&t, ADMIN_KEY).await;
    let suspended = admin
        .suspend(pb::UserRef { id: "cy".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(suspended.changed);

    // Marked moved: safety acts stop too, told where to go (without the
    // address's credentials).
    let moved =
        json!({ "read_only": true, "moved_to": "mongodb://app:s3cret@db.example:27017/social" });
    let (s, v) = t.call(Method::PUT, "/admin/read-only", Some(moved)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["moved_to"], "mongodb://app:***@db.example:27017/social");
    for (method, path) in [
        (Method::DELETE, "/users/alice/tokens"),
        (Method::PUT, "/users/alice/suspension"),
    ] {
        let (s, v) = t.call(method, path, None).await;
        assert_eq!(code(s, &v), "503 moved", "{path}");
        let told = v["error"]["message"].as_str().unwrap();
        assert!(told.contains("db.example:27017/social"), "{told}");
        assert!(!told.contains("s3cret"), "{told}");
    }
    let (s, v) = t
        .call(Method::POST, "/users/alice/posts", Some(post.clone()))
        .await;
    assert_eq!(code(s, &v), "503 read_only");
    let told = v["error"]["message"].as_str().unwrap();
    assert!(told.contains("db.example"), "{told}");
    let e = admin
        .revoke_tokens(pb::UserRef { id: "alice".into() })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable);
    assert!(e.message().starts_with("moved: "), "{e:?}");
    for bad in [
        json!({ "read_only": false, "moved_to": "mongodb://db.example" }),
        json!({ "read_only": true, "moved_to": "" }),
        json!({ "read_only": true, "moved_to": "x".repeat(1025) }),
    ] {
        let (s, v) = t.call(Method::PUT, "/admin/read-only", Some(bad)).await;
        assert_eq!(code(s, &v), "400 invalid_body");
    }

    // Called off: everything again.
    let resume = json!({ "read_only": false });
    let (s, _) = t.call(Method::PUT, "/admin/read-only", Some(resume)).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = t.call(Method::DELETE, "/users/alice/tokens", None).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, v) = t.call(Method::DELETE, "/users/bob/suspension", None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, _) = t.call(Method::POST, "/users/bob/posts", Some(post)).await;
    assert_eq!(s, StatusCode::CREATED);
}

/// The time now, in ms, as the server reads it (same clock).
fn now_ms() -> u64 {
    socialite_core::ids::now_ms()
}

/// Revocations and suspensions made while a deployment is moved: every
/// one the source acknowledged is on the target, those it took while its
/// writes were stopped included (carried by the copy taken once the move
/// was final), until the source refuses them with `moved`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safety_acts_acknowledged_during_a_move_are_on_the_target() {
    const SUSPENDABLE: usize = 400;
    let t = spawn_app().await;
    for i in 0..USERS {
        t.put_user(&user(i)).await;
        t.post(&user(i), "before the move").await;
    }
    for i in 0..SUSPENDABLE {
        t.put_user(&format!("s{i}")).await;
    }
    #[derive(Default)]
    struct Acts {
        /// User → the time the last acknowledged revocation was sent.
        revoked: BTreeMap<String, u64>,
        suspended: Vec<String>,
        /// Safety acts acknowledged while a write was refused `read_only`.
        while_stopped: u64,
        moved: bool,
    }
    let base = t.base.clone();
    let acts = tokio::spawn(async move {
        let http = client_with(ADMIN_KEY);
        let mut acts = Acts::default();
        let send = |method: Method, path: String| {
            let http = http.clone();
            let url = format!("{base}{path}");
            async move {
                let resp = http.request(method, url).send().await.unwrap();
                let status = resp.status();
                let v: Value = resp.json().await.unwrap_or_default();
                (status, v["error"]["code"].as_str().unwrap_or("").to_owned())
            }
        };
        for i in 0.. {
            let (revoke, suspend) = (user(i % USERS), format!("s{}", i % SUSPENDABLE));
            let sent = now_ms();
            let (s, c) = match i % 3 {
                0 => send(Method::PUT, format!("/users/{suspend}/suspension")).await,
                _ => send(Method::DELETE, format!("/users/{revoke}/tokens")).await,
            };
            match (s, c.as_str()) {
                (StatusCode::SERVICE_UNAVAILABLE, "moved") => {
                    acts.moved = true;
                    return acts;
                }
                (s, _) if s.is_success() && i % 3 == 0 => acts.suspended.push(suspend),
                (s, _) if s.is_success() => {
                    acts.revoked.insert(revoke, sent);
                }
                (s, c) => panic!("a safety act answered {s} {c}"),
            }
            let (s, c) = send(Method::PUT, format!("/users/{}", user(i % USERS))).await;
            if (s, c.as_str()) == (StatusCode::SERVICE_UNAVAILABLE, "read_only") {
                acts.while_stopped += 1;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        unreachable!()
    });
    tokio::time::sleep(Duration::from_millis(300)).await;

    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("moved");
    let (from, to) = (
        format!("embedded://{}", t.dir.path().display()),
        format!("embedded://{}", moved.display()),
    );
    let argv = [
        "migrate",
        "--from",
        &from,
        "--to",
        &to,
        "--url",
        &t.base,
        "--api-key",
        ADMIN_KEY,
        "--sample",
        "24",
    ];
    migrate(Cli::parse_from(argv).args)
        .await
        .expect("the move verifies");
    let acts = tokio::time::timeout(Duration::from_secs(30), acts)
        .await
        .expect("the source refuses safety acts once moved")
        .unwrap();
    assert!(acts.moved);
    assert!(
        acts.while_stopped > 0,
        "safety acts were taken while writes were stopped"
    );

    let target = open_backends(&BackendConfig::embedded(embedded_config(&moved)))
        .await
        .unwrap();
    for (u, sent) in &acts.revoked {
        let standing = target.accounts.of(&UserId::parse(u).unwrap()).await;
        let after = standing.unwrap().tokens_after_ms;
        assert!(
            after >= *sent,
            "{u}: revoked up to {after} on the target, acknowledged at {sent}"
        );
    }
    for u in &acts.suspended {
        let standing = target.accounts.of(&UserId::parse(u).unwrap()).await;
        assert!(
            standing.unwrap().suspended,
            "{u} is suspended on the target"
        );
    }
}

/// A random history of the write path (likes, reposts and replies before
/// a block, originals deleted under their reposts and replies, accounts
/// deleted and made again) on a data directory no server runs, moved to
/// `to` (with its event log `log`): migrate's verification passes, both
/// sides export the same records, and only the last backup is left.
async fn a_history_moves(seed: u64, to: String, log: String, target: BackendConfig) {
    use socialite_core::feed::config::FeedModel;
    use socialite_testkit::differential::{feed, rich_history, Harness};
    let dir = tempfile::tempdir().unwrap();
    let mut config = BackendConfig::embedded(embedded_config(dir.path()));
    config.embedded.feed = feed(FeedModel::Cache, false, seed);
    {
        let opened = socialite_testkit::Opened::new(open_backends(&config).await.unwrap(), ());
        let mut h = Harness::on(opened, config.embedded.feed).await;
        rich_history(&mut h, seed).await;
    }
    let from = format!("embedded://{}", dir.path().display());
    let args = ["migrate", "--from", &from, "--to", &to, "--event-log", &log];
    migrate(Cli::parse_from(args).args)
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let export = |config: BackendConfig| async move {
        let b = open_backends(&config).await.unwrap();
        let mut out = Vec::new();
        socialite_core::transfer::export::export(&*b.transfer, &mut out, 1)
            .await
            .unwrap();
        String::from_utf8(out).unwrap()
    };
    let (held, moved) = (export(config).await, export(target).await);
    assert!(held.contains("\"gone\":true"), "seed {seed}: {held}");
    assert_eq!(
        held.lines().skip(1).collect::<Vec<_>>(),
        moved.lines().skip(1).collect::<Vec<_>>(),
        "seed {seed}"
    );
    let backups: Vec<String> = std::fs::read_dir(dir.path().join("backups"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        backups.len(),
        1,
        "only the last backup is kept: {backups:?}"
    );
    assert!(backups[0].ends_with("-moved"), "{backups:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_histories_move_to_another_embedded_directory() {
    for seed in 1..=3 {
        let to_dir = tempfile::tempdir().unwrap();
        let moved = to_dir.path().join("moved");
        let to = format!("embedded://{}", moved.display());
        let target = BackendConfig::embedded(embedded_config(&moved));
        a_history_moves(seed, to, "embedded://".into(), target).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_random_history_moves_to_mongodb_and_kafka() {
    let test = "a_random_history_moves_to_mongodb_and_kafka";
    let Some((to, log, target, _dir)) = mongodb_kafka_target(test, "history") else {
        return;
    };
    a_history_moves(5, to, log, target).await;
}

/// A fresh MongoDB database and Kafka topic on the stand-ins, for `test`
/// (`None` skips it): the store's and log's URIs, the backends' settings,
/// and the directory they keep.
fn mongodb_kafka_target(
    test: &str,
    tag: &str,
) -> Option<(String, String, BackendConfig, tempfile::TempDir)> {
    let servers = Servers::from_env(test)?;
    let tag = Servers::unique(tag);
    let (to, log) = (servers.mongodb_uri(&tag), servers.kafka_uri(&tag, 3));
    let dir = tempfile::tempdir().unwrap();
    let target = BackendConfig {
        embedded: embedded_config(dir.path()),
        store: to.clone(),
        event_log: log.clone(),
    };
    Some((to, log, target, dir))
}

/// A move that fails (here: the source holds a post dated past the clock,
/// stored by an older version's import, which no write can make) says why
/// and leaves none of its backups behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_move_leaves_no_backups() {
    let dir = tempfile::tempdir().unwrap();
    let config = BackendConfig::embedded(embedded_config(dir.path()));
    {
        let b = open_backends(&config).await.unwrap();
        let ingest = Ingest::new(&b, 1).await.unwrap();
        ingest
            .put_user(&Caller::Trusted, "ann", None)
            .await
            .unwrap();
        ingest
            .create_post(&Caller::Trusted, "ann", "now".into(), None)
            .await
            .unwrap();
        let far = socialite_core::model::Post::written(
            PostId(u64::MAX),
            socialite_core::ids::UserId::parse("ann").unwrap(),
            "later".into(),
            None,
            Vec::new(),
        );
        b.content.create_post(far).await.unwrap();
        relay_all(&b).await;
    }
    let to_dir = tempfile::tempdir().unwrap();
    let from = format!("embedded://{}", dir.path().display());
    let to = format!("embedded://{}", to_dir.path().join("moved").display());
    for _ in 0..2 {
        let e = migrate(Cli::parse_from(["migrate", "--from", &from, "--to", &to]).args)
            .await
            .unwrap_err();
        assert!(
            e.contains("time_ahead") || e.contains("ahead of this server's clock"),
            "{e}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path().join("backups"))
            .map(|d| d.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "backups left behind: {left:?}");
    }
}
