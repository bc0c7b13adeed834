//! The export format's property: any history the write path can make
//! exports, imports into a fresh store and exports again unchanged, and a
//! second import of it changes nothing. The histories are the differential
//! test's: blocks after likes, reposts and replies, deleted originals
//! under their reposts and replies, deleted and re-created accounts,
//! mutes, lists, groups and markers.

use super::harness::Harness;
use super::history::{feed, play};
use crate::open::Opener;
use socialite_core::backends::Backends;
use socialite_core::feed::config::FeedModel;
use socialite_core::transfer::export::export;
use socialite_core::transfer::import::import;
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::Relation;
use socialite_domain::transfer::import::Caps;

/// Records per import transaction: small, so that a history spans many.
const BATCH: usize = 23;

async fn exported(b: &Backends) -> String {
    let mut out = Vec::new();
    export(&*b.transfer, &mut out, 1).await.unwrap();
    String::from_utf8(out).unwrap()
}

/// What the histories of a run held that an import must not decide again.
#[derive(Debug, Default)]
struct Seen {
    /// Replies whose post was deleted.
    gone_replies: usize,
    /// Likes between two users one of whom blocks the other.
    likes_across_blocks: usize,
}

/// Over the histories of `seeds` (`SOCIALITE_SEED` picks one): the store
/// `open` opens is exported, the export imported into another store it
/// opens, which exports the same (every line but the header's time). Each
/// history holds what an import must carry as it was and not decide again
/// (its [`epilogue`] makes sure of it): a reply to a deleted post, a like
/// across a block.
pub async fn histories_export_import_and_export_the_same(
    open: Opener,
    seeds: impl IntoIterator<Item = u64>,
) {
    let seeds: Vec<u64> = match std::env::var("SOCIALITE_SEED") {
        Ok(s) => vec![s.parse().expect("SOCIALITE_SEED is a number")],
        Err(_) => seeds.into_iter().collect(),
    };
    for &seed in &seeds {
        let mut seen = Seen::default();
        let config = feed(FeedModel::Cache, seed % 2 == 0, seed);
        let Some(mut h) = Harness::open(open, config).await else {
            return;
        };
        rich_history(&mut h, seed).await;
        let text = exported(&h.backends).await;
        note(&text, &mut seen);
        let Some(target) = open(config, "round_trip").await else {
            return;
        };
        let to = &*target.backends.transfer;
        let caps = Caps::default();
        let done = import(to, text.as_bytes(), BATCH, &caps)
            .await
            .unwrap_or_else(|e| panic!("seed {seed}: the export does not import: {e}\n{text}"));
        assert_eq!(done.records, done.changed, "seed {seed}: a fresh store");
        let again = exported(&target.backends).await;
        let body = |t: &str| t.lines().skip(1).map(String::from).collect::<Vec<_>>();
        assert_eq!(body(&again), body(&text), "seed {seed}");
        let rerun = import(to, text.as_bytes(), BATCH, &caps).await.unwrap();
        assert_eq!(
            rerun.changed, 0,
            "seed {seed}: a second import changes nothing"
        );
        eprintln!("the history of seed {seed} held {seen:?}");
        assert!(
            seen.gone_replies > 0 && seen.likes_across_blocks > 0,
            "seed {seed}: the history held what an import must not decide again: {seen:?}"
        );
    }
}

/// The random history of `seed`, with [`epilogue`] after it, fanned out.
pub async fn rich_history(h: &mut Harness, seed: u64) {
    play(h, seed, 300, 12).await;
    epilogue(h, seed).await;
    h.drain().await;
}

/// Acts that leave what a random history may not reach in a few hundred
/// steps, on top of it: likes, reposts and replies before a block, an
/// original deleted under its reposts and replies, an account deleted
/// and made again, a profile, a mute and markers.
async fn epilogue(h: &mut Harness, seed: u64) {
    let c = &Caller::Trusted;
    let i = &h.ingest;
    let (a, b, d) = ("rt_a", "rt_b", "rt_d");
    let profile = serde_json::json!({ "name": "A", "seed": seed });
    i.put_user(c, a, Some(profile)).await.unwrap();
    for u in [b, d] {
        i.put_user(c, u, None).await.unwrap();
    }
    i.follow(c, b, a, Some(&["close"])).await.unwrap();
    let kept = i
        .create_post(c, a, "kept @rt_b".into(), None)
        .await
        .unwrap();
    let gone = i.create_post(c, a, "gone".into(), None).await.unwrap();
    let (kept, gone) = (kept.id.to_string(), gone.id.to_string());
    i.like(c, b, &kept, true).await.unwrap();
    i.repost(c, d, &kept, true).await.unwrap();
    i.repost(c, b, &gone, true).await.unwrap();
    let reply = i.create_reply(c, b, "yes @rt_a".into(), None, Some(&kept));
    let reply = reply.await.unwrap().id.to_string();
    i.create_reply(c, b, "to the gone".into(), None, Some(&gone))
        .await
        .unwrap();
    i.like(c, d, &reply, true).await.unwrap();
    i.like(c, d, &gone, true).await.unwrap();
    i.set_marker(c, b, "home", &kept, false).await.unwrap();
    // A block after them all: they stand.
    i.relation(c, a, b, Relation::Block, true).await.unwrap();
    i.relation(c, d, b, Relation::Mute, true).await.unwrap();
    i.delete_post(c, &gone).await.unwrap();
    // An account deleted and made again: its likes and reposts go, a
    // relation others keep to it stays.
    i.relation(c, b, d, Relation::Mute, true).await.unwrap();
    i.delete_user(c, d).await.unwrap();
    i.put_user(c, d, None).await.unwrap();
    i.follow(c, d, a, None).await.unwrap();
}

/// Counts in an export what an import must carry as it was.
fn note(text: &str, seen: &mut Seen) {
    use serde_json::Value;
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let field = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    let blocks: Vec<(String, String)> = lines
        .iter()
        .filter(|v| v["kind"] == "block")
        .map(|v| (field(v, "user"), field(v, "target")))
        .collect();
    let authors: std::collections::HashMap<String, String> = lines
        .iter()
        .filter(|v| v["kind"] == "post")
        .map(|v| (field(v, "id"), field(v, "author")))
        .collect();
    for v in &lines {
        if v["kind"] == "post" && v["reply_to"]["gone"] == true {
            seen.gone_replies += 1;
        }
        if v["kind"] == "like" {
            let (user, author) = (field(v, "user"), authors[&field(v, "post")].clone());
            let blocked = |a: &str, b: &str| blocks.iter().any(|(x, y)| x == a && y == b);
            if blocked(&user, &author) || blocked(&author, &user) {
                seen.likes_across_blocks += 1;
            }
        }
    }
}
