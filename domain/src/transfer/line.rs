//! The export format's lines as written: plain strings and numbers, one
//! JSON object per line with its `kind` ([`Line`]); `crate::transfer::record`
//! checks each into a record of validated ids.

use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::filter::Filter;
use crate::model::PostRef;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One line of the format, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    Header {
        format: String,
        version: u32,
        exported_at_ms: u64,
    },
    User {
        id: String,
        #[serde(default)]
        profile: Option<Map<String, Value>>,
    },
    Account {
        id: String,
        tokens_after_ms: u64,
        suspended: bool,
    },
    Follow {
        follower: String,
        followee: String,
        at_ms: u64,
        #[serde(default)]
        lists: Vec<String>,
    },
    Mute {
        user: String,
        target: String,
        /// When the mute ends by itself (ms since the epoch; version 7 on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until_ms: Option<u64>,
    },
    Block {
        user: String,
        target: String,
    },
    /// A reader's priority for an account (-2, -1, 1 or 2).
    Priority {
        user: String,
        target: String,
        level: i64,
    },
    /// A follow option on (`hide_reposts`, `all_replies` or `notify`),
    /// after the follow it belongs to (version 5 on).
    FollowOption {
        user: String,
        target: String,
        option: String,
        /// When `notify` was turned on (ms since the epoch; version 8 on).
        /// A `notify` without it, of an older stream, counts from the
        /// import: the account's earlier posts tell no one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_ms: Option<u64>,
    },
    Member {
        group: String,
        user: String,
    },
    Post {
        id: String,
        author: String,
        message: String,
        #[serde(default)]
        data: Option<Map<String, Value>>,
        #[serde(default)]
        mentions: Vec<String>,
        /// A reply: the post it replies to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<RefLine>,
        /// A repost (its message is empty): the post it carries.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repost_of: Option<RefLine>,
    },
    Like {
        post: String,
        user: String,
        at_ms: u64,
    },
    Marker {
        user: String,
        timeline: String,
        last_read_id: String,
        at_ms: u64,
    },
    Kept {
        collection: String,
        user: String,
        post: String,
        at_ms: u64,
    },
    /// A user's keyword filters, as stored (`contexts` a bit each: home 1,
    /// lists 2, groups 4, mentions 8, notifications 16, threads 32,
    /// profiles 64), and the id the user's next new filter takes.
    Filters {
        user: String,
        filters: Vec<Filter>,
        #[serde(default)]
        next_id: u64,
    },
    /// A thread a user muted, named by its first post (version 7 on).
    ThreadMute {
        user: String,
        post: String,
    },
    /// A list its owner marked exclusive (version 7 on).
    ExclusiveList {
        user: String,
        list: String,
    },
    End {
        records: u64,
    },
}

/// Another post, named with its author; for the post a reply answers,
/// whether the stream leaves it out (`gone`: it was deleted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefLine {
    pub id: String,
    pub author: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
}

impl RefLine {
    pub(super) fn of(r: &PostRef) -> RefLine {
        RefLine {
            id: r.id.to_string(),
            author: r.author.as_str().to_owned(),
            gone: false,
        }
    }

    pub(super) fn read(&self) -> Result<PostRef> {
        Ok(PostRef {
            id: PostId::parse(&self.id)?,
            author: UserId::parse(&self.author)?,
        })
    }
}
