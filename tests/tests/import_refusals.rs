//! Hostile export files, as an attacker or a careless script writes them:
//! each is refused with the number of its bad line and a code naming what
//! is wrong, the lines before it stay imported, and the store keeps
//! serving. On the embedded store, MongoDB and the toy store.

mod common;
mod toy;

use async_trait::async_trait;
use common::export_stream;
use common::ports::{open, Kind};
use serde_json::json;
use socialite_core::backends::Backends;
use socialite_core::ids::{now_ms, PostId};
use socialite_core::ports::{ExportView, Transact, Transfer};
use socialite_core::reads::Reads;
use socialite_core::transfer::export::export;
use socialite_core::transfer::import::import;
use socialite_core::write::{Done, Write};
use socialite_domain::accounts::access::Caller;
use socialite_domain::transfer::import::Caps;
use socialite_testkit::Opened;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

const CAPS: Caps = Caps { max_following: 3 };

fn user(id: &str) -> String {
    json!({"kind": "user", "id": id}).to_string()
}

/// An id made `ms_ago` milliseconds ago (ids must not be ahead of the clock).
fn id(ms_ago: u64, n: u64) -> String {
    PostId(PostId::first_at(now_ms() - ms_ago).0 + n).to_string()
}

fn post(id: &str, author: &str, message: &str) -> serde_json::Value {
    json!({"kind": "post", "id": id, "author": author, "message": message, "mentions": []})
}

/// The users every case starts from: lines 2 to 4.
fn base() -> Vec<String> {
    ["ann", "bo", "cy"].map(user).to_vec()
}

/// Imports `base() + bad` (then `after`, if any), expecting a refusal at
/// the first line of `bad` with `code` (and `says` in its message).
async fn refused(b: &Backends, what: &str, bad: Vec<String>, code: &str, says: &str) {
    let mut lines = base();
    let at = lines.len() as u64 + 2;
    lines.extend(bad);
    let text = export_stream(&lines);
    let e = import(&*b.transfer, text.as_bytes(), 2, &CAPS)
        .await
        .expect_err(what);
    assert_eq!(e.code(), code, "{what}: {e}");
    assert!(
        e.message().starts_with(&format!("line {at}: ")),
        "{what}: {}",
        e.message()
    );
    assert!(e.message().contains(says), "{what}: {}", e.message());
    // The store still serves.
    let reads = Reads::new(b.stores());
    assert!(
        reads.user(&Caller::Trusted, "ann", None).await.is_ok(),
        "{what}"
    );
}

async fn hostile(t: Opened) {
    let b = &t.backends;
    let p = |v: serde_json::Value| v.to_string();
    let huge = "x".repeat(20_000_000);
    refused(
        b,
        "a 20 MB profile",
        vec![p(
            json!({"kind": "user", "id": "dee", "profile": {"bio": huge}}),
        )],
        "invalid_import_line",
        "longer than 262144 bytes",
    )
    .await;
    refused(
        b,
        "a profile past 16 KiB",
        vec![p(
            json!({"kind": "user", "id": "dee", "profile": {"bio": "x".repeat(17_000)}}),
        )],
        "json_field_too_large",
        "profile is",
    )
    .await;
    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        (
            "a 100,000-byte message",
            post(&id(9000, 0), "ann", &"m".repeat(100_000)),
            "message_too_long",
        ),
        (
            "a NUL",
            post(&id(9000, 1), "ann", "a\u{0}b"),
            "control_character",
        ),
        (
            "a terminal escape",
            post(&id(9000, 2), "ann", "\u{1b}[2Jgone"),
            "control_character",
        ),
        (
            "an empty message",
            post(&id(9000, 3), "ann", ""),
            "empty_message",
        ),
        (
            "invisible characters only",
            post(&id(9000, 4), "ann", "\u{200b}\u{feff} "),
            "empty_message",
        ),
        (
            "an id past the clock",
            post("ffffffffffffffff", "ann", "later"),
            "time_ahead",
        ),
        (
            "an id an hour ahead",
            post(
                &PostId::first_at(now_ms() + 3_600_000).to_string(),
                "ann",
                "soon",
            ),
            "time_ahead",
        ),
    ];
    for (what, line, code) in cases {
        refused(b, what, vec![p(line)], code, "").await;
    }
    let mut data = post(&id(9000, 5), "ann", "data");
    data["data"] = json!({ "blob": "d".repeat(20_000) });
    refused(
        b,
        "20 KB of data",
        vec![p(data)],
        "json_field_too_large",
        "data is",
    )
    .await;
    let mut big = post(&id(9000, 6), "ann", "big number");
    big["data"] = json!({});
    let big = p(big).replace(
        "\"data\":{}",
        "\"data\":{\"n\":123456789012345678901234567890}",
    );
    refused(
        b,
        "an integer past 64 bits",
        vec![big],
        "invalid_import_line",
        "64 bits",
    )
    .await;
    let mut named = post(&id(9000, 7), "ann", "hello @bo");
    named["mentions"] = json!(["bo", "cy"]);
    refused(
        b,
        "mentions its message does not name",
        vec![p(named)],
        "invalid_mentions",
        "",
    )
    .await;
    let mut worded = post(&id(9000, 8), "bo", "mine");
    worded["repost_of"] = json!({"id": id(10_000, 0), "author": "ann"});
    refused(
        b,
        "a repost with a message",
        vec![p(worded)],
        "invalid_repost",
        "",
    )
    .await;
    let lists: Vec<String> = (0..9).map(|i| format!("l{i}")).collect();
    let follow =
        json!({"kind": "follow", "follower": "ann", "followee": "bo", "at_ms": 5, "lists": lists});
    refused(
        b,
        "9 lists on a follow",
        vec![p(follow)],
        "invalid_import_line",
        "at most 8 lists",
    )
    .await;
    let ahead = json!({"kind": "like", "post": id(9000, 9), "user": "bo", "at_ms": u64::MAX});
    refused(
        b,
        "a like in the far future",
        vec![p(ahead)],
        "time_ahead",
        "",
    )
    .await;
    let marker = json!({"kind": "marker", "user": "bo", "timeline": "home", "last_read_id": "ffffffffffffffff", "at_ms": 5});
    refused(
        b,
        "a marker past every post",
        vec![p(marker)],
        "time_ahead",
        "",
    )
    .await;

    // What no write could make, which the store's rules see.
    let mut orphan = post(&id(8000, 0), "bo", "to nothing");
    orphan["reply_to"] = json!({"id": id(8500, 0), "author": "ann"});
    refused(
        b,
        "a reply to a post never held",
        vec![p(orphan)],
        "post_not_found",
        "not marked gone",
    )
    .await;
    // A cycle: each answers the other; the older cannot answer the newer.
    let (older, newer) = (id(7000, 0), id(6000, 0));
    let mut first = post(&older, "ann", "first");
    first["reply_to"] = json!({"id": newer, "author": "bo"});
    let mut second = post(&newer, "bo", "second");
    second["reply_to"] = json!({"id": older, "author": "ann"});
    refused(
        b,
        "a reply cycle",
        vec![p(first), p(second)],
        "invalid_reply",
        "not newer",
    )
    .await;
    let like = json!({"kind": "like", "post": id(5500, 0), "user": "bo", "at_ms": 5});
    refused(
        b,
        "a like of a post never held",
        vec![p(like)],
        "post_not_found",
        "a like",
    )
    .await;
    // One id for both (two calls of `id` may fall in different milliseconds).
    let taken = id(5000, 0);
    let (held, other) = (post(&taken, "ann", "held"), post(&taken, "bo", "other"));
    let mut lines = vec![p(held), p(other)];
    let e = import(
        &*b.transfer,
        export_stream(&[base(), lines.clone()].concat()).as_bytes(),
        1,
        &CAPS,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "post_id_taken", "{e}");
    assert!(e.message().starts_with("line 6: "), "{}", e.message());
    lines.truncate(1);
    let follows: Vec<String> = ["bo", "cy", "dee", "eve"]
        .iter()
        .map(|f| p(json!({"kind": "follow", "follower": "ann", "followee": f, "at_ms": 5})))
        .collect();
    let mut past_cap = ["dee", "eve"].map(user).to_vec();
    past_cap.extend(follows);
    let text = export_stream(&[base(), past_cap].concat());
    let e = import(&*b.transfer, text.as_bytes(), 4, &CAPS)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "too_many_following", "{e}");
    assert!(e.message().starts_with("line 10: "), "{}", e.message());

    // A post dated at the id epoch is a post like any other, and a good
    // stream is taken whole after all of the above.
    let good = export_stream(
        &[
            base(),
            lines,
            vec![p(post("0000000000000000", "cy", "the first"))],
        ]
        .concat(),
    );
    let done = import(&*b.transfer, good.as_bytes(), 2, &CAPS)
        .await
        .unwrap();
    assert_eq!(done.records, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_streams_are_refused_on_the_embedded_store() {
    let t = open(Kind::Embedded, Default::default(), "hostile", "hostile").await;
    hostile(t.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_streams_are_refused_on_mongodb() {
    let test = "hostile_streams_are_refused_on_mongodb";
    if let Some(t) = open(Kind::MongoStores, Default::default(), test, "hostile").await {
        hostile(t).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_streams_are_refused_on_the_toy_store() {
    hostile(toy::open(Default::default(), "hostile").await.unwrap()).await;
}

/// Counts the transactions an import asks of the store beneath it.
struct Counting {
    inner: Arc<dyn Transfer>,
    transactions: AtomicUsize,
}

#[async_trait]
impl Transact for Counting {
    async fn transact(&self, write: Write) -> socialite_core::error::Result<Done> {
        self.transactions.fetch_add(1, Relaxed);
        self.inner.transact(write).await
    }
}

#[async_trait]
impl Transfer for Counting {
    async fn export_view(&self) -> socialite_core::error::Result<Box<dyn ExportView>> {
        self.inner.export_view().await
    }
}

/// A batch of 1,003 records refused at its 604th (a post whose id an
/// earlier post of the batch holds) names that line after a few
/// transactions, halving the batch, not one per record; the records before
/// it are imported and none after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_batch_is_halved_to_its_refused_line() {
    let t = open(Kind::Embedded, Default::default(), "halving", "halving")
        .await
        .unwrap();
    let ids: Vec<String> = (0..1_000).map(|i| id(5000, i)).collect();
    let mut posts: Vec<String> = ids
        .iter()
        .map(|i| post(i, "ann", "hi").to_string())
        .collect();
    posts[600] = post(&ids[100], "bo", "taken").to_string();
    let counting = Counting {
        inner: t.backends.transfer.clone(),
        transactions: AtomicUsize::new(0),
    };
    let text = export_stream(&[base(), posts].concat());
    let e = import(&counting, text.as_bytes(), 5_000, &CAPS)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "post_id_taken", "{e}");
    assert!(e.message().starts_with("line 605: "), "{}", e.message());
    let transactions = counting.transactions.load(Relaxed);
    // The whole batch, then at most two halves at each of 10 halvings.
    assert!(transactions <= 21, "{transactions} transactions");
    let mut out = Vec::new();
    export(&*t.backends.transfer, &mut out, 1).await.unwrap();
    let posts: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["kind"] == "post")
        .collect();
    let held: Vec<String> = posts
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_owned())
        .collect();
    let first = posts.iter().find(|p| p["id"] == ids[100].as_str()).unwrap();
    assert_eq!(
        (&first["author"], &first["message"]),
        (&json!("ann"), &json!("hi")),
        "the refused post left the one it collided with as it was"
    );
    let mut before = ids[..600].to_vec();
    before.sort();
    assert_eq!(
        held, before,
        "the 600 posts before the refused line, and only they"
    );
}

/// The follow cap of the deployment, 7,500 by default, holds on import:
/// the 7,501st follow of one user is refused with its line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_follow_cap_holds_on_import() {
    let t = open(Kind::Embedded, Default::default(), "cap", "cap")
        .await
        .unwrap();
    let mut lines = vec![user("fan")];
    lines.extend((0..7_501).map(|i| user(&format!("s{i}"))));
    lines.extend((0..7_501).map(|i| {
        json!({"kind": "follow", "follower": "fan", "followee": format!("s{i}"), "at_ms": 5})
            .to_string()
    }));
    let e = import(
        &*t.backends.transfer,
        export_stream(&lines).as_bytes(),
        500,
        &Caps::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "too_many_following", "{e}");
    let last = 1 + lines.len();
    assert!(
        e.message().starts_with(&format!("line {last}: ")),
        "{}",
        e.message()
    );
}

/// A store that holds posts dated past the clock (as an older version's
/// import left them: at the far end of the id range, and just past where
/// the generator stops): new posts are still dated now, never wrap around
/// to 2024, never take a held id, across restarts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_ids_past_the_clock_neither_drag_nor_wrap_new_ids() {
    use socialite_core::ids::{UserId, MAX_CLOCK_SKEW_MS};
    use socialite_core::ingest::Ingest;
    use socialite_core::model::Post;
    use socialite_domain::transfer::record::Record;
    let t = open(Kind::Embedded, Default::default(), "ahead", "ahead")
        .await
        .unwrap();
    let b = &t.backends;
    let ann = UserId::parse("ann").unwrap();
    let held_post = |id: PostId| Post::written(id, ann.clone(), format!("held {id}"), None, vec![]);
    let edge = now_ms() + MAX_CLOCK_SKEW_MS + 1;
    let mut held: Vec<PostId> = vec![PostId(u64::MAX), PostId(0x4000_0000_0000_0000)];
    // Where a generator of node 1 goes first once it stops at the edge.
    held.extend((0..3_000).map(|ms| PostId(PostId::first_at(edge + ms).0 | 1)));
    let mut records = vec![
        Record::User {
            id: ann.clone(),
            profile: None,
        },
        Record::User {
            id: UserId::parse("bo").unwrap(),
            profile: None,
        },
    ];
    records.extend(held.iter().map(|&id| Record::post(held_post(id))));
    b.transfer.import(&records, &CAPS).await.unwrap();
    let mut made = std::collections::BTreeSet::new();
    for _restart in 0..3 {
        let ingest = Ingest::new(b, 1).await.unwrap();
        for i in 0..20 {
            let p = ingest
                .create_post(&Caller::Trusted, "bo", format!("new {i}"), None)
                .await
                .unwrap();
            let now = now_ms();
            assert!(
                p.id.unix_ms() <= now + MAX_CLOCK_SKEW_MS + 1,
                "{:?} is dated ahead",
                p.id
            );
            assert!(p.id.unix_ms() + 60_000 > now, "{:?} wrapped around", p.id);
            assert!(!held.contains(&p.id), "{:?} is a held id", p.id);
            assert!(made.insert(p.id), "{:?} issued twice", p.id);
        }
    }
    let stored = b.content.get_posts(&held).await.unwrap();
    assert_eq!(stored.len(), held.len());
    assert!(
        stored.iter().all(|p| p == &held_post(p.id)),
        "a held post was overwritten"
    );
}
