//! `Posts::newest_by`, the heap merge of several authors' posts that
//! read-time merges and hybrid fanout use, on every backend: exact at any
//! depth and in any id range, through posts, deletions and a user's
//! deletion, whatever a backend keeps in memory in front of its index.

mod common;

use common::ports::{open, Kind};
use socialite_core::feed::config::FeedConfig;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::Post;
use socialite_core::ports::IdRange;
use socialite_core::sim::Rng;
use socialite_domain::deletion::cascade::DeletionStage;
use std::collections::BTreeSet;

fn u(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

fn post(id: u64, author: &str) -> Post {
    Post::written(PostId(id), u(author), format!("m{id}"), None, vec![])
}

/// What `newest_by` must answer: the newest `limit` of the authors' posts
/// in the range, newest first.
fn oracle(
    posts: &BTreeSet<(u64, String)>,
    authors: &[&str],
    range: IdRange,
    limit: usize,
) -> Vec<(u64, String)> {
    posts
        .iter()
        .rev()
        .filter(|(id, a)| {
            authors.contains(&a.as_str())
                && range.below.is_none_or(|b| *id < b.0)
                && range.from.is_none_or(|f| *id >= f.0)
        })
        .take(limit)
        .cloned()
        .collect()
}

async fn newest_by_is_exact(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "newest_by_is_exact", "newest").await else {
        return;
    };
    let c = &t.backends.content;
    let names = ["ann", "bo", "cy"];
    for n in names {
        c.put_user(&u(n), None).await.unwrap();
    }
    let mut rng = Rng::new(7);
    let mut posts: BTreeSet<(u64, String)> = BTreeSet::new();
    let mut next_id = 1_000u64;
    for step in 0..400 {
        // Mostly posts (ann posts most, so that she has far more posts than
        // a backend may keep in memory), some deletions, many reads.
        let roll = rng.below(10);
        if roll < 5 {
            let author = names[[0, 0, 0, 1, 2][rng.below(5)]];
            next_id += 1 + rng.below(3) as u64;
            c.create_post(post(next_id, author)).await.unwrap();
            posts.insert((next_id, author.to_string()));
        } else if roll < 6 && !posts.is_empty() {
            let victim = posts.iter().nth(rng.below(posts.len())).cloned().unwrap();
            c.delete_post(PostId(victim.0)).await.unwrap();
            posts.remove(&victim);
        } else {
            let authors: Vec<&str> = names.iter().copied().filter(|_| rng.below(3) > 0).collect();
            let span = (next_id - 1_000 + 2) as usize;
            let below = (rng.below(2) == 0).then(|| PostId(1_000 + rng.below(span) as u64));
            let from = (rng.below(4) == 0).then(|| PostId(1_000 + rng.below(span) as u64));
            let range = IdRange { below, from };
            let limit = [1, 20, 51, 120][rng.below(4)];
            let ids: Vec<UserId> = authors.iter().map(|a| u(a)).collect();
            let got: Vec<(u64, String)> = c
                .newest_by(&ids, range, limit)
                .await
                .unwrap()
                .into_iter()
                .map(|e| (e.post.0, e.author.to_string()))
                .collect();
            let want = oracle(&posts, &authors, range, limit);
            assert_eq!(
                got, want,
                "step {step}: {authors:?} {range:?} limit {limit}"
            );
        }
    }
    // A user's deletion takes all their posts at once.
    let all: Vec<UserId> = names.iter().map(|a| u(a)).collect();
    let everything = IdRange {
        below: None,
        from: None,
    };
    assert!(!c.newest_by(&all, everything, 500).await.unwrap().is_empty());
    assert!(c.begin_deletion(&u("ann")).await.unwrap());
    while c
        .deletion_step(&u("ann"), DeletionStage::Posts, 7)
        .await
        .unwrap()
    {}
    posts.retain(|(_, a)| a != "ann");
    let got: Vec<u64> = c
        .newest_by(&all, everything, 500)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.post.0)
        .collect();
    let want: Vec<u64> = oracle(&posts, &names, everything, 500)
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(got, want, "no post of a deleted user remains");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded() {
    newest_by_is_exact(Kind::Embedded).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mongodb_kafka() {
    newest_by_is_exact(Kind::MongoKafka).await
}
