//! Mutes that end by themselves: the end is kept with the mute, muting
//! again replaces it (and says so on the log), the sweep lifts a mute once
//! its end has come (never one made again with a later end, nor one with
//! no end) and the account's posts come back as after any unmute; an
//! unmute removes the end, and an export carries it.

use super::export::exported;
use super::*;
use socialite_core::ingest::Ingest;
use socialite_core::reads::Reads;
use socialite_domain::graph::relations::RelationChange;

pub async fn timed_mutes(open: Opener) {
    for t in each_model(open, "timed_mutes").await.unwrap_or_default() {
        timed_mutes_on(&t.backends).await;
    }
}

async fn home(reads: &Reads) -> Vec<u64> {
    home_ids(reads, "ann").await
}

/// The ends of the `Muted` events the outbox queued, after fanning out
/// what it queued as a worker would.
async fn work(b: &Backends, index: &FollowerIndex) -> Vec<Option<u64>> {
    let events = fan_out(b, index).await;
    let muted = events.iter().filter_map(|e| match e {
        Event::Muted { until_ms, .. } => Some(*until_ms),
        _ => None,
    });
    muted.collect()
}

async fn timed_mutes_on(b: &Backends) {
    let (c, g) = (&b.content, &b.graph);
    let index = FollowerIndex::default();
    let reads = Reads::new(b.stores());
    let ingest = Ingest::new(b, 0).await.unwrap();
    for name in ["ann", "rob", "cat"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for followee in ["rob", "cat"] {
        g.change_edge(&edge("ann", followee, EdgeOp::Follow))
            .await
            .unwrap();
    }
    c.create_post(post(10, "rob", "hello")).await.unwrap();
    c.create_post(post(20, "cat", "hi")).await.unwrap();
    work(b, &index).await;
    assert_eq!(home(&reads).await, [20, 10]);

    let (soon, later) = (5_000_000, 9_000_000);
    let mute_until = |target: &str, at| RelationChange::mute_until(u("ann"), u(target), at);
    let t = g.change_relation(&mute_until("rob", soon).unwrap()).await;
    assert!(t.unwrap().changed);
    let mute_cat = RelationChange::new(u("ann"), u("cat"), Relation::Mute, true).unwrap();
    g.change_relation(&mute_cat).await.unwrap();
    assert_eq!(work(b, &index).await, [Some(soon), None]);
    assert_eq!(home(&reads).await, Vec::<u64>::new());
    assert_eq!(g.mute_end(&u("ann"), &u("rob")).await.unwrap(), Some(soon));
    assert_eq!(g.mute_end(&u("ann"), &u("cat")).await.unwrap(), None);
    assert!(g.mutes_due(soon - 1, 10).await.unwrap().is_empty());
    assert_eq!(g.mutes_due(soon, 10).await.unwrap(), [(u("ann"), u("rob"))]);
    assert!(exported(b)
        .await
        .contains(&format!("Mute ann rob at {soon}")));

    // Muting again replaces the end, and says so; the same end changes nothing.
    let again = g.change_relation(&mute_until("rob", later).unwrap()).await;
    assert!(again.unwrap().changed);
    let same = g.change_relation(&mute_until("rob", later).unwrap()).await;
    assert!(!same.unwrap().changed);
    assert_eq!(work(b, &index).await, [Some(later)]);
    assert_eq!(ingest.end_mutes(soon).await.unwrap(), 0, "made again since");
    let early = RelationChange::lift_ended_mute(u("ann"), u("rob"), soon);
    let early = g.change_relation(&early).await.unwrap();
    assert!(
        early.active && !early.changed,
        "read in the lifting transaction"
    );
    assert_eq!(home(&reads).await, Vec::<u64>::new());

    // Its end come, the sweep lifts it: rob's post is back, the end gone;
    // cat's mute, which has none, stays.
    assert_eq!(ingest.end_mutes(later).await.unwrap(), 1);
    assert_eq!(ingest.end_mutes(later).await.unwrap(), 0, "once");
    work(b, &index).await;
    assert_eq!(home(&reads).await, [10]);
    assert_eq!(g.mute_end(&u("ann"), &u("rob")).await.unwrap(), None);
    assert!(g.mutes_due(u64::MAX, 10).await.unwrap().is_empty());
    assert!(g
        .has_relation(&u("ann"), Relation::Mute, &u("cat"))
        .await
        .unwrap());

    // A timed mute made for good drops its end; one lifted by hand too.
    g.change_relation(&mute_until("rob", soon).unwrap())
        .await
        .unwrap();
    let for_good = RelationChange::new(u("ann"), u("rob"), Relation::Mute, true).unwrap();
    assert!(g.change_relation(&for_good).await.unwrap().changed);
    assert_eq!(g.mute_end(&u("ann"), &u("rob")).await.unwrap(), None);
    g.change_relation(&mute_until("cat", soon).unwrap())
        .await
        .unwrap();
    let unmute = RelationChange::new(u("ann"), u("cat"), Relation::Mute, false).unwrap();
    assert!(g.change_relation(&unmute).await.unwrap().changed);
    assert!(g.mutes_due(u64::MAX, 10).await.unwrap().is_empty());
    assert_eq!(ingest.end_mutes(u64::MAX).await.unwrap(), 0);
    work(b, &index).await;
    assert_eq!(home(&reads).await, [20]);
}
