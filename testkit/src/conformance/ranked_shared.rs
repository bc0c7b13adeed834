//! Ranked orders' snapshots where several processes serve the same readers
//! (`socialite_core::ports::RankSnapshots`): a store that shares them keeps
//! each exactly, for its reader only, and a reader's newest few; a later
//! page asked of another process than the one that ranked the first
//! continues the same order. Where no store shares them (one process
//! serves everything), another process's cursor is `cursor_expired`.

use super::ranked::{at, page};
use super::*;
use socialite_core::ids::now_ms;
use socialite_core::reads::ranked::{Order, RankedPage, Ranking};
use socialite_core::reads::Reads;
use socialite_domain::feed::rank::{Parts, Reason};
use socialite_domain::feed::snapshot::{Snapshot, SnapshotEntry, PER_READER};
use std::collections::HashSet;

fn snapshot(id: u64, reader: &str, expires_ms: u64) -> Snapshot {
    let reader = u(reader);
    let entries = Reason::ALL
        .into_iter()
        .enumerate()
        .map(|(i, reason)| SnapshotEntry {
            post: PostId(1_000 + i as u64),
            item: PostId(2_000 + i as u64),
            author: u("author"),
            reason,
            parts: Parts::from_array([0.1, 1.5, 2.25, 0.3, 4.0, 0.5, 1e-9 * i as f64]),
            more: i as u64 * 3,
        })
        .collect();
    Snapshot {
        id,
        timeline: TimelineId::home(&reader),
        reader,
        expires_ms,
        entries,
    }
}

pub async fn rank_snapshot_store(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "rank_snapshot_store").await else {
        return;
    };
    let Some(store) = t.backends.snapshots.clone() else {
        return; // one process serves everything: no store shares them
    };
    // Kept exactly, for its reader only.
    let later = now_ms() + 600_000;
    let kept = snapshot(u64::MAX - 7, "rd", later);
    store.keep_snapshot(&kept).await.unwrap();
    assert_eq!(
        store.snapshot(&u("rd"), kept.id).await.unwrap(),
        Some(kept.clone())
    );
    assert_eq!(store.snapshot(&u("other"), kept.id).await.unwrap(), None);
    assert_eq!(store.snapshot(&u("rd"), 42).await.unwrap(), None);
    // A reader holds their newest few.
    let ids: Vec<u64> = (1..=PER_READER as u64 + 3).collect();
    for (n, id) in ids.iter().enumerate() {
        let s = snapshot(*id, "many", later + n as u64 * 1_000);
        store.keep_snapshot(&s).await.unwrap();
    }
    let held = || async {
        let mut held = Vec::new();
        for id in &ids {
            if store.snapshot(&u("many"), *id).await.unwrap().is_some() {
                held.push(*id);
            }
        }
        held
    };
    eventually("only the newest snapshots held", || async {
        held().await == ids[ids.len() - PER_READER..]
    })
    .await;
    assert!(
        store.snapshot(&u("rd"), kept.id).await.unwrap().is_some(),
        "another reader's stay"
    );
}

/// `reader`'s balanced page of 20 at `cursor`, as `reads` serves it.
async fn later_page(
    reads: &Reads,
    reader: &str,
    cursor: &str,
) -> socialite_core::Result<RankedPage> {
    let all = &Caller::Trusted;
    reads
        .ranked_timeline(
            all,
            reader,
            None,
            Order::Balanced,
            Some(20),
            Some(cursor),
            None,
        )
        .await
}

pub async fn ranked_pages_across_processes(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "ranked_across").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let start = now_ms() - 2 * 3_600_000;
    for name in ["rd", "rd2", "a0", "a1", "a2", "a3", "a4"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for reader in ["rd", "rd2"] {
        for i in 0..5 {
            g.change_edge(&edge(reader, &format!("a{i}"), EdgeOp::Follow))
                .await
                .unwrap();
        }
    }
    for m in 0..50 {
        let author = format!("a{}", m % 5);
        c.create_post(post(at(start, m).0, &author, "news"))
            .await
            .unwrap();
    }
    drain_outbox(b).await;
    // Two processes over the same stores: each holds its own snapshots.
    let patient = Ranking {
        deadline: Duration::from_secs(60),
        ..Ranking::default()
    };
    let here = Reads::with_ranking(b.stores(), patient.clone());
    let there = Reads::with_ranking(b.stores(), patient);
    let whole = page(&here, Order::Balanced, 200, None, None).await;
    let whole: Vec<PostId> = whole.items.iter().map(|i| i.item.post.id).collect();
    let first = page(&here, Order::Balanced, 20, None, None).await;
    let cursor = first.next_cursor.clone().expect("more than one page");
    let later = later_page(&there, "rd", &cursor).await;
    if b.snapshots.is_none() {
        assert_eq!(later.unwrap_err().code(), "cursor_expired");
        return;
    }
    // Page two from the other process, then three from the first again:
    // the order the first page ranked (a page's diversity is its own, so
    // compared as a set), nothing repeated, nothing skipped.
    let second = later.unwrap();
    let third_cursor = second.next_cursor.clone().expect("a third page");
    let third = page(&here, Order::Balanced, 20, Some(&third_cursor), None).await;
    assert!(third.next_cursor.is_none());
    let paged: Vec<PostId> = [&first, &second, &third]
        .iter()
        .flat_map(|p| p.items.iter().map(|i| i.item.post.id))
        .collect();
    let once: HashSet<PostId> = paged.iter().copied().collect();
    assert_eq!(once.len(), paged.len(), "repeated: {paged:?}");
    assert_eq!(once, whole.into_iter().collect::<HashSet<_>>());
    assert_eq!(once.len(), 50);
    // Another reader's cursor is not theirs to read.
    let theirs = later_page(&there, "rd2", &cursor).await.unwrap_err();
    assert_eq!(theirs.code(), "cursor_expired");
    // An order past its time is gone everywhere.
    let brief = Ranking {
        deadline: Duration::from_secs(60),
        snapshot_ttl: Duration::ZERO,
        ..Ranking::default()
    };
    let brief = Reads::with_ranking(b.stores(), brief);
    let gone = page(&brief, Order::Balanced, 20, None, None).await;
    let gone = gone.next_cursor.expect("more than one page");
    let expired = later_page(&there, "rd", &gone).await.unwrap_err();
    assert_eq!(expired.code(), "cursor_expired");
}
