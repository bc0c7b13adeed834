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
use socialite_core::rules::access::Caller;
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
    };
    let store = copy.open_store().unwrap();
    let acked = acked.lock().unwrap().clone();
    let (mut early, mut late) = (0, 0);
    for (id, at) in &acked {
        let found =
            socialite_core::ports::ContentStore::get_posts(&*store, &[PostId::parse(id).unwrap()])
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
    let e = ingest.backup(&Caller::Trusted, "never").await.unwrap_err();
    assert_eq!(e.code(), "backup_unsupported");
}
