//! Online backup of the embedded stores: taken while posts keep being
//! acknowledged, it holds every post acknowledged before the call and none
//! acknowledged after it returned; refused for a bad path, an existing
//! directory, a caller without the admin scope, and stores that are not
//! embedded.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use socialite_core::ids::PostId;
use socialite_core::ingest::Ingest;
use socialite_domain::accounts::access::Caller;
use socialite_embedded::EmbeddedConfig;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_load_holds_what_was_acknowledged_before_it() {
    let t = spawn_app().await;
    t.put_user("author").await;
    t.put_user("reader").await;
    t.follow("reader", "author").await;
    let acked: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poster = {
        let (http, base, acked, stop) =
            (t.http.clone(), t.base.clone(), acked.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let resp = http
                    .post(format!("{base}/users/author/posts"))
                    .json(&json!({ "message": format!("post {n}") }))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), StatusCode::CREATED);
                let body: serde_json::Value = resp.json().await.unwrap();
                let id = body["id"].as_str().unwrap().to_owned();
                acked.lock().unwrap().push((id, Instant::now()));
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = Instant::now();
    let (s, reply) = t
        .call(
            Method::POST,
            "/admin/backup",
            Some(json!({ "name": "under-load" })),
        )
        .await;
    let after = Instant::now();
    assert_eq!(s, StatusCode::CREATED, "{reply}");
    let to = std::path::PathBuf::from(reply["path"].as_str().unwrap());
    assert!(
        to.starts_with(t.dir.path()),
        "{to:?} is under the data directory"
    );
    assert!(reply["rows"].as_u64().unwrap() > 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    poster.await.unwrap();

    // The backup opens as a data directory of its own.
    let copy = EmbeddedConfig {
        data_dir: to.clone(),
        log_retention: 1_000_000,
        feed: Default::default(),
        bulk: false,
    };
    let store = copy.open_store().unwrap();
    let acked = acked.lock().unwrap().clone();
    let (mut early, mut late) = (0, 0);
    for (id, at) in &acked {
        let found = socialite_core::ports::Posts::get_posts(&*store, &[PostId::parse(id).unwrap()])
            .await
            .unwrap();
        if *at < before {
            assert_eq!(
                found.len(),
                1,
                "post {id}, acknowledged before the backup, is in it"
            );
            early += 1;
        } else if *at > after {
            assert!(
                found.is_empty(),
                "post {id}, acknowledged after the backup, is not in it"
            );
            late += 1;
        }
    }
    assert!(
        early > 0 && late > 0,
        "posts before ({early}) and after ({late}) the backup"
    );
    drop(copy.open_log().unwrap());
    #[cfg(unix)]
    for f in ["content.redb", "log.redb"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(to.join(f)).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{f} is its owner's only");
    }

    // Refusals: the path, the directory, the caller.
    for (body, status, code) in [
        (
            json!({ "name": "../escape" }),
            StatusCode::BAD_REQUEST,
            "invalid_backup_name",
        ),
        (
            json!({ "name": "/tmp/x" }),
            StatusCode::BAD_REQUEST,
            "invalid_backup_name",
        ),
        (
            json!({ "name": ".." }),
            StatusCode::BAD_REQUEST,
            "invalid_backup_name",
        ),
        (
            json!({ "name": "under-load" }),
            StatusCode::CONFLICT,
            "backup_exists",
        ),
    ] {
        let (s, reply) = t.call(Method::POST, "/admin/backup", Some(body)).await;
        assert_eq!(
            (s, reply["error"]["code"].as_str().unwrap()),
            (status, code)
        );
    }
    let other = to.with_file_name("other");
    let resp = client_with(WRITE_KEY)
        .post(format!("{}/admin/backup", t.base))
        .json(&json!({ "name": "other" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(!other.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_that_are_not_embedded_are_not_backed_up_here() {
    let test = "stores_that_are_not_embedded_are_not_backed_up_here";
    let Some(opened) = common::ports::open(
        common::ports::Kind::MongoKafka,
        Default::default(),
        test,
        "backup",
    )
    .await
    else {
        return;
    };
    let ingest = Ingest::new(&opened.backends, 1).await.unwrap();
    let e = ingest
        .backup(&Caller::Trusted, "never", None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "backup_unsupported");
}

/// Backups asked for in a loop do not fill the disk: the server makes one
/// at a time (the others are refused with 409 `backup_in_progress`) and
/// keeps the newest `--max-backups`; migrate's own are left to migrate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backups_are_made_one_at_a_time_and_the_oldest_pruned() {
    let t = spawn_app_configured(|c| c.limits.max_backups = 2).await;
    t.put_user("ann").await;
    t.post("ann", "kept").await;
    let root = t.dir.path().join("backups");
    let backup = |name: String| {
        let http = t.http.clone();
        let url = format!("{}/admin/backup", t.base);
        async move {
            let resp = http.post(url).json(&json!({ "name": name })).send().await;
            let resp = resp.unwrap();
            let status = resp.status();
            let body: serde_json::Value = resp.json().await.unwrap();
            (status, body["error"]["code"].as_str().map(str::to_owned))
        }
    };
    let (s, _) = backup("migrate-1-0".into()).await;
    assert_eq!(s, StatusCode::CREATED);
    // Many at once: each made, or refused while another is made.
    let at_once: Vec<_> = (0..12).map(|i| backup(format!("loop-{i}"))).collect();
    let answers = futures_util::future::join_all(at_once).await;
    for (s, code) in &answers {
        let refused = (StatusCode::CONFLICT, Some("backup_in_progress".to_owned()));
        assert!(
            *s == StatusCode::CREATED || (*s, code.clone()) == refused,
            "{s} {code:?}"
        );
    }
    // One after another: the newest two stay, and migrate's.
    for name in ["a", "b", "c"] {
        let (s, code) = backup(name.into()).await;
        assert_eq!(s, StatusCode::CREATED, "{code:?}");
    }
    let mut left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["b", "c", "migrate-1-0"]);
}

/// A log tail holds the log's events after its point and nothing else;
/// taken with writes stopped it says it is settled and holds the event of
/// every acknowledged post. It is no backup: no store to restore.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_tail_holds_the_events_after_its_point() {
    use socialite_core::event::Event;
    use socialite_embedded::backup::Position;
    use socialite_embedded::backup_tail::TAIL_FILE;
    use socialite_embedded::EmbeddedLog;
    let t = spawn_app().await;
    t.put_user("author").await;
    let mut posted = Vec::new();
    for i in 0..20 {
        posted.push(t.post("author", &format!("post {i}")).await);
    }
    let tail = |name: &str, after: serde_json::Value| {
        let body = json!({ "name": name, "log_after": after });
        t.call(Method::POST, "/admin/backup", Some(body))
    };
    let (s, reply) = tail("bad", json!(-1)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{reply}");
    let (s, reply) = t
        .call(
            Method::PUT,
            "/admin/read-only",
            Some(json!({ "read_only": true })),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{reply}");
    // The relay moves the last events within moments.
    let mut attempt = 0;
    let (dir, position) = loop {
        let (s, reply) = tail(&format!("all-{attempt}"), json!(0)).await;
        assert_eq!(s, StatusCode::CREATED, "{reply}");
        let dir = std::path::PathBuf::from(reply["path"].as_str().unwrap());
        let position = Position::read(&dir).unwrap();
        if position.settled {
            assert_eq!(reply["rows"].as_u64(), Some(position.log_before));
            break (dir, position);
        }
        attempt += 1;
        assert!(attempt < 200, "the tail never settled");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(position.tail_after, Some(0));
    assert!(
        !dir.join("content.redb").exists() && !dir.join("log.redb").exists(),
        "a tail is no backup"
    );
    let log = EmbeddedLog::open(&dir.join(TAIL_FILE), u64::MAX).unwrap();
    let events = log.read_after(0, 10_000).unwrap();
    let logged: Vec<String> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::PostCreated { post, .. } => Some(post.id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(logged, posted, "every acknowledged post, in order");

    // After the head: nothing.
    let (s, reply) = tail("none", json!(position.log_before)).await;
    assert_eq!((s, reply["rows"].as_u64()), (StatusCode::CREATED, Some(0)));
    // Past the one before it: the last event only.
    let (s, reply) = tail("one", json!(position.log_before - 1)).await;
    assert_eq!((s, reply["rows"].as_u64()), (StatusCode::CREATED, Some(1)));
}
