//! What deleting something tells the rest of the pipeline. A post's
//! deletion is one transaction. A user's deletion runs in bounded steps
//! ([`DeletionStage`]), each its own transaction that removes up to
//! [`DELETION_STEP`] records and queues the events decided here for what it
//! removed, so an account with millions of followers never needs one huge
//! transaction, and every fanout worker retracts the same entries whatever
//! the backend.

use crate::event::Event;
use crate::ids::{GroupName, ListName, UserId};

/// How many followers one `AuthorRetracted` event names at most, so that no
/// event grows with an account's follower count.
pub const RETRACT_CHUNK: usize = 1000;

/// Records one step of a user's deletion removes at most: small enough for
/// any store's transaction limits (MongoDB's 60 s and 16 MiB), large enough
/// that a deletion of a million follows takes a thousand steps.
pub const DELETION_STEP: usize = 1000;

/// The steps of a user's deletion, in order. The first write marks the user
/// as being deleted (a tombstone): from then on the user is gone to readers
/// and writers (absent to reads, refused as an author, a follower, a
/// followee or a member, and not created again until the deletion ends), and
/// the mark is what a restarted process finds to resume the deletion. Each
/// stage removes what remains of its records a step at a time, so a step
/// that runs twice (after a crash) finds nothing twice; the counts at the
/// other ends move with each step's edges, and are right when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionStage {
    /// Edges from followers (and the lists that file the user): their
    /// following counts and list sizes drop; `AuthorRetracted`.
    Followers,
    /// Edges to followees: their follower counts drop; `Unfollowed`.
    Following,
    /// Group memberships: the groups lose a member; `Left`.
    Groups,
    /// The mutes and blocks the user keeps: `Unmuted` for each account the
    /// user muted, so fanout workers forget the mute. Those others keep to
    /// the user stay theirs: an account deleted and registered again under
    /// the id does not shed the blocks on it.
    Relations,
    /// The likes the user made: each post still stored counts one fewer.
    Likes,
    /// The user's reposts: their items and rows; each post still stored
    /// counts one fewer (their followers' timelines dropped the items with
    /// `AuthorRetracted`).
    Reposts,
    /// The user's posts (and their mentions of others).
    Posts,
    /// Mentions of the user in others' posts.
    Mentions,
    /// The user's record, counts and tombstone; `TimelineDropped`.
    Finish,
}

impl DeletionStage {
    pub const ORDER: [DeletionStage; 9] = [
        DeletionStage::Followers,
        DeletionStage::Following,
        DeletionStage::Groups,
        DeletionStage::Relations,
        DeletionStage::Likes,
        DeletionStage::Reposts,
        DeletionStage::Posts,
        DeletionStage::Mentions,
        DeletionStage::Finish,
    ];
}

/// The last event of a user's deletion: their own timelines go (home, and
/// every list they had).
pub fn timeline_dropped(user: &UserId, lists: Vec<ListName>) -> Event {
    Event::TimelineDropped {
        user: user.clone(),
        lists,
    }
}

/// What one step of a user's deletion removed: both directions of these
/// edges (the store moves the counts at the other ends: each follower
/// follows one fewer, each followee has one follower fewer) and these
/// memberships.
#[derive(Debug, Clone, Copy)]
pub struct UserDeletion<'a> {
    pub user: &'a UserId,
    /// Who followed the user, in id order.
    pub followers: &'a [UserId],
    /// The lists that filed the user: (follower, list).
    pub listed: &'a [(UserId, ListName)],
    /// Whom the user followed, in id order, with the lists each edge was
    /// filed under.
    pub following: &'a [(UserId, Vec<ListName>)],
    /// The groups the user was a member of; each loses a member.
    pub groups: &'a [GroupName],
    /// The accounts the user muted.
    pub muted: &'a [UserId],
}

impl<'a> UserDeletion<'a> {
    /// A `Followers` step: it cut these followers' edges (and the lists
    /// that filed the user).
    pub fn of_followers(
        user: &'a UserId,
        followers: &'a [UserId],
        listed: &'a [(UserId, ListName)],
    ) -> UserDeletion<'a> {
        UserDeletion {
            user,
            followers,
            listed,
            following: &[],
            groups: &[],
            muted: &[],
        }
    }

    /// A `Following` step: it cut these edges to followees.
    pub fn of_following(
        user: &'a UserId,
        following: &'a [(UserId, Vec<ListName>)],
    ) -> UserDeletion<'a> {
        UserDeletion {
            user,
            followers: &[],
            listed: &[],
            following,
            groups: &[],
            muted: &[],
        }
    }

    /// A `Groups` step: the user left these groups.
    pub fn of_groups(user: &'a UserId, groups: &'a [GroupName]) -> UserDeletion<'a> {
        UserDeletion {
            user,
            followers: &[],
            listed: &[],
            following: &[],
            groups,
            muted: &[],
        }
    }

    /// A `Relations` step: it removed these mutes of the user's (and the
    /// user's blocks, which need no event: no edge survived them).
    pub fn of_relations(user: &'a UserId, muted: &'a [UserId]) -> UserDeletion<'a> {
        UserDeletion {
            user,
            followers: &[],
            listed: &[],
            following: &[],
            groups: &[],
            muted,
        }
    }

    /// The events the step queues, in this order:
    /// - `AuthorRetracted` for the followers, then for the lists that filed
    ///   the user, in chunks of [`RETRACT_CHUNK`]: their timelines drop the
    ///   user's posts;
    /// - `Unfollowed` for every account the user followed: fanout workers
    ///   keep follower lists, and those accounts lost a follower;
    /// - `Left` for every group the user was in: its timeline drops the
    ///   user's posts;
    /// - `Unmuted` for every account the user muted (no edge remains).
    ///
    /// The deletion's last step adds [`timeline_dropped`].
    pub fn events(&self) -> Vec<Event> {
        let author = || self.user.clone();
        let mut events: Vec<Event> = self
            .followers
            .chunks(RETRACT_CHUNK)
            .map(|chunk| Event::AuthorRetracted {
                author: author(),
                followers: chunk.to_vec(),
                listed: Vec::new(),
            })
            .collect();
        events.extend(
            self.listed
                .chunks(RETRACT_CHUNK)
                .map(|chunk| Event::AuthorRetracted {
                    author: author(),
                    followers: Vec::new(),
                    listed: chunk.to_vec(),
                }),
        );
        events.extend(self.following.iter().map(|(t, lists)| Event::Unfollowed {
            follower: author(),
            followee: t.clone(),
            lists: lists.clone(),
        }));
        events.extend(self.groups.iter().map(|g| Event::Left {
            group: g.clone(),
            user: author(),
        }));
        events.extend(self.muted.iter().map(|t| Event::Unmuted {
            user: author(),
            target: t.clone(),
            edge: None,
        }));
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_deletion_step_retracts_in_chunks_then_unfollows_then_leaves() {
        let followers: Vec<UserId> = (0..RETRACT_CHUNK + 1)
            .map(|i| u(&format!("f{i}")))
            .collect();
        let work = ListName::parse("work").unwrap();
        let following = [(u("t"), vec![work.clone()])];
        let listed = [(u("f1"), work.clone())];
        let d = UserDeletion {
            user: &u("x"),
            followers: &followers,
            listed: &listed,
            following: &following,
            groups: &[GroupName::parse("g").unwrap()],
            muted: &[u("m")],
        };
        let events = d.events();
        assert_eq!(events.len(), 6);
        assert!(
            matches!(&events[0], Event::AuthorRetracted { followers, .. } if followers.len() == RETRACT_CHUNK)
        );
        assert!(
            matches!(&events[1], Event::AuthorRetracted { followers, .. } if followers.len() == 1)
        );
        assert!(
            matches!(&events[2], Event::AuthorRetracted { followers, listed, .. } if followers.is_empty() && listed.len() == 1)
        );
        assert_eq!(
            events[3],
            Event::Unfollowed {
                follower: u("x"),
                followee: u("t"),
                lists: vec![work.clone()],
            }
        );
        assert!(matches!(&events[4], Event::Left { user, .. } if *user == u("x")));
        assert!(
            matches!(&events[5], Event::Unmuted { user, target, edge: None } if *user == u("x") && *target == u("m"))
        );
    }

    #[test]
    fn a_step_with_no_edges_queues_nothing() {
        let d = UserDeletion {
            user: &u("x"),
            followers: &[],
            listed: &[],
            following: &[],
            groups: &[],
            muted: &[],
        };
        assert!(d.events().is_empty());
        assert_eq!(
            timeline_dropped(&u("x"), vec![]),
            Event::TimelineDropped {
                user: u("x"),
                lists: vec![]
            }
        );
    }
}
