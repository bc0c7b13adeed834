//! The checks that refuse a write, and the errors they answer with. An
//! adapter runs the existence checks inside the transaction that writes, so
//! that a concurrent deletion cannot slip between check and write, but which
//! users must exist, in which order they are checked, and what the client is
//! told are decided here.

use crate::error::{Error, Result};
use crate::event::Event;
use crate::ids::{PostId, UserId};

pub fn user_not_found(id: &UserId) -> Error {
    Error::not_found("user_not_found", format!("user {id} does not exist"))
}

pub fn post_not_found(id: PostId) -> Error {
    Error::not_found("post_not_found", format!("post {id} does not exist"))
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
        })
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

    /// How the change moves the follower's `following` and the followee's
    /// `followers` counts when it changes the graph.
    pub fn count_step(&self) -> i64 {
        match self.op {
            EdgeOp::Follow => 1,
            EdgeOp::Unfollow => -1,
        }
    }

    /// The event queued when the change altered the graph (a follow of an
    /// existing edge, or an unfollow of a missing one, queues nothing).
    pub fn event(&self) -> Event {
        let (follower, followee) = (self.follower.clone(), self.followee.clone());
        match self.op {
            EdgeOp::Follow => Event::Followed { follower, followee },
            EdgeOp::Unfollow => Event::Unfollowed { follower, followee },
        }
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
    fn both_ends_must_exist_and_the_first_missing_is_named() {
        let change = EdgeChange::new(u("a"), u("b"), EdgeOp::Unfollow).unwrap();
        let err = change.check_users(|id| Ok(id.as_str() == "b")).unwrap_err();
        assert_eq!(err.code(), "user_not_found");
        assert!(err.message().contains("user a "));
        let err = change.check_users(|_| Ok(false)).unwrap_err();
        assert!(err.message().contains("user a "), "the follower first");
        assert!(change.check_users(|_| Ok(true)).is_ok());
        assert_eq!(change.count_step(), -1);
        assert_eq!(
            change.event(),
            Event::Unfollowed {
                follower: u("a"),
                followee: u("b")
            }
        );
    }
}
