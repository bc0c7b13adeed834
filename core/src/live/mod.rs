//! Live timelines: each new entry of a user's home timeline pushed to the
//! user's open streams as fanout applies it, and its retraction when a post
//! is deleted or its author unfollowed, muted or blocked.
//!
//! Fanout workers publish every batch they applied on the applied feed
//! ([`crate::ports::AppliedFeed`]: in process on the embedded default, a
//! Kafka topic that every replica reads in production). Each process that
//! holds streams runs one [`hub::LiveHub`], which reads the feed and sends
//! each event to the streams whose timeline it concerns, deciding whose posts
//! a home timeline holds by the one rule ([`crate::feed::Stores::authors`]).
//! A stream that resumes ([`stream::LiveStream`]) gets what it missed from
//! the timeline itself, then the live events, without duplicates; one that
//! falls too far behind is told to reload.

pub mod hub;
pub mod in_process;
pub mod stream;

use crate::ids::{PostId, UserId};
use crate::model::FeedItem;
use socialite_domain::notifications::notified::Notice;

/// What a stream tells its client.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveEvent {
    /// A new entry of the timeline; its position is the event id a client
    /// resumes from. A repost's entry names the reposter, and places a post
    /// the client may show already at the top
    /// ([`socialite_domain::interactions::reposts`]).
    Entry(Box<FeedItem>),
    /// The post, or the repost at this position, left the timeline
    /// (deleted, or the repost undone).
    Retracted(PostId),
    /// Every post of the author left the timeline (unfollowed, muted,
    /// blocked or deleted).
    Purged(UserId),
    /// The stream ends: the client fell too far behind, or the server lost
    /// track. The client reads the timeline again and opens a new stream.
    Reload,
    /// The user was told of an act ([`socialite_domain::notifications::notified`]): its
    /// kind, the post it is about, its actor and id.
    Notified(Box<Notice>),
}

/// Whether an applied event can change a home timeline, so that workers
/// publish it on the applied feed.
pub(crate) fn concerns_home(event: &crate::event::Event) -> bool {
    use crate::event::Event;
    !matches!(
        event,
        Event::Relisted { .. } | Event::Joined { .. } | Event::Left { .. }
    )
}
