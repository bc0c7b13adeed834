//! The log as the timelines read it: what stored timelines (fanout) and
//! live streams (the live hub) must do about an event. An event that
//! concerns no timeline (a profile, a standing, a like, a marker: it only
//! records a write) projects to nothing, so neither reader has an arm for it.

use crate::event::Event;
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::Post;

/// What an event changes in timelines.
#[derive(Debug, Clone, Copy)]
pub enum TimelineChange<'a> {
    /// A post (or a repost's item) enters its followers' timelines.
    Posted(&'a Post),
    /// A post leaves them.
    Retracted { post: PostId, author: &'a UserId },
    /// An edge made: the followee's posts enter the follower's home and the
    /// lists the edge is filed under.
    Followed {
        follower: &'a UserId,
        followee: &'a UserId,
        lists: &'a [ListName],
    },
    /// An edge gone: the followee's posts leave those timelines.
    Unfollowed {
        follower: &'a UserId,
        followee: &'a UserId,
        lists: &'a [ListName],
    },
    /// An edge filed under other lists.
    Relisted {
        follower: &'a UserId,
        followee: &'a UserId,
        added: &'a [ListName],
        removed: &'a [ListName],
    },
    /// A member's posts enter (`joined`) or leave the group's timeline.
    Membership {
        group: &'a GroupName,
        user: &'a UserId,
        joined: bool,
    },
    /// A deleted author's posts leave their former followers' timelines.
    AuthorRetracted {
        author: &'a UserId,
        followers: &'a [UserId],
        listed: &'a [(UserId, ListName)],
    },
    /// A deleted user's own timelines are dropped.
    Dropped {
        user: &'a UserId,
        lists: &'a [ListName],
    },
    /// A mute made (`muted`) or lifted: the target's posts leave or return
    /// to the user's timelines of the edge, if there is one.
    Mute {
        user: &'a UserId,
        target: &'a UserId,
        edge: Option<&'a [ListName]>,
        muted: bool,
    },
    /// A block made or lifted: no stored timeline changes (a block's
    /// unfollows are events of their own), but what either user sees live
    /// is read again.
    Block {
        user: &'a UserId,
        target: &'a UserId,
    },
}

impl<'a> TimelineChange<'a> {
    /// What `event` changes in timelines, if anything.
    pub fn of(event: &'a Event) -> Option<TimelineChange<'a>> {
        Some(match event {
            Event::PostCreated { post, .. } => TimelineChange::Posted(post),
            Event::PostDeleted { post, author, .. } => TimelineChange::Retracted {
                post: *post,
                author,
            },
            Event::Followed {
                follower,
                followee,
                lists,
                ..
            } => TimelineChange::Followed {
                follower,
                followee,
                lists,
            },
            Event::Unfollowed {
                follower,
                followee,
                lists,
            } => TimelineChange::Unfollowed {
                follower,
                followee,
                lists,
            },
            Event::Relisted {
                follower,
                followee,
                added,
                removed,
            } => TimelineChange::Relisted {
                follower,
                followee,
                added,
                removed,
            },
            Event::Joined { group, user } | Event::Left { group, user } => {
                TimelineChange::Membership {
                    group,
                    user,
                    joined: matches!(event, Event::Joined { .. }),
                }
            }
            Event::AuthorRetracted {
                author,
                followers,
                listed,
            } => TimelineChange::AuthorRetracted {
                author,
                followers,
                listed,
            },
            Event::TimelineDropped { user, lists } => TimelineChange::Dropped { user, lists },
            Event::Muted {
                user, target, edge, ..
            }
            | Event::Unmuted { user, target, edge } => TimelineChange::Mute {
                user,
                target,
                edge: edge.as_deref(),
                muted: matches!(event, Event::Muted { .. }),
            },
            Event::Blocked { user, target } | Event::Unblocked { user, target } => {
                TimelineChange::Block { user, target }
            }
            Event::UserPut { .. }
            | Event::StandingSet { .. }
            | Event::PrioritySet { .. }
            | Event::FollowOptionsSet { .. }
            | Event::Liked { .. }
            | Event::Unliked { .. }
            | Event::MarkerSet { .. }
            | Event::KeptChanged { .. }
            | Event::FilterPut { .. }
            | Event::FilterRemoved { .. }
            | Event::ThreadMuteSet { .. }
            | Event::ListExclusiveSet { .. } => return None,
        })
    }
}
