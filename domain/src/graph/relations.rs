//! Mutes and blocks: what they refuse, what they change and whose posts they
//! hide from whom, decided once for every backend.
//!
//! - A mute (`user` mutes `target`) hides the target's posts from the
//!   user's home, list and group timelines. The follow edge stays: fanout
//!   stops delivering (`socialite_core::feed::followers::FollowerIndex`), the
//!   target's entries leave the user's stored timelines (`Muted`), and come
//!   back within the cache's reach when the mute is lifted (`Unmuted`).
//! - A block hides each user's posts from the other, in every timeline and in
//!   the mentions timeline; it removes the follow edges between them both
//!   ways (their `Unfollowed` events purge the timelines), and a follow
//!   either way is refused while it stands ([`check_not_blocked`]).
//!   Each also reads to the other as an account that does not exist:
//!   asked for by name (a profile, its follower, followee and list pages,
//!   its posts, a post of it by id, a thread about one, the likers of one)
//!   it answers 404, as a suspended account does to everyone
//!   ([`Hidden::named`]). A mute hides nothing asked for by name: it
//!   quiets timelines.
//!
//! A user's stored home and list timelines hold no muted author
//! (`socialite_core::feed::Stores::authors`); a group's timeline is shared by its
//! readers, so each reader's mutes and blocks apply when it is read
//! ([`Hidden`]), as they do to every page as a safety net for events still
//! on their way to the worker.

use crate::checks::{user_not_found, EdgeChange, EdgeOp};
use crate::error::{Error, ErrorKind, Result};
use crate::event::Event;
use crate::filters::matcher::Verdict;
use crate::filters::Sift;
use crate::ids::{ListName, UserId};
pub use crate::model::relation::{FollowOption, Priority, Relation};
use crate::model::FeedItem;
use crate::model::Post;
use std::collections::HashSet;
use std::sync::Arc;

/// Most accounts one user mutes, and most one user blocks: a reader's
/// relations are read with every page of their timelines.
pub const MAX_RELATIONS: usize = 1000;

/// The refusal of a follow between users one of whom blocks the other.
pub fn blocked(follower: &UserId, followee: &UserId) -> Error {
    Error::new(
        ErrorKind::Forbidden,
        "blocked",
        format!("{follower} cannot follow {followee}: one of them blocks the other"),
    )
}

/// Refuses a follow while a block stands either way; `blocked_either_way`
/// is read by the store in the transaction that writes the edge.
pub fn check_not_blocked(change: &EdgeChange, blocked_either_way: bool) -> Result<()> {
    if change.adds() && blocked_either_way {
        return Err(blocked(change.follower(), change.followee()));
    }
    Ok(())
}

/// Making or lifting a mute or a block, as the rules admit it. Built only by
/// [`RelationChange::new`], so an adapter never sees a user muting or
/// blocking themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationChange {
    user: UserId,
    target: UserId,
    relation: Relation,
    make: bool,
    timing: MuteTiming,
}

/// When a mute ends, as a change says it (see [`crate::graph::mute_ends`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MuteTiming {
    /// A mute made without an end, or any other change.
    #[default]
    Untimed,
    /// A mute made to end at this time (ms since the epoch).
    EndsAt(u64),
    /// A mute lifted only if its end has come by this time: the sweep
    /// that ends mutes, which must not lift one made again since.
    IfEndedBy(u64),
}

impl RelationChange {
    /// Refuses muting or blocking oneself (`cannot_mute_self`,
    /// `cannot_block_self`); lifting is admitted and changes nothing.
    pub fn new(user: UserId, target: UserId, relation: Relation, make: bool) -> Result<Self> {
        if make && user == target {
            let code = match relation {
                Relation::Mute => "cannot_mute_self",
                Relation::Block => "cannot_block_self",
                Relation::Priority(_) => "cannot_prioritize_self",
                Relation::Option(_) => "cannot_follow_self",
            };
            return Err(Error::conflict(
                code,
                format!("a user cannot {} themselves", relation.verb()),
            ));
        }
        Ok(RelationChange {
            user,
            target,
            relation,
            make,
            timing: MuteTiming::Untimed,
        })
    }

    /// A mute made to end by itself at `at_ms`.
    pub fn mute_until(user: UserId, target: UserId, at_ms: u64) -> Result<Self> {
        let change = Self::new(user, target, Relation::Mute, true)?;
        Ok(RelationChange {
            timing: MuteTiming::EndsAt(at_ms),
            ..change
        })
    }

    /// The lifting of `user`'s mute of `target` if it has ended by `now_ms`.
    pub fn lift_ended_mute(user: UserId, target: UserId, now_ms: u64) -> Self {
        RelationChange {
            user,
            target,
            relation: Relation::Mute,
            make: false,
            timing: MuteTiming::IfEndedBy(now_ms),
        }
    }

    pub fn timing(&self) -> MuteTiming {
        self.timing
    }

    /// When the mute this change makes ends (`None`: never, or not a mute).
    pub fn ends_at(&self) -> Option<u64> {
        match self.timing {
            MuteTiming::EndsAt(at) => Some(at),
            _ => None,
        }
    }

    pub fn user(&self) -> &UserId {
        &self.user
    }

    pub fn target(&self) -> &UserId {
        &self.target
    }

    pub fn relation(&self) -> Relation {
        self.relation
    }

    /// Whether the change makes the relation (else lifts it).
    pub fn makes(&self) -> bool {
        self.make
    }

    /// The users that must exist, in the order they are checked.
    pub fn required(&self) -> Vec<&UserId> {
        match self.make {
            true => vec![&self.user, &self.target],
            false => vec![&self.user],
        }
    }

    /// Both users must exist to make a relation, the user first; to lift
    /// one, only the user: a relation to a deleted account stays its
    /// keeper's (see `crate::deletion::cascade`) and is theirs to lift. Run
    /// inside the transaction.
    pub fn check_users(&self, mut exists: impl FnMut(&UserId) -> Result<bool>) -> Result<()> {
        for u in self.required() {
            if !exists(u)? {
                return Err(user_not_found(u));
            }
        }
        Ok(())
    }

    /// What the change does, given whether the relation exists and the
    /// lists of the user's follow edge to the target (`None`: no edge),
    /// both read in the store's transaction.
    pub fn transition(&self, exists: bool, edge: Option<Vec<ListName>>) -> RelationTransition {
        let changed = exists != self.make;
        let (user, target) = (self.user.clone(), self.target.clone());
        let mut unfollows = Vec::new();
        let mut event = None;
        if changed {
            match (self.relation, self.make) {
                (Relation::Block, true) => {
                    for (a, b) in [(&user, &target), (&target, &user)] {
                        let cut = EdgeChange::new(a.clone(), b.clone(), EdgeOp::Unfollow)
                            .expect("an unfollow is always admitted");
                        unfollows.push(cut);
                    }
                    event = Some(Event::Blocked { user, target });
                }
                (Relation::Block, false) => event = Some(Event::Unblocked { user, target }),
                (Relation::Mute, true) => {
                    let until_ms = self.ends_at();
                    event = Some(Event::Muted {
                        user,
                        target,
                        edge,
                        until_ms,
                    })
                }
                (Relation::Mute, false) => event = Some(Event::Unmuted { user, target, edge }),
                // A priority's event names its new level: its planner
                // (`crate::graph::relate::set_priority`) makes it.
                (Relation::Priority(_), _) => {}
                // Follow options likewise (`crate::graph::relate::set_follow_options`).
                (Relation::Option(_), _) => {}
            }
        }
        RelationTransition {
            active: self.make,
            changed,
            unfollows,
            event,
        }
    }
}

/// What a relation change does, decided by [`RelationChange::transition`]:
/// the store writes or removes the relation when it `changed`, applies the
/// `unfollows` as it applies any unfollow (counts, lists, events), and
/// queues the `event`.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationTransition {
    /// Whether the relation stands afterwards.
    pub active: bool,
    pub changed: bool,
    /// The follow edges a block removes, both ways.
    pub unfollows: Vec<EdgeChange>,
    pub event: Option<Event>,
}

impl RelationTransition {
    /// Refuses a new relation past [`MAX_RELATIONS`], given how many of its
    /// kind the user keeps.
    pub fn check_count(&self, change: &RelationChange, count_now: usize) -> Result<()> {
        if self.changed && self.active && count_now >= MAX_RELATIONS {
            return Err(Error::conflict(
                "too_many_relations",
                format!(
                    "a user can {} at most {MAX_RELATIONS} accounts",
                    change.relation.verb()
                ),
            ));
        }
        Ok(())
    }
}

/// The relations that touch one user: whom they mute and block, and who
/// blocks them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Relations {
    pub muted: Vec<UserId>,
    pub blocked: Vec<UserId>,
    pub blocked_by: Vec<UserId>,
    /// Followees whose reposts the user does not see.
    pub reposts_off: Vec<UserId>,
    /// Followees all of whose replies the user sees.
    pub replies_on: Vec<UserId>,
}

/// The authors whose posts a reader does not see: those the reader's
/// relations hide, and suspended accounts (hidden from everyone).
#[derive(Debug, Clone, Default)]
pub struct Hidden {
    authors: HashSet<UserId>,
    suspended: Option<Arc<HashSet<UserId>>>,
    /// The reader's follow options ([`FollowOption`]): whose reposts they
    /// do not see, and whose replies to anyone they do.
    reposts_off: HashSet<UserId>,
    replies_on: HashSet<UserId>,
    /// The reader's keyword filters, where the read applies them.
    filters: Option<Sift>,
}

impl Hidden {
    /// In home, list and group timelines: the muted, the blocked and those
    /// who block the reader.
    pub fn in_timelines(r: Relations) -> Hidden {
        Hidden {
            authors: r
                .muted
                .into_iter()
                .chain(r.blocked)
                .chain(r.blocked_by)
                .collect(),
            suspended: None,
            reposts_off: r.reposts_off.into_iter().collect(),
            replies_on: r.replies_on.into_iter().collect(),
            filters: None,
        }
    }

    /// In the mentions timeline: blocks only, both ways (a mute hides posts
    /// from feeds, not a reply to the muter).
    pub fn in_mentions(r: Relations) -> Hidden {
        Hidden {
            authors: r.blocked.into_iter().chain(r.blocked_by).collect(),
            ..Hidden::default()
        }
    }

    /// In reads of an account or a post asked for by name: blocks only,
    /// both ways (a mute quiets timelines, not what is asked for).
    pub fn named(blocked: Vec<UserId>, blocked_by: Vec<UserId>) -> Hidden {
        Hidden {
            authors: blocked.into_iter().chain(blocked_by).collect(),
            ..Hidden::default()
        }
    }

    /// Also hides these authors (those a reader's exclusive lists keep
    /// out of their home timeline).
    pub fn and_authors(mut self, authors: Vec<UserId>) -> Hidden {
        self.authors.extend(authors);
        self
    }

    /// Also hides the suspended accounts.
    pub fn and_suspended(mut self, suspended: Arc<HashSet<UserId>>) -> Hidden {
        self.suspended = Some(suspended).filter(|s| !s.is_empty());
        self
    }

    /// Also applies the reader's keyword filters (`None`: none applies).
    pub fn and_filtered(mut self, filters: Option<Sift>) -> Hidden {
        self.filters = filters;
        self
    }

    /// The reader's keyword filters, where the read applies them.
    pub fn filters(&self) -> Option<&Sift> {
        self.filters.as_ref()
    }

    /// What the reader's keyword filters do to `post`.
    pub fn verdict(&self, post: &Post) -> Verdict {
        match &self.filters {
            Some(s) => s.verdict(post),
            None => Verdict::Show,
        }
    }

    /// Whether the post is shown: its author not hidden, no keyword filter
    /// hiding it.
    pub fn shows(&self, post: &Post) -> bool {
        !self.hides(&post.author) && self.verdict(post) != Verdict::Hide
    }

    /// Applies the reader's keyword filters to a page's entries.
    pub fn sift(&self, items: &mut Vec<FeedItem>) {
        if let Some(s) = &self.filters {
            s.apply(items);
        }
    }

    /// Whether this hides only the suspended accounts and applies no
    /// filter or follow option: what most readers' timelines hide.
    pub fn is_plain(&self) -> bool {
        self.authors.is_empty()
            && self.reposts_off.is_empty()
            && self.replies_on.is_empty()
            && self.filters.is_none()
    }

    /// Whether both hide the very same set of suspended accounts (one
    /// read of them), so that two plain ones are the same.
    pub fn same_suspended(&self, other: &Hidden) -> bool {
        match (&self.suspended, &other.suspended) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    pub fn hides(&self, author: &UserId) -> bool {
        (!self.authors.is_empty() && self.authors.contains(author))
            || self.suspended.as_ref().is_some_and(|s| s.contains(author))
    }

    /// Whether the reader sees `reposter`'s reposts (a follow option
    /// turns them off).
    pub fn shows_reposts_of(&self, reposter: &UserId) -> bool {
        !self.reposts_off.contains(reposter)
    }

    /// Whether the reader sees every reply of `author`, to anyone (a
    /// follow option; else the replies rule decides).
    pub fn shows_all_replies_of(&self, author: &UserId) -> bool {
        self.replies_on.contains(author)
    }

    /// Whether no author is hidden (follow options aside).
    pub fn is_empty(&self) -> bool {
        self.authors.is_empty() && self.suspended.is_none()
    }

    /// Every account hidden, listed.
    pub fn listed(&self) -> Vec<UserId> {
        let suspended = self.suspended.iter().flat_map(|s| s.iter());
        self.authors.iter().chain(suspended).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn oneself_cannot_be_muted_or_blocked() {
        for (r, code) in [
            (Relation::Mute, "cannot_mute_self"),
            (Relation::Block, "cannot_block_self"),
        ] {
            let err = RelationChange::new(u("a"), u("a"), r, true).unwrap_err();
            assert_eq!(err.code(), code);
            assert!(RelationChange::new(u("a"), u("a"), r, false).is_ok());
        }
    }

    #[test]
    fn a_block_cuts_both_edges_and_a_mute_tells_the_worker() {
        let block = RelationChange::new(u("a"), u("b"), Relation::Block, true).unwrap();
        let t = block.transition(false, Some(vec![]));
        assert!(t.changed && t.active);
        let blocked = Event::Blocked {
            user: u("a"),
            target: u("b"),
        };
        assert_eq!(t.event, Some(blocked));
        let cut: Vec<(&str, &str)> = t
            .unfollows
            .iter()
            .map(|c| (c.follower().as_str(), c.followee().as_str()))
            .collect();
        assert_eq!(cut, vec![("a", "b"), ("b", "a")]);
        assert!(!block.transition(true, None).changed, "already blocked");
        let work = ListName::parse("work").unwrap();
        let mute = RelationChange::new(u("a"), u("b"), Relation::Mute, true).unwrap();
        assert_eq!(
            mute.transition(false, Some(vec![work.clone()])).event,
            Some(Event::Muted {
                user: u("a"),
                target: u("b"),
                edge: Some(vec![work]),
                until_ms: None,
            })
        );
        let unmute = RelationChange::new(u("a"), u("b"), Relation::Mute, false).unwrap();
        let t = unmute.transition(true, None);
        assert!(t.changed && !t.active && t.unfollows.is_empty());
        assert!(matches!(t.event, Some(Event::Unmuted { edge: None, .. })));
        assert_eq!(unmute.transition(false, None).event, None);
    }

    #[test]
    fn a_follow_across_a_block_is_refused() {
        let follow = EdgeChange::new(u("a"), u("b"), EdgeOp::Follow).unwrap();
        let err = check_not_blocked(&follow, true).unwrap_err();
        assert_eq!((err.code(), err.kind()), ("blocked", ErrorKind::Forbidden));
        assert!(check_not_blocked(&follow, false).is_ok());
        let unfollow = EdgeChange::new(u("a"), u("b"), EdgeOp::Unfollow).unwrap();
        assert!(check_not_blocked(&unfollow, true).is_ok());
    }

    #[test]
    fn mentions_and_reads_by_name_hide_blocks_only() {
        let r = Relations {
            muted: vec![u("m")],
            blocked: vec![u("b")],
            blocked_by: vec![u("c")],
            ..Relations::default()
        };
        let feeds = Hidden::in_timelines(r.clone());
        assert!(feeds.hides(&u("m")) && feeds.hides(&u("b")) && feeds.hides(&u("c")));
        let mentions = Hidden::in_mentions(r.clone());
        assert!(!mentions.hides(&u("m")) && mentions.hides(&u("b")) && mentions.hides(&u("c")));
        // What a thread hides of its own post, every read by name hides.
        let named = Hidden::named(r.blocked, r.blocked_by);
        assert!(!named.hides(&u("m")) && named.hides(&u("b")) && named.hides(&u("c")));
        let banned = Arc::new(HashSet::from([u("s")]));
        let all = Hidden::default().and_suspended(banned.clone());
        assert!(all.hides(&u("s")) && !all.hides(&u("m")) && !all.is_empty());
        assert!(Hidden::in_mentions(Relations::default())
            .and_suspended(Arc::default())
            .is_empty());
        assert!(Hidden::default().is_empty());
    }
}
