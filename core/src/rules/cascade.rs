//! What deleting something tells the rest of the pipeline. A store deletes
//! the user's or the post's records in one transaction and queues the events
//! decided here in the same transaction, so every fanout worker retracts the
//! same entries whatever the backend.

use crate::event::Event;
use crate::ids::{GroupName, ListName, PostId, UserId};

/// How many followers one `AuthorRetracted` event names at most, so that no
/// event grows with an account's follower count.
pub const RETRACT_CHUNK: usize = 1000;

/// A user's deletion, with the edges the store held when it deleted them.
/// The store removes the user, their posts, both directions of every edge,
/// and moves the counts at the other ends (each follower follows one fewer,
/// each followee has one follower fewer).
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
}

impl UserDeletion<'_> {
    /// The events the deletion queues, in this order:
    /// - `AuthorRetracted` for the followers, then for the lists that filed
    ///   the user, in chunks of [`RETRACT_CHUNK`]: their timelines drop the
    ///   user's posts;
    /// - `Unfollowed` for every account the user followed: fanout workers
    ///   keep follower lists, and those accounts lost a follower;
    /// - `Left` for every group the user was in: its timeline drops the
    ///   user's posts;
    /// - `TimelineDropped` last: the user's own timelines go (home, and
    ///   every list the user had).
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
        events.push(Event::TimelineDropped {
            user: author(),
            lists: self.own_lists(),
        });
        events
    }

    /// The lists the user had: every list their edges were filed under.
    pub fn own_lists(&self) -> Vec<ListName> {
        let mut lists: Vec<ListName> = self
            .following
            .iter()
            .flat_map(|(_, l)| l.iter().cloned())
            .collect();
        lists.sort_unstable();
        lists.dedup();
        lists
    }
}

/// The event a post's deletion queues: its author's followers' timelines
/// retract it.
pub fn post_deleted(post: PostId, author: &UserId) -> Event {
    Event::PostDeleted {
        post,
        author: author.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_deletion_retracts_in_chunks_then_unfollows_then_drops() {
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
        assert_eq!(
            events[5],
            Event::TimelineDropped {
                user: u("x"),
                lists: vec![work]
            }
        );
    }

    #[test]
    fn a_user_with_no_edges_only_drops_their_timeline() {
        let d = UserDeletion {
            user: &u("x"),
            followers: &[],
            listed: &[],
            following: &[],
            groups: &[],
        };
        assert_eq!(
            d.events(),
            vec![Event::TimelineDropped {
                user: u("x"),
                lists: vec![]
            }]
        );
    }
}
