//! Tests of the snapshots ranked orders page over.

use super::*;
use crate::ids::PostId;
use socialite_domain::feed::rank::{Parts, Reason};

fn home(name: &str) -> Feed {
    Feed::Home(UserId::parse(name).unwrap())
}

fn placed(n: u64) -> SnapshotEntry {
    SnapshotEntry {
        post: PostId(n),
        item: PostId(n),
        author: UserId::parse("a").unwrap(),
        reason: Reason::Followed,
        parts: Parts::unranked(),
        more: 0,
    }
}

/// `entries` as a new snapshot of `feed`, for a minute.
fn snap(feed: &Feed, entries: Vec<SnapshotEntry>) -> Snapshot {
    Snapshot {
        id: new_id(),
        reader: feed.owner().unwrap().clone(),
        timeline: feed.id(),
        expires_ms: crate::ids::now_ms() + 60_000,
        entries,
    }
}

#[test]
fn a_snapshot_pages_for_its_reader_only_and_a_reader_holds_a_few() {
    let s = Snapshots::new(Duration::from_secs(60));
    let (alice, bob) = (home("alice"), home("bob"));
    let list = Feed::List(
        UserId::parse("alice").unwrap(),
        socialite_domain::ids::ListName::parse("close").unwrap(),
    );
    let id = s.keep(&alice, snap(&alice, (0..5).map(placed).collect()), None);
    let (page, more) = s.page(&alice, id, 0, 3).unwrap();
    assert_eq!((page.len(), more), (3, true));
    let (page, more) = s.page(&alice, id, 3, 3).unwrap();
    assert_eq!((page[0].post, page.len(), more), (PostId(3), 2, false));
    assert!(s.page(&bob, id, 0, 3).is_none(), "another reader's");
    assert!(s.page(&list, id, 0, 3).is_none(), "another timeline's");
    let newer: Vec<u64> = (0..PER_READER)
        .map(|_| s.keep(&alice, snap(&alice, vec![placed(1)]), None))
        .collect();
    assert!(s.page(&alice, id, 0, 1).is_none(), "the oldest went");
    assert!(newer.iter().all(|n| s.page(&alice, *n, 0, 1).is_some()));
    let gone = Snapshots::new(Duration::ZERO);
    let id = gone.keep(&alice, snap(&alice, vec![placed(1)]), None);
    std::thread::sleep(Duration::from_millis(2));
    assert!(gone.page(&alice, id, 0, 1).is_none(), "expired");
}

#[test]
fn a_snapshot_of_its_first_page_ranks_the_rest_when_asked() {
    use socialite_domain::feed::rank::Signals;
    use socialite_domain::feed::rank_inputs::Fresh;
    let s = Snapshots::new(Duration::from_secs(60));
    let alice = home("alice");
    let now = crate::ids::now_ms();
    let fresh: Vec<Fresh> = (0..40u64)
        .map(|n| {
            let id = PostId(PostId::first_at(now - 1_000 * (40 - n)).0);
            let author = UserId::parse(&format!("a{}", n % 3)).unwrap();
            Fresh {
                position: id,
                post: id,
                author: author.clone(),
                placer: author,
                reposted_by: 0,
                counts: Default::default(),
            }
        })
        .rev()
        .collect();
    let inputs = Arc::new(RankInputs::new(
        &fresh,
        Signals::default(),
        Default::default(),
    ));
    let weights = Weights::default();
    let whole = entries_of(&inputs, &inputs.balanced(&weights, now, 15));
    let (first, all) = inputs.balanced_first(&weights, now, 15);
    let rest = Rest {
        inputs: inputs.clone(),
        weights,
        now_ms: now,
        page: 15,
        first: first.iter().map(|r| r.index).collect(),
        left: all - first.len(),
    };
    let id = s.keep_with(
        &alice,
        snap(&alice, entries_of(&inputs, &first)),
        None,
        Some(rest),
    );
    assert_eq!(s.held.lock().unwrap().entries, 40, "the rest counts");
    let (page, more) = s.page(&alice, id, 0, 15).unwrap();
    assert_eq!((page, more), (whole[..15].to_vec(), true));
    let (page, more) = s.page(&alice, id, 15, 15).unwrap();
    assert_eq!((page, more), (whole[15..30].to_vec(), true));
    let (page, more) = s.page(&alice, id, 30, 15).unwrap();
    assert_eq!((page, more), (whole[30..].to_vec(), false));
    assert!(
        s.page(&home("bob"), id, 15, 15).is_none(),
        "another reader's"
    );
    assert_eq!(s.held.lock().unwrap().entries, 40);
}

#[test]
fn a_first_page_is_reused_while_its_stamp_holds() {
    let s = Snapshots::new(Duration::from_secs(60));
    let alice = home("alice");
    let at = |epoch| Stamp {
        epoch,
        timeline: 7,
        marked: 0,
    };
    let id = s.keep(&alice, snap(&alice, vec![placed(1)]), Some((3, at(1))));
    let within = Duration::from_secs(30);
    assert_eq!(s.reusable(&alice, 3, at(1), within), Some(id));
    assert_eq!(s.reusable(&alice, 3, at(2), within), None, "a write since");
    assert_eq!(
        s.reusable(&alice, 4, at(1), within),
        None,
        "asked otherwise"
    );
    assert_eq!(
        s.reusable(&alice, 3, at(1), Duration::ZERO),
        None,
        "too old"
    );
}

#[test]
fn what_a_reader_replaced_is_forgotten_whatever_the_churn() {
    let s = Snapshots::new(Duration::from_secs(60));
    let alice = home("alice");
    let ids: Vec<u64> = (0..10_000)
        .map(|_| s.keep(&alice, snap(&alice, vec![placed(1)]), None))
        .collect();
    let h = s.held.lock().unwrap();
    assert_eq!(h.by_id.len(), PER_READER);
    assert_eq!(h.by_reader.len(), 1);
    assert_eq!(h.entries, PER_READER);
    assert!(h.order.len() <= 2 * PER_READER + 1025, "{}", h.order.len());
    drop(h);
    assert!(ids[..ids.len() - PER_READER]
        .iter()
        .all(|id| s.page(&alice, *id, 0, 1).is_none()));
    assert!(ids[ids.len() - PER_READER..]
        .iter()
        .all(|id| s.page(&alice, *id, 0, 1).is_some()));
}
