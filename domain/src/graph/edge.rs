//! A follow, a refiling under other lists, or an unfollow: the facts its
//! rules need and the steps that apply its transition. Also run for each
//! unfollow of a block.

use crate::checks::{EdgeChange, EdgeTransition};
use crate::event::Event;
use crate::graph::relations::{check_not_blocked, FollowOption, Relation};
use crate::ids::{now_ms, ListName, UserId};
use crate::plan::{Step, Txn};

/// Runs every check of `change` on what `txn` holds and applies what its
/// transition decides, in that transaction; a new edge is made now.
pub async fn change_edge<T: Txn>(
    txn: &mut T,
    change: &EdgeChange,
) -> Result<EdgeTransition, T::Error> {
    change_edge_at(txn, change, now_ms()).await
}

/// [`change_edge`], a new edge made at `at_ms` (an imported follow keeps
/// its time).
pub async fn change_edge_at<T: Txn>(
    txn: &mut T,
    change: &EdgeChange,
    at_ms: u64,
) -> Result<EdgeTransition, T::Error> {
    let found = txn.existing_users(&change.required()).await?;
    let mut follower = FollowerNow::default();
    let (transition, planned) =
        plan_change(txn, change, at_ms, |u| found.contains(u), &mut follower).await?;
    if transition.changed() {
        txn.apply(&planned).await?;
    }
    Ok(transition)
}

/// What the rules of a change read about its follower, read when a rule
/// first needs it and moved by each change planned since: how many
/// accounts they follow, and the lists they have. Many changes by one
/// follower (a bulk load) so read each once.
#[derive(Default)]
pub(crate) struct FollowerNow {
    following: Option<u64>,
    /// How the count moved by changes planned before it was read.
    moved: i64,
    lists: Option<Vec<ListName>>,
}

impl FollowerNow {
    /// Moves what is known by a planned transition. A list a transition
    /// leaves is kept as held: whether it still has other members is not
    /// read, so a later change of the batch errs toward `too_many_lists`.
    fn note(&mut self, t: &EdgeTransition) {
        match &mut self.following {
            Some(n) => *n = n.saturating_add_signed(t.count_step),
            None => self.moved += t.count_step,
        }
        if let Some(held) = &mut self.lists {
            for l in &t.added {
                if !held.contains(l) {
                    held.push(l.clone());
                }
            }
        }
    }
}

/// Every check of `change` on what `txn` holds (`exists` tells which
/// users exist, as read in the transaction) and the steps that apply its
/// transition, a new edge made at `at_ms`; nothing written. The one
/// statement of what a follow, refiling or unfollow requires.
pub(crate) async fn plan_change<T: Txn>(
    txn: &mut T,
    change: &EdgeChange,
    at_ms: u64,
    exists: impl Fn(&UserId) -> bool,
    follower_now: &mut FollowerNow,
) -> Result<(EdgeTransition, Vec<Step>), T::Error> {
    change.check_users(|u| Ok(exists(u)))?;
    let (follower, followee) = (change.follower(), change.followee());
    if change.adds() {
        let blocked = txn.blocked_either_way(follower, followee).await?;
        check_not_blocked(change, blocked)?;
    }
    let transition = change.transition(txn.edge_lists(follower, followee).await?);
    if !transition.changed() {
        return Ok((transition, Vec::new()));
    }
    if transition.count_step > 0 {
        let following = match follower_now.following {
            Some(n) => n,
            None => {
                let stored = txn.following_count(follower).await?;
                let n = stored.saturating_add_signed(follower_now.moved);
                *follower_now.following.insert(n)
            }
        };
        change.check_room(&transition, following)?;
    }
    if !transition.added.is_empty() {
        if follower_now.lists.is_none() {
            follower_now.lists = Some(txn.list_names(follower).await?);
        }
        let held = follower_now.lists.as_deref().unwrap_or_default();
        transition.check_list_count(held.len(), |l| Ok(held.contains(l)))?;
    }
    follower_now.note(&transition);
    let mut planned = steps(change, &transition, at_ms);
    if transition.after.is_none() {
        // A follow's options go with it: a later follow starts plain.
        planned.extend(options_off(txn, follower, followee).await?);
    }
    Ok((transition, planned))
}

/// The steps of a transition that changed something, the edge made at `at_ms`.
pub fn steps(change: &EdgeChange, t: &EdgeTransition, at_ms: u64) -> Vec<Step> {
    let (follower, followee) = (change.follower().clone(), change.followee().clone());
    let mut steps = Vec::with_capacity(4);
    match (t.count_step, &t.after) {
        (1, Some(lists)) => steps.push(Step::AddEdge {
            follower: follower.clone(),
            followee: followee.clone(),
            lists: lists.clone(),
            at_ms,
        }),
        (_, None) => steps.push(Step::RemoveEdge {
            follower: follower.clone(),
            followee: followee.clone(),
        }),
        (_, Some(lists)) => steps.push(Step::RefileEdge {
            follower: follower.clone(),
            followee: followee.clone(),
            lists: lists.clone(),
        }),
    }
    if !t.added.is_empty() || !t.removed.is_empty() {
        steps.push(Step::MoveLists {
            follower: follower.clone(),
            followee: followee.clone(),
            added: t.added.clone(),
            removed: t.removed.clone(),
        });
    }
    if t.count_step != 0 {
        steps.push(Step::FollowCounts {
            follower,
            followee,
            step: t.count_step,
        });
    }
    let mut event = t.event.clone();
    if let Some(Event::Followed { at_ms: made, .. }) = &mut event {
        *made = at_ms;
    }
    steps.extend(event.map(Step::Emit));
    steps
}

/// The rows that turn every follow option of `user` for `target` off.
pub(crate) async fn options_off<T: Txn>(
    txn: &mut T,
    user: &UserId,
    target: &UserId,
) -> Result<Vec<Step>, T::Error> {
    let mut steps = Vec::new();
    for option in FollowOption::ALL {
        let relation = Relation::Option(option);
        if txn.relation_exists(user, relation, target).await? {
            steps.push(Step::Relation {
                user: user.clone(),
                relation,
                target: target.clone(),
                active: false,
            });
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::EdgeOp;
    use crate::ids::{ListName, UserId};

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    fn l(s: &str) -> ListName {
        ListName::parse(s).unwrap()
    }

    #[test]
    fn a_new_follow_adds_the_edge_its_lists_and_counts_then_queues() {
        let c = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow)
            .unwrap()
            .with_lists(vec![l("x")]);
        let steps = steps(&c, &c.transition(None), 7);
        let kinds: Vec<&str> = steps.iter().map(kind).collect();
        assert_eq!(kinds, ["add", "lists", "counts", "emit"]);
        assert!(matches!(&steps[0], Step::AddEdge { at_ms: 7, lists, .. } if lists == &[l("x")]));
    }

    #[test]
    fn a_refiling_moves_lists_and_no_count() {
        let c = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow)
            .unwrap()
            .with_lists(vec![]);
        let steps = steps(&c, &c.transition(Some(vec![l("x")])), 7);
        let kinds: Vec<&str> = steps.iter().map(kind).collect();
        assert_eq!(kinds, ["refile", "lists", "emit"]);
    }

    #[test]
    fn an_unfollow_removes_the_edge_and_leaves_its_lists() {
        let c = EdgeChange::new(u("a"), u("b"), EdgeOp::Unfollow).unwrap();
        let steps = steps(&c, &c.transition(Some(vec![l("x")])), 7);
        let kinds: Vec<&str> = steps.iter().map(kind).collect();
        assert_eq!(kinds, ["remove", "lists", "counts", "emit"]);
        assert!(matches!(&steps[2], Step::FollowCounts { step: -1, .. }));
    }

    fn kind(s: &Step) -> &'static str {
        match s {
            Step::AddEdge { .. } => "add",
            Step::RefileEdge { .. } => "refile",
            Step::RemoveEdge { .. } => "remove",
            Step::MoveLists { .. } => "lists",
            Step::FollowCounts { .. } => "counts",
            Step::Relation { .. } | Step::MuteEnd { .. } | Step::NotifySince { .. } => "relation",
            Step::Membership(_) => "membership",
            Step::PutPost(_) => "post",
            Step::RemovePosts { .. }
            | Step::Unmention { .. }
            | Step::MarkDeleting { .. }
            | Step::RemoveUser(_)
            | Step::ForgetCounts(_)
            | Step::ForgetMarkers(_)
            | Step::ForgetFilters(_)
            | Step::ForgetThreadMutes(_)
            | Step::ForgetExclusiveLists(_)
            | Step::ForgetKept(_)
            | Step::ForgetKeptPosts(_) => "deletion",
            Step::PutUser { .. } | Step::SetStanding { .. } => "user",
            Step::Like { .. } | Step::Tally { .. } => "like",
            Step::Repost { .. } => "repost",
            Step::PutNotice(_)
            | Step::RemoveNotice(_)
            | Step::PutNoticeGroup { .. }
            | Step::RemoveNoticeGroup { .. } => "notice",
            Step::PutMarker { .. } => "marker",
            Step::PutFilters { .. } => "filters",
            Step::ThreadMute { .. } => "thread_mute",
            Step::ExclusiveList { .. } => "exclusive_list",
            Step::Keep { .. } | Step::Unkeep { .. } => "kept",
            Step::Emit(_) => "emit",
        }
    }
}
