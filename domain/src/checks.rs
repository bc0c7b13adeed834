//! The checks that refuse a write, and the errors they answer with. An
//! adapter runs the existence checks inside the transaction that writes, so
//! that a concurrent deletion cannot slip between check and write, but which
//! users must exist, in which order they are checked, and what the client is
//! told are decided here.

use crate::error::{Error, Result};
use crate::event::Event;
use crate::ids::{GroupName, ListName, PostId, UserId};

/// Most lists one follow edge is filed under.
pub const MAX_LISTS_PER_EDGE: usize = 8;
/// Most lists one user has.
pub const MAX_LISTS_PER_USER: usize = 50;
/// Most groups one user is a member of: each of their posts goes to each
/// group's timeline, so this bounds a post's group deliveries.
pub const MAX_GROUPS_PER_USER: usize = 100;

/// Refuses a backup name that is not one path component of 1 to 64
/// characters of `[A-Za-z0-9_.-]` (and not `.` or `..`): a server writes
/// backups only under its own backup directory.
pub fn check_backup_name(name: &str) -> Result<()> {
    let fits = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        && name != "."
        && name != "..";
    if !fits {
        return Err(Error::invalid(
            "invalid_backup_name",
            "a backup's name is 1 to 64 characters of [A-Za-z0-9_.-], not . or ..",
        ));
    }
    Ok(())
}

/// The most accounts a user may follow unless configured otherwise.
pub const DEFAULT_MAX_FOLLOWING: u64 = 7_500;

/// Most edges one call follows or unfollows at once.
pub const MAX_EDGES_PER_CALL: usize = 100;

/// One edge of a call that changes many: follow or unfollow `target`, and
/// for a follow, file it under `lists` (`None` keeps its lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRequest {
    pub target: String,
    pub op: EdgeOp,
    pub lists: Option<Vec<String>>,
    /// A follow's options to turn on or off (an unfollow clears them all).
    pub options: Vec<(crate::model::relation::FollowOption, bool)>,
}

/// Refuses a call that changes no edge, or more than [`MAX_EDGES_PER_CALL`].
pub fn check_edge_count(n: usize) -> Result<()> {
    if n == 0 || n > MAX_EDGES_PER_CALL {
        return Err(Error::invalid(
            "invalid_edge_count",
            format!("a call changes 1 to {MAX_EDGES_PER_CALL} edges; this one names {n}"),
        ));
    }
    Ok(())
}

/// Whether a block between two users refuses an act of one on the other's
/// post (a like, a repost, a reply). Every write refuses it; an import,
/// which restores acts made before the block, lets them stand (decided in
/// `crate::transfer::mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocks {
    Refuse,
    Stand,
}

pub fn user_not_found(id: &UserId) -> Error {
    Error::not_found("user_not_found", format!("user {id} does not exist"))
}

/// A put of a user whose id's earlier user is still being deleted.
pub fn user_being_deleted(id: &UserId) -> Error {
    Error::conflict(
        "user_being_deleted",
        format!("user {id} is being deleted; create it again once the deletion has finished"),
    )
}

/// A new post under an id a stored post holds: a store never overwrites a
/// post ([`crate::plan::Step::PutPost`]); a writer takes the next id.
pub fn post_id_taken(id: PostId) -> Error {
    Error::conflict(
        "post_id_taken",
        format!("a post with the id {id} is stored already"),
    )
}

pub fn post_not_found(id: PostId) -> Error {
    Error::not_found("post_not_found", format!("post {id} does not exist"))
}

pub fn group_not_found(group: &GroupName) -> Error {
    Error::not_found(
        "group_not_found",
        format!("group {group} has no members (a group exists while it has members)"),
    )
}

/// Joining or leaving a group. A store applies it atomically: the user
/// must exist (`user_not_found`); a join that would put the user in more
/// than [`MAX_GROUPS_PER_USER`] groups is refused (`too_many_groups`); when
/// the membership changes, the group's size moves and [`event`](Self::event)
/// is queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub group: GroupName,
    pub user: UserId,
    pub join: bool,
}

impl Membership {
    /// The user must exist (and not be being deleted), to join and to leave.
    pub fn check_user(&self, exists: bool) -> Result<()> {
        match exists {
            true => Ok(()),
            false => Err(user_not_found(&self.user)),
        }
    }

    /// Refuses a join past the limit, given how many groups the user is in.
    pub fn check_group_count(&self, groups_now: usize) -> Result<()> {
        if self.join && groups_now >= MAX_GROUPS_PER_USER {
            return Err(Error::conflict(
                "too_many_groups",
                format!("a user is a member of at most {MAX_GROUPS_PER_USER} groups"),
            ));
        }
        Ok(())
    }

    /// The event queued when the membership changed.
    pub fn event(&self) -> Event {
        let (group, user) = (self.group.clone(), self.user.clone());
        if self.join {
            Event::Joined { group, user }
        } else {
            Event::Left { group, user }
        }
    }
}

pub fn list_not_found(user: &UserId, list: &ListName) -> Error {
    Error::not_found(
        "list_not_found",
        format!(
            "user {user} has no list {list} (a list exists while an account is filed under it)"
        ),
    )
}

/// The lists an edge is to be filed under: valid names, each once, at most
/// [`MAX_LISTS_PER_EDGE`], in name order.
pub fn edge_lists(names: &[&str]) -> Result<Vec<ListName>> {
    let mut lists = names
        .iter()
        .map(|n| ListName::parse(n))
        .collect::<Result<Vec<_>>>()?;
    lists.sort_unstable();
    lists.dedup();
    check_lists_per_edge(lists.len())?;
    Ok(lists)
}

/// Refuses an edge filed under more than [`MAX_LISTS_PER_EDGE`] lists.
pub fn check_lists_per_edge(n: usize) -> Result<()> {
    if n > MAX_LISTS_PER_EDGE {
        return Err(Error::invalid(
            "too_many_lists",
            format!("an account is filed under at most {MAX_LISTS_PER_EDGE} lists"),
        ));
    }
    Ok(())
}

/// Adding or removing a follow edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeOp {
    Follow,
    Unfollow,
}

/// A change of one follow edge, as the rules admit it. Built only by
/// [`EdgeChange::new`], so an adapter never sees a self-follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeChange {
    follower: UserId,
    followee: UserId,
    op: EdgeOp,
    /// For a follow: the lists to file the edge under (from [`edge_lists`]),
    /// or `None` to keep those it has (none, for a new edge).
    lists: Option<Vec<ListName>>,
    /// The most accounts the follower may follow (`None`: no cap, as for
    /// the unfollows of a block).
    max_following: Option<u64>,
}

impl EdgeChange {
    /// Refuses a self-follow (`cannot_follow_self`). Unfollowing oneself is
    /// admitted: there is never such an edge, so it changes nothing.
    pub fn new(follower: UserId, followee: UserId, op: EdgeOp) -> Result<EdgeChange> {
        if op == EdgeOp::Follow && follower == followee {
            return Err(Error::conflict(
                "cannot_follow_self",
                "a user cannot follow themselves",
            ));
        }
        Ok(EdgeChange {
            follower,
            followee,
            op,
            lists: None,
            max_following: None,
        })
    }

    /// Caps how many accounts the follower may follow: a new edge past
    /// `max` is refused by [`check_room`](Self::check_room).
    pub fn with_max_following(mut self, max: u64) -> EdgeChange {
        self.max_following = Some(max);
        self
    }

    /// Refuses a transition that adds an edge when the follower already
    /// follows the most accounts allowed (`too_many_following`). The store
    /// calls it with the count it holds, in the transaction that applies
    /// the transition.
    pub fn check_room(&self, transition: &EdgeTransition, following_now: u64) -> Result<()> {
        match self.max_following {
            Some(max) if transition.count_step > 0 && following_now >= max => Err(Error::conflict(
                "too_many_following",
                format!("a user can follow at most {max} accounts"),
            )),
            _ => Ok(()),
        }
    }

    /// Files a follow under `lists` (replacing the lists of an existing
    /// edge), each once, in name order.
    pub fn with_lists(mut self, mut lists: Vec<ListName>) -> EdgeChange {
        lists.sort_unstable();
        lists.dedup();
        if self.op == EdgeOp::Follow {
            self.lists = Some(lists);
        }
        self
    }

    /// What the change does to an edge that is filed under `existing`
    /// (`None`: there is no edge). The store writes what the transition
    /// says, in the transaction that read `existing`.
    pub fn transition(&self, existing: Option<Vec<ListName>>) -> EdgeTransition {
        let after = match (self.op, &existing) {
            (EdgeOp::Unfollow, _) => None,
            (EdgeOp::Follow, old) => Some(
                self.lists
                    .clone()
                    .or_else(|| old.clone())
                    .unwrap_or_default(),
            ),
        };
        let empty = Vec::new();
        let (old, new) = (
            existing.as_ref().unwrap_or(&empty),
            after.as_ref().unwrap_or(&empty),
        );
        let added: Vec<ListName> = new.iter().filter(|l| !old.contains(l)).cloned().collect();
        let removed: Vec<ListName> = old.iter().filter(|l| !new.contains(l)).cloned().collect();
        let (follower, followee) = (self.follower.clone(), self.followee.clone());
        let event = match (&existing, &after) {
            // The plan gives the edge its time (`graph::edge::steps`).
            (None, Some(lists)) => Some(Event::Followed {
                follower,
                followee,
                lists: lists.clone(),
                at_ms: 0,
            }),
            (Some(lists), None) => Some(Event::Unfollowed {
                follower,
                followee,
                lists: lists.clone(),
            }),
            (Some(_), Some(_)) if !added.is_empty() || !removed.is_empty() => {
                Some(Event::Relisted {
                    follower,
                    followee,
                    added: added.clone(),
                    removed: removed.clone(),
                })
            }
            _ => None,
        };
        let count_step = match (existing.is_some(), after.is_some()) {
            (false, true) => 1,
            (true, false) => -1,
            _ => 0,
        };
        EdgeTransition {
            after,
            added,
            removed,
            event,
            count_step,
        }
    }

    pub fn follower(&self) -> &UserId {
        &self.follower
    }

    pub fn followee(&self) -> &UserId {
        &self.followee
    }

    pub fn op(&self) -> EdgeOp {
        self.op
    }

    /// Whether the change adds the edge.
    pub fn adds(&self) -> bool {
        self.op == EdgeOp::Follow
    }

    /// The users that must exist for the change to apply, in the order they
    /// are checked: both ends, for a follow and an unfollow alike, whether or
    /// not the edge exists. An unknown user is `user_not_found` naming the
    /// first one missing.
    pub fn required(&self) -> [&UserId; 2] {
        [&self.follower, &self.followee]
    }

    /// Runs the existence check with the adapter's `exists` (called inside
    /// its transaction), in the order of [`required`](Self::required).
    pub fn check_users(&self, mut exists: impl FnMut(&UserId) -> Result<bool>) -> Result<()> {
        for user in self.required() {
            if !exists(user)? {
                return Err(user_not_found(user));
            }
        }
        Ok(())
    }
}

/// What an edge change does, decided by [`EdgeChange::transition`] from what
/// the store holds: the edge afterwards, the lists it joins and leaves, how
/// the counts move and the event to queue.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeTransition {
    /// The edge's lists afterwards, or `None` if there is no edge.
    pub after: Option<Vec<ListName>>,
    /// Lists the followee joins and leaves.
    pub added: Vec<ListName>,
    pub removed: Vec<ListName>,
    /// Queued when anything changed.
    pub event: Option<Event>,
    /// How the follower's `following` and the followee's `followers` move.
    pub count_step: i64,
}

impl EdgeTransition {
    /// Whether the edge or its lists changed.
    pub fn changed(&self) -> bool {
        self.event.is_some()
    }

    /// Refuses a change that would give the follower more than
    /// [`MAX_LISTS_PER_USER`] lists; `has` tells whether they have a list.
    pub fn check_list_count(
        &self,
        lists_now: usize,
        mut has: impl FnMut(&ListName) -> Result<bool>,
    ) -> Result<()> {
        let mut new = 0;
        for l in &self.added {
            if !has(l)? {
                new += 1;
            }
        }
        if new > 0 && lists_now + new > MAX_LISTS_PER_USER {
            return Err(Error::conflict(
                "too_many_lists",
                format!("a user has at most {MAX_LISTS_PER_USER} lists"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_self_follow_is_refused_and_a_self_unfollow_admitted() {
        let err = EdgeChange::new(u("a"), u("a"), EdgeOp::Follow).unwrap_err();
        assert_eq!(err.code(), "cannot_follow_self");
        assert!(EdgeChange::new(u("a"), u("a"), EdgeOp::Unfollow).is_ok());
    }

    #[test]
    fn a_new_edge_past_the_cap_is_refused_and_a_refiling_is_not() {
        let change = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow)
            .unwrap()
            .with_max_following(2);
        let new_edge = change.transition(None);
        assert!(change.check_room(&new_edge, 1).is_ok());
        let err = change.check_room(&new_edge, 2).unwrap_err();
        assert_eq!(err.code(), "too_many_following");
        // An edge that exists already moves no count: always admitted.
        assert!(change
            .check_room(&change.transition(Some(vec![])), 9)
            .is_ok());
        let uncapped = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow).unwrap();
        assert!(uncapped
            .check_room(&uncapped.transition(None), 1 << 40)
            .is_ok());
    }

    #[test]
    fn both_ends_must_exist_and_the_first_missing_is_named() {
        let change = EdgeChange::new(u("a"), u("b"), EdgeOp::Unfollow).unwrap();
        let err = change.check_users(|id| Ok(id.as_str() == "b")).unwrap_err();
        assert_eq!(err.code(), "user_not_found");
        assert!(err.message().contains("user a "));
        let err = change.check_users(|_| Ok(false)).unwrap_err();
        assert!(err.message().contains("user a "), "the follower first");
        assert!(change.check_users(|_| Ok(true)).is_ok());
        let t = change.transition(Some(vec![]));
        assert_eq!(t.count_step, -1);
        assert_eq!(
            t.event,
            Some(Event::Unfollowed {
                follower: u("a"),
                followee: u("b"),
                lists: vec![],
            })
        );
        assert_eq!(
            change.transition(None).event,
            None,
            "no edge, nothing to do"
        );
    }

    fn l(s: &str) -> ListName {
        ListName::parse(s).unwrap()
    }

    #[test]
    fn lists_are_set_kept_and_left() {
        let follow = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow).unwrap();
        let filed = follow.clone().with_lists(vec![l("w"), l("x")]);
        // A new edge, filed.
        let t = filed.transition(None);
        assert_eq!((t.count_step, t.added.len()), (1, 2));
        assert!(matches!(t.event, Some(Event::Followed { ref lists, .. }) if lists.len() == 2));
        // Refiled: x stays, w goes, y comes; no count moves.
        let t = follow
            .clone()
            .with_lists(vec![l("x"), l("y")])
            .transition(Some(vec![l("w"), l("x")]));
        assert_eq!(
            (t.count_step, t.added, t.removed),
            (0, vec![l("y")], vec![l("w")])
        );
        // A plain follow of a filed edge keeps its lists and changes nothing.
        let t = follow.transition(Some(vec![l("w")]));
        assert_eq!((t.after, t.event), (Some(vec![l("w")]), None));
        // An unfollow leaves every list.
        let unfollow = EdgeChange::new(u("a"), u("b"), EdgeOp::Unfollow).unwrap();
        assert_eq!(
            unfollow.transition(Some(vec![l("w")])).removed,
            vec![l("w")]
        );
    }

    #[test]
    fn list_limits_are_enforced() {
        assert_eq!(edge_lists(&["b", "a", "b"]).unwrap(), vec![l("a"), l("b")]);
        let nine: Vec<String> = (0..9).map(|i| format!("l{i}")).collect();
        let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
        assert_eq!(edge_lists(&nine).unwrap_err().code(), "too_many_lists");
        assert_eq!(
            edge_lists(&["a b"]).unwrap_err().code(),
            "invalid_list_name"
        );
        let t = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow)
            .unwrap()
            .with_lists(vec![l("new"), l("old")])
            .transition(None);
        let has_old = |x: &ListName| Ok(x.as_str() == "old");
        assert!(t.check_list_count(MAX_LISTS_PER_USER - 1, has_old).is_ok());
        let err = t.check_list_count(MAX_LISTS_PER_USER, has_old).unwrap_err();
        assert_eq!(err.code(), "too_many_lists");
    }
}
