//! A run of memberships imported at once is decided as the same joins one
//! after another would be, whatever the store reads ahead for the run
//! (`Txn::read_ahead_members`): memberships held, a group joined twice in
//! one run, each member's count against the cap as the run moves it, and
//! a member who does not exist.

use super::*;
use socialite_domain::checks::MAX_GROUPS_PER_USER;
use socialite_domain::transfer::admit::Caps;
use socialite_domain::transfer::record::Record;

fn join(group: &str, user: &str) -> Record {
    Record::Member {
        group: GroupName::parse(group).unwrap(),
        user: u(user),
    }
}

/// The groups `user` is in, in name order.
async fn groups(b: &Backends, user: &str) -> Vec<String> {
    let held = b.graph.groups_of(&[u(user)]).await.unwrap();
    let mut out: Vec<String> = held[0].iter().map(|g| g.as_str().to_owned()).collect();
    out.sort();
    out
}

pub async fn runs_of_members(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "runs_of_members").await else {
        return;
    };
    let b = &t.backends;
    for name in ["ann", "bo"] {
        b.content.put_user(&u(name), None).await.unwrap();
    }
    let caps = Caps::default();
    let import = |records: Vec<Record>| async move { b.transfer.import(&records, &caps).await };

    // ann joins g1 twice in one run: the second reads what the first wrote.
    let run = vec![
        join("g1", "ann"),
        join("g2", "ann"),
        join("g1", "bo"),
        join("g1", "ann"),
    ];
    assert_eq!(import(run.clone()).await.unwrap(), 3);
    assert_eq!(groups(b, "ann").await, ["g1", "g2"]);
    assert_eq!(groups(b, "bo").await, ["g1"]);
    // The same run again changes nothing.
    assert_eq!(import(run).await.unwrap(), 0);

    // ann's count as the run moves it: from her two groups, the cap's
    // last join is taken and one more is refused, with none of the run.
    let more = |n: usize| {
        (0..n)
            .map(|i| join(&format!("m{i:03}"), "ann"))
            .collect::<Vec<_>>()
    };
    let e = import(more(MAX_GROUPS_PER_USER - 1)).await.unwrap_err();
    assert_eq!(e.code(), "too_many_groups");
    assert_eq!(groups(b, "ann").await.len(), 2);
    let taken = MAX_GROUPS_PER_USER - 2;
    assert_eq!(import(more(taken)).await.unwrap(), taken);
    assert_eq!(groups(b, "ann").await.len(), MAX_GROUPS_PER_USER);

    // A member who does not exist, after one who does.
    let run = vec![join("g3", "bo"), join("g3", "ghost")];
    assert_eq!(import(run).await.unwrap_err().code(), "user_not_found");
    assert_eq!(groups(b, "bo").await, ["g1"]);
}
