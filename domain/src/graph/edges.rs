//! Many edge changes in one transaction (a bulk load, a run of an import's
//! follows): each decided by the rules of one
//! ([`change_edge_at`](crate::graph::edge::change_edge_at)), as
//! if made one after another. What those rules read that the changes
//! share is read once (who exists; each follower's count and lists), and
//! the steps are applied together, each kind in one run, so a backend can
//! write each table in one pass and in key order.

use crate::checks::EdgeChange;
use crate::graph::edge::{plan_change, FollowerNow};
use crate::ids::UserId;
use crate::plan::{Step, Txn};
use std::collections::{HashMap, HashSet};

/// Makes `changes` (each with the time a new edge gets) in `txn`, as
/// [`change_edge_at`](crate::graph::edge::change_edge_at) one after
/// another would; how many changed
/// something. The first refused refuses them all (the transaction ends),
/// though which of several refused edges is named may differ: the changes
/// are planned in edge order.
pub async fn change_edges<T: Txn>(
    txn: &mut T,
    changes: &[(EdgeChange, u64)],
) -> Result<usize, T::Error> {
    let mut changed = 0;
    for round in rounds(changes) {
        changed += change_distinct(txn, round).await?;
    }
    Ok(changed)
}

/// The changes in rounds of distinct edges, in edge order: changes of
/// distinct edges commute, and a repeated edge's change waits for the
/// round after its earlier one, so it reads what that one wrote.
fn rounds(changes: &[(EdgeChange, u64)]) -> Vec<Vec<&(EdgeChange, u64)>> {
    let mut seen: HashMap<(&UserId, &UserId), usize> = HashMap::with_capacity(changes.len());
    let mut rounds: Vec<Vec<&(EdgeChange, u64)>> = Vec::new();
    for c in changes {
        let n = seen
            .entry((c.0.follower(), c.0.followee()))
            .and_modify(|n| *n += 1)
            .or_insert(0);
        if rounds.len() == *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push(c);
    }
    for round in &mut rounds {
        round.sort_unstable_by(|a, b| {
            (a.0.follower(), a.0.followee()).cmp(&(b.0.follower(), b.0.followee()))
        });
    }
    rounds
}

/// Changes of distinct edges, in follower order.
async fn change_distinct<T: Txn>(
    txn: &mut T,
    round: Vec<&(EdgeChange, u64)>,
) -> Result<usize, T::Error> {
    let mut names: Vec<&UserId> = round
        .iter()
        .flat_map(|(c, _)| c.required())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    names.sort_unstable();
    let found: HashSet<UserId> = txn.existing_users(&names).await?.into_iter().collect();
    if round.len() > 1 {
        let pairs: Vec<(&UserId, &UserId)> = round
            .iter()
            .map(|(c, _)| (c.follower(), c.followee()))
            .collect();
        txn.read_ahead_edges(&pairs).await?;
    }
    let mut steps = Vec::with_capacity(round.len() * 3);
    let (mut changed, mut follower) = (0, None);
    let mut now = FollowerNow::default();
    for (change, at_ms) in round {
        if follower != Some(change.follower()) {
            follower = Some(change.follower());
            now = FollowerNow::default();
        }
        let (t, planned) =
            plan_change(txn, change, *at_ms, |u| found.contains(u), &mut now).await?;
        changed += usize::from(t.changed());
        steps.extend(planned);
    }
    // Stable: within a kind, the steps keep edge order (and events theirs).
    steps.sort_by_key(run_of);
    txn.apply(&steps).await?;
    Ok(changed)
}

/// Which run a step of an edge change joins.
fn run_of(step: &Step) -> u8 {
    match step {
        Step::AddEdge { .. } => 0,
        Step::RefileEdge { .. } => 1,
        Step::RemoveEdge { .. } => 2,
        Step::MoveLists { .. } => 3,
        Step::FollowCounts { .. } => 4,
        Step::Emit(_) => 6,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::EdgeOp;

    fn follow(f: &str, t: &str) -> (EdgeChange, u64) {
        let (f, t) = (UserId::parse(f).unwrap(), UserId::parse(t).unwrap());
        (EdgeChange::new(f, t, EdgeOp::Follow).unwrap(), 0)
    }

    fn names(round: &[&(EdgeChange, u64)]) -> Vec<String> {
        round
            .iter()
            .map(|(c, _)| format!("{}>{}", c.follower(), c.followee()))
            .collect()
    }

    #[test]
    fn a_repeated_edge_waits_for_the_next_round_and_each_round_is_in_edge_order() {
        let changes = [
            follow("b", "a"),
            follow("a", "c"),
            follow("b", "a"),
            follow("a", "b"),
            follow("b", "a"),
            follow("a", "c"),
        ];
        let rounds = rounds(&changes);
        let rounds: Vec<Vec<String>> = rounds.iter().map(|r| names(r)).collect();
        assert_eq!(
            rounds,
            [vec!["a>b", "a>c", "b>a"], vec!["a>c", "b>a"], vec!["b>a"]]
        );
    }
}
