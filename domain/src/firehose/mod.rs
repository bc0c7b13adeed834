//! The firehose: the public acts of the network, as other systems follow
//! them from a cursor. What is public is decided here, once: posts created
//! (replies and reposts included) and deleted, likes and unlikes, follows
//! and unfollows, profiles, and accounts suspended, lifted or deleted.
//! Never mutes, blocks, markers, notifications, lists, groups, filters,
//! priorities or anything else a user keeps for themselves.

pub mod cursor;
pub mod filter;

use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::model::Post;
use serde_json::{Map, Value};

/// The kinds of public acts, as clients name them in filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Post,
    PostDeleted,
    Like,
    Unlike,
    Follow,
    Unfollow,
    Profile,
    Account,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Post,
        Kind::PostDeleted,
        Kind::Like,
        Kind::Unlike,
        Kind::Follow,
        Kind::Unfollow,
        Kind::Profile,
        Kind::Account,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Post => "post",
            Kind::PostDeleted => "post_deleted",
            Kind::Like => "like",
            Kind::Unlike => "unlike",
            Kind::Follow => "follow",
            Kind::Unfollow => "unfollow",
            Kind::Profile => "profile",
            Kind::Account => "account",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What became of an account, as the firehose tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountStatus {
    /// Suspended: it cannot act and is hidden from readers.
    Suspended,
    /// A suspension was lifted.
    Active,
    /// Deleted, with everything it posted, liked and followed.
    Deleted,
}

impl AccountStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AccountStatus::Suspended => "suspended",
            AccountStatus::Active => "active",
            AccountStatus::Deleted => "deleted",
        }
    }
}

/// One public act; `actor` is the account that made it (or, for
/// [`PublicAct::Account`], the account it concerns).
#[derive(Debug, Clone, PartialEq)]
pub enum PublicAct {
    /// A post, reply or repost made.
    Post(Post),
    PostDeleted {
        actor: UserId,
        post: PostId,
    },
    Like {
        actor: UserId,
        post: PostId,
        author: UserId,
        at_ms: u64,
    },
    Unlike {
        actor: UserId,
        post: PostId,
        author: UserId,
    },
    Follow {
        actor: UserId,
        target: UserId,
        at_ms: u64,
    },
    Unfollow {
        actor: UserId,
        target: UserId,
    },
    /// An account created or its profile changed: the profile it has now.
    Profile {
        actor: UserId,
        profile: Option<Map<String, Value>>,
    },
    Account {
        actor: UserId,
        status: AccountStatus,
    },
}

impl PublicAct {
    /// The public act an event of the log records, if it records one. An
    /// account's deletion is told once, by its last event; what the
    /// deletion removed on the way (its posts, likes and follows of it) is
    /// not told again one by one, but the follows it made are (their
    /// `Unfollowed` events).
    pub fn of(event: &Event) -> Option<PublicAct> {
        Some(match event {
            Event::PostCreated { post, .. } => PublicAct::Post(post.clone()),
            Event::PostDeleted { post, author, .. } => PublicAct::PostDeleted {
                actor: author.clone(),
                post: *post,
            },
            Event::Liked {
                user,
                post,
                author,
                at_ms,
            } => PublicAct::Like {
                actor: user.clone(),
                post: *post,
                author: author.clone(),
                at_ms: *at_ms,
            },
            Event::Unliked { user, post, author } => PublicAct::Unlike {
                actor: user.clone(),
                post: *post,
                author: author.clone(),
            },
            Event::Followed {
                follower,
                followee,
                at_ms,
                ..
            } => PublicAct::Follow {
                actor: follower.clone(),
                target: followee.clone(),
                at_ms: *at_ms,
            },
            Event::Unfollowed {
                follower, followee, ..
            } => PublicAct::Unfollow {
                actor: follower.clone(),
                target: followee.clone(),
            },
            Event::UserPut { user, profile } => PublicAct::Profile {
                actor: user.clone(),
                profile: profile.clone(),
            },
            Event::StandingSet {
                user,
                standing,
                was_suspended,
            } if standing.suspended != *was_suspended => PublicAct::Account {
                actor: user.clone(),
                status: match standing.suspended {
                    true => AccountStatus::Suspended,
                    false => AccountStatus::Active,
                },
            },
            Event::TimelineDropped { user, .. } => PublicAct::Account {
                actor: user.clone(),
                status: AccountStatus::Deleted,
            },
            _ => return None,
        })
    }

    pub fn kind(&self) -> Kind {
        match self {
            PublicAct::Post(_) => Kind::Post,
            PublicAct::PostDeleted { .. } => Kind::PostDeleted,
            PublicAct::Like { .. } => Kind::Like,
            PublicAct::Unlike { .. } => Kind::Unlike,
            PublicAct::Follow { .. } => Kind::Follow,
            PublicAct::Unfollow { .. } => Kind::Unfollow,
            PublicAct::Profile { .. } => Kind::Profile,
            PublicAct::Account { .. } => Kind::Account,
        }
    }

    pub fn actor(&self) -> &UserId {
        match self {
            PublicAct::Post(p) => &p.author,
            PublicAct::PostDeleted { actor, .. }
            | PublicAct::Like { actor, .. }
            | PublicAct::Unlike { actor, .. }
            | PublicAct::Follow { actor, .. }
            | PublicAct::Unfollow { actor, .. }
            | PublicAct::Profile { actor, .. }
            | PublicAct::Account { actor, .. } => actor,
        }
    }

    /// When the act was made (ms since the epoch), where the log carries it.
    pub fn at_ms(&self) -> Option<u64> {
        match self {
            PublicAct::Post(p) => Some(p.created_at_ms()),
            PublicAct::Like { at_ms, .. } | PublicAct::Follow { at_ms, .. } if *at_ms > 0 => {
                Some(*at_ms)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
