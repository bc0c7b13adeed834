//! A run of follows imported at once (an import's batch, a bulk load's) is
//! decided as the same follows one after another would be, whatever the
//! store reads ahead for the run (`Txn::read_ahead_edges`,
//! `Txn::read_ahead_notices`): the edges and lists held, blocks either
//! way, each follower's count against the cap as the run moves it, and
//! the notices and entries held.

use super::likes::export;
use super::transfer_modes::followers_told;
use super::*;
use socialite_domain::transfer::admit::Caps;
use socialite_domain::transfer::record::Record;

fn follow(follower: &str, followee: &str, lists: &[&str]) -> Record {
    Record::Follow {
        follower: u(follower),
        followee: u(followee),
        at_ms: 1_700_000_000_000,
        lists: lists.iter().map(|l| ListName::parse(l).unwrap()).collect(),
    }
}

/// Who told `user` they follow them, in name order.
async fn told(b: &Backends, user: &str) -> Vec<String> {
    let mut told = followers_told(b, user).await;
    told.sort();
    told
}

/// Every follow held, as `follower>followee:lists`.
async fn follows(b: &Backends) -> Vec<String> {
    let records = export(b).await.into_iter();
    let mut out: Vec<String> = records
        .filter_map(|r| match r {
            Record::Follow {
                follower,
                followee,
                lists,
                ..
            } => {
                let lists: Vec<&str> = lists.iter().map(ListName::as_str).collect();
                Some(format!("{follower}>{followee}:{}", lists.join(",")))
            }
            _ => None,
        })
        .collect();
    out.sort();
    out
}

pub async fn runs_read_ahead(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "runs_read_ahead").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["ann", "bo", "cy", "dee", "eve", "fay"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    let import =
        |records: Vec<Record>, caps: Caps| async move { b.transfer.import(&records, &caps).await };
    let caps = Caps::default();

    // A run by two followers: every edge with its lists, and ann told of
    // both in one entry.
    let run = vec![
        follow("bo", "ann", &["close"]),
        follow("bo", "cy", &[]),
        follow("dee", "ann", &[]),
        follow("dee", "cy", &["close"]),
    ];
    assert_eq!(import(run.clone(), caps).await.unwrap(), 4);
    let held = ["bo>ann:close", "bo>cy:", "dee>ann:", "dee>cy:close"];
    assert_eq!(follows(b).await, held);
    assert_eq!(told(b, "ann").await, ["bo", "dee"]);
    // The same run again changes nothing: the edges, lists and notices
    // are held.
    assert_eq!(import(run, caps).await.unwrap(), 0);
    assert_eq!(follows(b).await, held);
    assert_eq!(told(b, "ann").await, ["bo", "dee"]);

    // A run that refiles a held edge and adds to the entry held.
    let run = vec![
        follow("bo", "ann", &[]),
        follow("eve", "ann", &[]),
        follow("eve", "bo", &[]),
    ];
    assert_eq!(import(run, caps).await.unwrap(), 3);
    assert!(follows(b).await.contains(&"bo>ann:".to_owned()));
    assert_eq!(told(b, "ann").await, ["bo", "dee", "eve"]);

    // A run that follows one account twice: the second reads what the
    // first wrote (one edge, refiled; one count).
    let run = vec![
        follow("cy", "dee", &["x"]),
        follow("cy", "eve", &[]),
        follow("cy", "dee", &["y"]),
    ];
    assert_eq!(import(run, caps).await.unwrap(), 3);
    let cy: Vec<String> = follows(b)
        .await
        .into_iter()
        .filter(|f| f.starts_with("cy>"))
        .collect();
    assert_eq!(cy, ["cy>dee:y", "cy>eve:"]);
    let held = c.get_user(&u("cy")).await.unwrap().unwrap();
    assert_eq!(held.following, 2);

    // A block either way refuses the run, and none of it is held.
    let block = RelationChange::new(u("fay"), u("cy"), Relation::Block, true).unwrap();
    g.change_relation(&block).await.unwrap();
    let before = follows(b).await;
    for blocked in [follow("cy", "fay", &[]), follow("fay", "cy", &[])] {
        let run = vec![follow("ann", "eve", &[]), blocked];
        let e = import(run, caps).await.unwrap_err();
        assert_eq!(e.code(), "blocked");
        assert_eq!(follows(b).await, before);
    }

    // Each follower's count, as the run moves it, against the cap: bo
    // follows two, so a third is the cap's and a fourth is past it.
    let capped = Caps { max_following: 3 };
    let run = vec![follow("bo", "dee", &[]), follow("bo", "eve", &[])];
    let e = import(run, capped).await.unwrap_err();
    assert_eq!(e.code(), "too_many_following");
    assert_eq!(follows(b).await, before);
    let run = vec![follow("bo", "dee", &[]), follow("ann", "eve", &[])];
    assert_eq!(import(run, capped).await.unwrap(), 2);
}
