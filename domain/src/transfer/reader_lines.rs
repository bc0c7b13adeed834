//! The lines of what a reader keeps (a marker, a kept post, their
//! filters, a muted thread, an exclusive list), read into records and
//! written back.

use super::record::{Line, Record};
use crate::error::Result;
use crate::feed::markers::{Marker, MarkerTimeline};
use crate::ids::{ListName, PostId, UserId};
use crate::model::collection::{Collection, Kept};

fn user(s: &str) -> Result<UserId> {
    UserId::parse(s)
}

impl Record {
    /// The record of a line of what a reader keeps: a marker, a kept
    /// post, their filters.
    pub(super) fn of_reader(line: Line) -> Result<Record> {
        Ok(match line {
            Line::Marker {
                user: u,
                timeline,
                last_read_id,
                at_ms,
            } => Record::Marker {
                user: user(&u)?,
                marker: Marker {
                    timeline: MarkerTimeline::parse(&timeline)?,
                    last_read: PostId::parse(&last_read_id)?,
                    at_ms,
                },
            },
            Line::Kept {
                collection,
                user: u,
                post,
                at_ms,
            } => Record::Kept {
                collection: Collection::parse(&collection)?,
                user: user(&u)?,
                kept: Kept {
                    post: PostId::parse(&post)?,
                    at_ms,
                },
            },
            Line::Filters {
                user: u,
                filters,
                next_id,
            } => Record::Filters {
                user: user(&u)?,
                filters,
                next_id,
            },
            Line::ThreadMute { user: u, post } => Record::ThreadMute {
                user: user(&u)?,
                post: PostId::parse(&post)?,
            },
            Line::ExclusiveList { user: u, list } => Record::ExclusiveList {
                user: user(&u)?,
                list: ListName::parse(&list)?,
            },
            _ => unreachable!("not a reader's line"),
        })
    }
}

impl Record {
    /// The line of a record of what a reader keeps.
    pub(super) fn reader_line(&self) -> Line {
        let text = |u: &UserId| u.as_str().to_owned();
        match self {
            Record::Marker { user, marker } => Line::Marker {
                user: text(user),
                timeline: marker.timeline.as_str().to_owned(),
                last_read_id: marker.last_read.to_string(),
                at_ms: marker.at_ms,
            },
            Record::Kept {
                collection,
                user,
                kept,
            } => Line::Kept {
                collection: collection.to_string(),
                user: text(user),
                post: kept.post.to_string(),
                at_ms: kept.at_ms,
            },
            Record::Filters {
                user,
                filters,
                next_id,
            } => Line::Filters {
                user: text(user),
                filters: filters.clone(),
                next_id: *next_id,
            },
            Record::ThreadMute { user, post } => Line::ThreadMute {
                user: text(user),
                post: post.to_string(),
            },
            Record::ExclusiveList { user, list } => Line::ExclusiveList {
                user: text(user),
                list: list.as_str().to_owned(),
            },
            _ => unreachable!("not a reader's record"),
        }
    }
}
