//! What the one transfer planner ([`crate::transfer::apply`]) takes: an
//! event of another deployment's log, or a record of an export read as the
//! event it mirrors ([`Act::of`]). Three records say what no one event
//! does, and have a form of their own.

use crate::event::Event;
use crate::graph::relations::Relation;
use crate::ids::{PostId, UserId};
use crate::model::filter::Filter;
use crate::model::Post;
use crate::trace::Trace;
use crate::transfer::record::Record;

/// An act made in another store, to be made here.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// An event, as a log holds it; every record but the three below reads
    /// as the event that made what it holds.
    Event(Event),
    /// A like as an export holds it: [`Event::Liked`] but for the liked
    /// post's author, which the store tells.
    Like {
        user: UserId,
        post: PostId,
        at_ms: u64,
    },
    /// A reply whose post the stream marks gone (deleted at the source):
    /// [`Event::PostCreated`] with that mark, which no event carries.
    GoneReply(Post),
    /// A user's keyword filters, and the id the next new one takes: an
    /// [`Event::FilterPut`] each.
    Filters {
        user: UserId,
        filters: Vec<Filter>,
        next_id: u64,
    },
}

impl Act {
    /// The act `record` holds: the event that made what it holds.
    pub fn of(record: &Record) -> Act {
        Act::Event(match record.clone() {
            Record::User { id, profile } => Event::UserPut { user: id, profile },
            Record::Account { id, standing } => Event::StandingSet {
                user: id,
                standing,
                was_suspended: false,
            },
            Record::Follow {
                follower,
                followee,
                at_ms,
                lists,
            } => Event::Followed {
                follower,
                followee,
                lists,
                at_ms,
            },
            Record::Relation {
                user,
                relation,
                target,
                at_ms,
            } => relation_event(user, relation, target, at_ms),
            Record::Member { group, user } => Event::Joined { group, user },
            Record::Post {
                post,
                answered_gone: true,
            } => return Act::GoneReply(post),
            Record::Post { post, .. } => Event::PostCreated {
                post,
                // Made elsewhere, in no trace of this deployment.
                trace: Trace::default(),
            },
            Record::Like { post, user, at_ms } => return Act::Like { user, post, at_ms },
            Record::Filters {
                user,
                filters,
                next_id,
            } => {
                return Act::Filters {
                    user,
                    filters,
                    next_id,
                }
            }
            Record::Marker { user, marker } => Event::MarkerSet { user, marker },
            Record::ThreadMute { user, post } => Event::ThreadMuteSet {
                user,
                post,
                muted: true,
            },
            Record::ExclusiveList { user, list } => Event::ListExclusiveSet {
                user,
                list,
                exclusive: true,
            },
            Record::Kept {
                collection,
                user,
                kept,
            } => Event::KeptChanged {
                collection,
                user,
                post: kept.post,
                at_ms: kept.at_ms,
                kept: true,
            },
        })
    }
}

/// The event a relation's record holds (`at_ms`: a mute's end, a `notify`
/// option's start).
fn relation_event(user: UserId, relation: Relation, target: UserId, at_ms: Option<u64>) -> Event {
    match relation {
        Relation::Mute => Event::Muted {
            user,
            target,
            // What the muter files the target under matters to fanout
            // only, which an import does not reach.
            edge: None,
            until_ms: at_ms,
        },
        Relation::Priority(p) => Event::PrioritySet {
            user,
            target,
            level: p.level(),
        },
        Relation::Option(option) => Event::FollowOptionsSet {
            user,
            target,
            changes: vec![(option, true)],
            at_ms: at_ms.unwrap_or(0),
        },
        Relation::Block => Event::Blocked { user, target },
    }
}
