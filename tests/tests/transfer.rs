//! Export and import between backends: an export read into another store
//! exports the same again (the header's time aside), on the embedded store
//! and MongoDB (the toy store's round trip is in `toy_backend.rs`), and
//! from the embedded store into the toy store; an import cut short or
//! stopped at a malformed line is finished by running it again, neither
//! doubling nor losing a record.

mod common;
mod toy;

use common::ports::{open, Kind};
use serde_json::json;
use socialite_core::backends::Backends;
use socialite_core::ingest::Ingest;
use socialite_core::reads::Reads;
use socialite_core::sim::{Rng, Zipf};
use socialite_core::transfer::{export::export, import::import};
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::Relation;
use socialite_domain::transfer::import::Caps;
use socialite_testkit::Opened;

socialite_testkit::round_trip_suite!(
    embedded_histories_export_import_and_export_the_same,
    common::ports::embedded,
    1..=10
);
// A test per seed: the MongoDB stand-in takes about as long for one
// history as the embedded store for all ten.
socialite_testkit::round_trip_suite!(
    mongodb_histories_export_import_and_export_the_same,
    common::ports::mongodb_stores;
    seed_1: 1,
    seed_2: 2,
    seed_3: 3
);

const C: &Caller = &Caller::Trusted;
const CAPS: Caps = Caps {
    max_following: 7_500,
};

/// A store with one of everything the format holds, and what it must leave
/// out: a user being deleted, a deleted post, a default standing.
async fn fill(b: &Backends) {
    let ingest = Ingest::new(b, 1).await.unwrap();
    let names: Vec<String> = (0..30).map(|i| format!("u{i}")).collect();
    for (i, n) in names.iter().enumerate() {
        let profile = (i % 3 == 0).then(|| json!({ "name": format!("User {i}"), "n": i }));
        ingest.put_user(C, n, profile).await.unwrap();
    }
    let mut rng = Rng::new(7);
    let zipf = Zipf::new(names.len(), 1.1);
    for _ in 0..150 {
        let (a, b) = (&names[rng.below(names.len())], &names[zipf.pick(&mut rng)]);
        let lists: &[&str] = match rng.below(3) {
            0 => &[],
            1 => &["close"],
            _ => &["close", "work"],
        };
        let _ = ingest.follow(C, a, b, Some(lists)).await;
    }
    ingest
        .relation(C, "u1", "u2", Relation::Mute, true)
        .await
        .unwrap();
    ingest
        .relation(C, "u3", "u4", Relation::Block, true)
        .await
        .unwrap();
    for (g, u) in [("rust", "u1"), ("rust", "u5"), ("go", "u5")] {
        ingest.membership(C, g, u, true).await.unwrap();
    }
    let mut made = Vec::new();
    for i in 0..60 {
        let author = &names[zipf.pick(&mut rng)];
        let data = (i % 4 == 0).then(|| json!({ "i": i, "tags": ["a"] }));
        let post = ingest
            .create_post(C, author, format!("post {i} for @u{}", i % 7), data)
            .await
            .unwrap();
        made.push(post.id.to_string());
    }
    // Likes, reposts and replies of the posts so far (some refused: one's
    // own, across a block).
    for (i, p) in made.iter().enumerate() {
        let fan = &names[(i * 7 + 3) % names.len()];
        let _ = ingest.like(C, fan, p, true).await;
        if i % 3 == 0 {
            let _ = ingest
                .repost(C, &names[(i * 11 + 5) % names.len()], p, true)
                .await;
        }
        if i % 4 == 0 {
            let reply = format!("reply {i}");
            let _ = ingest.create_reply(C, fan, reply, None, Some(p)).await;
        }
        if i % 2 == 0 {
            let saver = &names[(i * 5 + 1) % names.len()];
            let _ = ingest.bookmark(C, saver, p, true).await;
        }
    }
    let gone = ingest
        .create_post(C, "u9", "deleted".into(), None)
        .await
        .unwrap();
    ingest
        .bookmark(C, "u3", &gone.id.to_string(), true)
        .await
        .unwrap();
    ingest.delete_post(C, &gone.id.to_string()).await.unwrap();
    // u8's is not carried: u8 is deleted below.
    for (user, word, hide) in [
        ("u1", "reply", true),
        ("u1", "deleted", false),
        ("u2", "post", false),
        ("u8", "post", false),
    ] {
        let change = socialite_core::filters::FilterChange {
            phrases: Some(vec![socialite_core::model::filter::Phrase {
                text: word.into(),
                whole_word: true,
            }]),
            action: hide.then_some(socialite_core::model::filter::FilterAction::Hide),
            expires_in_s: hide.then_some(Some(3600)),
            ..Default::default()
        };
        ingest.put_filter(C, user, None, &change).await.unwrap();
    }
    // u2's second filter, deleted: its id is not given again after a move.
    let again = ingest.put_filter(C, "u2", None, &Default::default()).await;
    assert_eq!(again.unwrap_err().code(), "invalid_filter_phrases");
    let second = socialite_core::filters::FilterChange {
        phrases: Some(vec![socialite_core::model::filter::Phrase {
            text: "gone".into(),
            whole_word: false,
        }]),
        ..Default::default()
    };
    let made = ingest.put_filter(C, "u2", None, &second).await.unwrap();
    ingest
        .remove_filter(C, "u2", &made.id.to_string())
        .await
        .unwrap();
    ingest.suspend(C, "u6", true).await.unwrap();
    ingest.revoke_tokens(C, "u7").await.unwrap();
    ingest.delete_user(C, "u8").await.unwrap();
}

async fn exported(b: &Backends) -> String {
    let mut out = Vec::new();
    export(&*b.transfer, &mut out, 1).await.unwrap();
    String::from_utf8(out).unwrap()
}

/// Every line but the header (its time differs between exports).
fn body(text: &str) -> Vec<&str> {
    text.lines().skip(1).collect()
}

async fn embedded(tag: &str) -> Opened {
    open(Kind::Embedded, Default::default(), tag, tag)
        .await
        .unwrap()
}

/// The source's export, read into `to` and exported again, is the same;
/// so are users' counts and home timelines.
async fn round_trip(to: Opened) {
    let from = embedded("transfer_from").await;
    fill(&from.backends).await;
    let text = exported(&from.backends).await;
    assert!(text.lines().count() > 200, "{text}");
    assert!(
        !text.contains(r#"{"kind":"user","id":"u8""#),
        "a deleted user is left out"
    );
    assert!(!text.contains(r#""followee":"u8""#) && !text.contains(r#""follower":"u8""#));
    assert!(
        text.contains(r#"{"kind":"account","id":"u8""#),
        "its standing outlives it"
    );
    assert!(
        text.contains(r#"{"kind":"kept","collection":"bookmarks""#),
        "bookmarks are carried"
    );
    assert!(
        text.contains(r#"{"kind":"filters","user":"u1","filters":[{"id":1,"#),
        "filters are carried"
    );
    assert!(!text.contains(r#""filters","user":"u8""#));
    let u2 = text
        .lines()
        .find(|l| l.starts_with(r#"{"kind":"filters","user":"u2""#))
        .unwrap();
    assert!(
        u2.ends_with(r#""next_id":3}"#),
        "u2's counter is carried: {u2}"
    );
    let done = import(&*to.backends.transfer, text.as_bytes(), 37, &CAPS)
        .await
        .unwrap();
    assert_eq!(
        done.records, done.changed,
        "a fresh store takes every record"
    );
    let again = exported(&to.backends).await;
    assert_eq!(body(&again), body(&text));
    // The source's worker applies its log; the import made the target's
    // notices from the records themselves.
    let events = socialite_testkit::conformance::outbox_events(&from.backends).await;
    socialite_core::feed::notify::apply(&from.backends.stores(), &events)
        .await
        .unwrap();
    let (r1, r2) = (
        Reads::new(from.backends.stores()),
        Reads::new(to.backends.stores()),
    );
    let mut told = 0;
    for i in 0..30 {
        let u = format!("u{i}");
        let (a, b) = (
            r1.notifications(C, &u, Some(200), None).await,
            r2.notifications(C, &u, Some(200), None).await,
        );
        let entries = |p: &socialite_core::model::Page<
            socialite_core::notifications::Notification,
            _,
        >| { p.items.clone() };
        match (a, b) {
            (Ok(a), Ok(b)) => {
                told += a.items.len();
                assert_eq!(entries(&a), entries(&b), "notifications of {u}");
            }
            (a, b) => assert_eq!(a.is_err(), b.is_err(), "{u}"),
        }
    }
    assert!(told > 20, "the records told {told} entries");
    for u in ["u0", "u1", "u3", "u5", "u12"] {
        let (a, b) = (
            r1.user(C, u, None).await.unwrap(),
            r2.user(C, u, None).await.unwrap(),
        );
        assert_eq!(
            (a.followers, a.following),
            (b.followers, b.following),
            "{u}"
        );
        let (p1, _) = r1.timeline(C, u, Some(100), None).await.unwrap();
        let (p2, _) = r2.timeline(C, u, Some(100), None).await.unwrap();
        let ids = |p: &socialite_core::model::Page<socialite_core::model::FeedItem, _>| {
            p.items
                .iter()
                .map(|e| (e.post.id, e.position))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&p1), ids(&p2), "home of {u}");
    }
    let s = to.backends.accounts.clone();
    let standing = |u: &str| {
        let s = s.clone();
        let u = socialite_core::ids::UserId::parse(u).unwrap();
        async move { s.of(&u).await.unwrap() }
    };
    assert!(
        standing("u6").await.suspended,
        "a suspension is carried over"
    );
    assert!(
        standing("u7").await.tokens_after_ms > 0,
        "a revocation is carried over"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_to_embedded_exports_the_same() {
    round_trip(embedded("transfer_to").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_to_mongodb_exports_the_same() {
    let test = "embedded_to_mongodb_exports_the_same";
    let Some(to) = open(Kind::MongoStores, Default::default(), test, "transfer").await else {
        return;
    };
    round_trip(to).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_to_the_toy_store_exports_the_same() {
    round_trip(toy::open(Default::default(), "transfer").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_cut_short_or_stopped_at_a_bad_line_is_finished_by_a_rerun() {
    let from = embedded("transfer_cut_from").await;
    fill(&from.backends).await;
    let text = exported(&from.backends).await;
    let lines: Vec<&str> = text.lines().collect();
    let to = embedded("transfer_cut_to").await;
    let t = &*to.backends.transfer;

    // Cut after 100 lines: what was read is imported, and it says so.
    let cut = lines[..100].join("\n");
    let e = import(t, cut.as_bytes(), 30, &CAPS).await.unwrap_err();
    assert_eq!(e.code(), "import_cut_short", "{e}");
    let part = exported(&to.backends).await;
    assert_eq!(
        body(&part).len() - 1,
        99,
        "the 99 records before the cut are in"
    );

    // A malformed line: refused with its number; the lines before it stay.
    let mut bad = lines.clone();
    bad[150] = "{\"kind\":\"follow\",\"follower\":";
    let e = import(t, bad.join("\n").as_bytes(), 30, &CAPS)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_import_line");
    assert!(e.message().starts_with("line 151: "), "{e}");
    let part = exported(&to.backends).await;
    assert_eq!(
        body(&part).len() - 1,
        149,
        "the 149 records before the bad line are in"
    );

    // The whole stream again: everything, once.
    let done = import(t, text.as_bytes(), 30, &CAPS).await.unwrap();
    assert_eq!(done.records as usize, lines.len() - 2);
    assert_eq!(
        done.changed as usize,
        lines.len() - 2 - 149,
        "only what was missing changes"
    );
    assert_eq!(body(&exported(&to.backends).await), body(&text));
    let again = import(t, text.as_bytes(), 30, &CAPS).await.unwrap();
    assert_eq!(again.changed, 0, "a second import changes nothing");

    // Not an export at all, or of another version.
    let e = import(
        t,
        "{\"kind\":\"user\",\"id\":\"x\"}\n".as_bytes(),
        30,
        &CAPS,
    )
    .await
    .unwrap_err();
    assert!(e.message().contains("opens with its header"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_stopped_anywhere_is_finished_by_a_rerun() {
    let from = embedded("transfer_stop_from").await;
    fill(&from.backends).await;
    let text = exported(&from.backends).await;
    let total = text.lines().count() - 2;
    let to = embedded("transfer_stop_to").await;
    let (t, input) = (to.backends.transfer.clone(), text.clone());
    // One record a transaction; stopped as soon as the first is in, so
    // mid-way: between transactions, or within one, which then commits
    // whole or not at all.
    let run = tokio::spawn(async move { import(&*t, input.as_bytes(), 1, &CAPS).await });
    let first = socialite_core::ids::UserId::parse("u0").unwrap();
    let content = to.backends.content.clone();
    socialite_testkit::eventually("the first record", || {
        let (content, first) = (content.clone(), first.clone());
        async move { content.get_user(&first).await.unwrap().is_some() }
    })
    .await;
    run.abort();
    let _ = run.await;
    let done = import(&*to.backends.transfer, text.as_bytes(), 1, &CAPS)
        .await
        .unwrap();
    assert_eq!(done.records as usize, total);
    assert!(
        done.changed > 0 && (done.changed as usize) < total,
        "stopped mid-way: {done:?}"
    );
    assert_eq!(body(&exported(&to.backends).await), body(&text));
}
