//! An import makes a run of follow records at once
//! (`socialite_domain::graph::edges`), and their notices at once, and
//! must store what the same records made one at a time store: the same
//! stream imported a record per transaction and in large batches exports
//! the same and gives everyone the same notifications, and a follow the
//! rules refuse (a block, the cap) is refused in a run as alone, with its
//! line. On the embedded store, MongoDB and the toy store.

mod common;
mod toy;

use common::export_stream;
use common::ports::{open, Kind};
use serde_json::json;
use socialite_core::reads::Reads;
use socialite_core::sim::Rng;
use socialite_core::transfer::{export::export, import::import};
use socialite_domain::accounts::access::Caller;
use socialite_domain::transfer::import::Caps;
use socialite_testkit::Opened;

const CAPS: Caps = Caps { max_following: 12 };
const USERS: usize = 40;

fn follow(f: usize, t: usize, lists: &[&str], at_ms: u64) -> String {
    json!({"kind": "follow", "follower": format!("u{f}"), "followee": format!("u{t}"),
        "at_ms": at_ms, "lists": lists})
    .to_string()
}

/// Users, then runs of follows broken by mutes: follows in both
/// directions, under lists or none, an edge repeated later in its run
/// under other lists, and no follower past the cap.
fn records(seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut lines: Vec<String> = (0..USERS)
        .map(|i| json!({"kind": "user", "id": format!("u{i}")}).to_string())
        .collect();
    let mut made: Vec<(usize, usize)> = Vec::new();
    for n in 0..300u64 {
        if n % 37 == 36 {
            let (u, t) = (rng.below(USERS), rng.below(USERS));
            if u != t {
                lines.push(
                    json!({"kind": "mute", "user": format!("u{u}"), "target": format!("u{t}")})
                        .to_string(),
                );
            }
            continue;
        }
        let lists: &[&str] = match rng.below(4) {
            0 => &["close"],
            1 => &["close", "work"],
            _ => &[],
        };
        let (f, t) = if !made.is_empty() && rng.below(6) == 0 {
            made[rng.below(made.len())]
        } else {
            (rng.below(USERS), rng.below(USERS))
        };
        let already = made.iter().filter(|(a, _)| *a == f).count();
        let repeat = made.contains(&(f, t));
        if f == t || (!repeat && already >= CAPS.max_following as usize) {
            continue;
        }
        if !repeat {
            made.push((f, t));
        }
        lines.push(follow(f, t, lists, 1_000 + n));
    }
    lines
}

async fn exported(t: &Opened) -> Vec<String> {
    let mut out = Vec::new();
    export(&*t.backends.transfer, &mut out, 1).await.unwrap();
    // Every line but the header, whose time differs.
    String::from_utf8(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

async fn runs_store_what_one_at_a_time_stores(one: Opened, many: Opened, refused: Opened) {
    let text = export_stream(&records(7));
    import(&*one.backends.transfer, text.as_bytes(), 1, &CAPS)
        .await
        .unwrap();
    import(&*many.backends.transfer, text.as_bytes(), 1_000, &CAPS)
        .await
        .unwrap();
    let (a, b) = (exported(&one).await, exported(&many).await);
    let follows = a.iter().filter(|l| l.contains("\"follow\"")).count();
    assert!(follows > 100, "{follows} follows");
    assert_eq!(a, b);
    // The notices the follows made, which no export holds.
    let (one, many) = (
        Reads::new(one.backends.stores()),
        Reads::new(many.backends.stores()),
    );
    let mut told = 0;
    for i in 0..USERS {
        let user = format!("u{i}");
        let page = |r: &Reads| {
            let (r, user) = (r.clone(), user.clone());
            async move {
                r.notifications(&Caller::Trusted, &user, Some(100), None)
                    .await
                    .unwrap()
                    .items
            }
        };
        let (a, b) = (page(&one).await, page(&many).await);
        told += a.iter().map(|n| n.count).sum::<u64>();
        assert_eq!(a, b, "{user}'s notifications");
    }
    assert!(told > 100, "{told} notices");
    // A follow of a user who blocks the follower, third in its run: the
    // batch is refused, and the line named is that follow's.
    let mut lines: Vec<String> = (0..4)
        .map(|i| json!({"kind": "user", "id": format!("u{i}")}).to_string())
        .collect();
    lines.push(json!({"kind": "block", "user": "u3", "target": "u0"}).to_string());
    lines.extend([
        follow(0, 1, &[], 5),
        follow(0, 2, &["a"], 5),
        follow(0, 3, &[], 5),
    ]);
    lines.push(follow(1, 2, &[], 5));
    refused_at(&refused, &lines, "blocked", 9).await;
    // One follower's run past the cap: the follow past it is refused, as
    // alone, though the count was read once for the run.
    let mut lines: Vec<String> = (0..20)
        .map(|i| json!({"kind": "user", "id": format!("c{i}")}).to_string())
        .collect();
    lines.extend((1..20).map(|i| {
        json!({"kind": "follow", "follower": "c0", "followee": format!("c{i}"), "at_ms": 5})
            .to_string()
    }));
    let past = 1 + 20 + CAPS.max_following + 1;
    refused_at(&refused, &lines, "too_many_following", past).await;
}

/// Imports `lines` in one batch, expecting a refusal with `code` at `line`.
async fn refused_at(t: &Opened, lines: &[String], code: &str, line: u64) {
    let e = import(
        &*t.backends.transfer,
        export_stream(lines).as_bytes(),
        100,
        &CAPS,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), code, "{e}");
    let at = format!("line {line}: ");
    assert!(e.message().starts_with(&at), "{}", e.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_of_follows_store_what_one_at_a_time_stores_on_the_embedded_store() {
    let open = |tag: &'static str| async move {
        open(Kind::Embedded, Default::default(), "runs", tag)
            .await
            .unwrap()
    };
    let (one, many, refused) = (open("one").await, open("many").await, open("refused").await);
    runs_store_what_one_at_a_time_stores(one, many, refused).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_of_follows_store_what_one_at_a_time_stores_on_mongodb() {
    let test = "runs_of_follows_store_what_one_at_a_time_stores_on_mongodb";
    let open = |tag: &'static str| open(Kind::MongoStores, Default::default(), test, tag);
    let (Some(one), Some(many), Some(refused)) =
        (open("one").await, open("many").await, open("refused").await)
    else {
        return;
    };
    runs_store_what_one_at_a_time_stores(one, many, refused).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_of_follows_store_what_one_at_a_time_stores_on_the_toy_store() {
    let open = |tag: &'static str| async move { toy::open(Default::default(), tag).await.unwrap() };
    let (one, many, refused) = (open("one").await, open("many").await, open("refused").await);
    runs_store_what_one_at_a_time_stores(one, many, refused).await;
}
