//! The embedded store's tables and record encodings.

use redb::{ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use socialite_core::error::{Error, ErrorKind, Result};

/// user id → profile JSON (empty when the user has none).
pub const USERS: TableDefinition<&str, &[u8]> = TableDefinition::new("users");
/// user id → the user's lists when their deletion began (comma-separated):
/// users being deleted, gone to readers and writers until the last step.
pub const DELETING: TableDefinition<&str, &str> = TableDefinition::new("deleting");
/// user id → (followers, following), maintained on every edge change.
pub const COUNTS: TableDefinition<&str, (u64, u64)> = TableDefinition::new("counts");
/// (follower, followee): whom a user follows, in id order.
pub const FOLLOWING: TableDefinition<(&str, &str), ()> = TableDefinition::new("following");
/// (followee, follower): who follows a user, in id order.
pub const FOLLOWERS: TableDefinition<(&str, &str), ()> = TableDefinition::new("followers");
/// (follower, followee) → when the follow was made (ms since the epoch).
pub const EDGE_TIMES: TableDefinition<(&str, &str), u64> = TableDefinition::new("edge_times");
/// (user, newness, followee): whom a user follows, newest follow first
/// (newness is `u64::MAX` minus the follow time).
pub const FOLLOWING_BY_TIME: TableDefinition<(&str, u64, &str), ()> =
    TableDefinition::new("following_by_time");
/// (user, newness, follower): who follows a user, newest follow first.
pub const FOLLOWERS_BY_TIME: TableDefinition<(&str, u64, &str), ()> =
    TableDefinition::new("followers_by_time");
/// (follower, followee) → the lists the edge is filed under, comma-separated;
/// only edges filed under some list have a row.
pub const EDGE_LISTS: TableDefinition<(&str, &str), &str> = TableDefinition::new("edge_lists");
/// (followee, follower) → the same lists, for the fanout worker's index.
pub const LISTED: TableDefinition<(&str, &str), &str> = TableDefinition::new("listed");
/// (user, list, member): the accounts a user filed under a list, in id order.
pub const LIST_MEMBERS: TableDefinition<(&str, &str, &str), ()> =
    TableDefinition::new("list_members");
/// (user, list) → how many accounts the list holds; a list with none has no row.
pub const USER_LISTS: TableDefinition<(&str, &str), u64> = TableDefinition::new("user_lists");
/// (group, member): a group's members, in id order.
pub const GROUP_MEMBERS: TableDefinition<(&str, &str), ()> = TableDefinition::new("group_members");
/// (user, group): the groups a user is in.
pub const USER_GROUPS: TableDefinition<(&str, &str), ()> = TableDefinition::new("user_groups");
/// group → how many members it has; a group with none has no row.
pub const GROUP_SIZES: TableDefinition<&str, u64> = TableDefinition::new("group_sizes");
/// (user, relation code, target): whom a user mutes and blocks, in id order.
pub const RELATIONS: TableDefinition<(&str, u8, &str), ()> = TableDefinition::new("relations");
/// (target, relation code, user): who mutes and blocks a user, in id order.
pub const RELATED: TableDefinition<(&str, u8, &str), ()> = TableDefinition::new("related");
/// (user, target) → when the user's mute of the target ends (ms since
/// the epoch): mutes that end by themselves.
pub const MUTE_ENDS: TableDefinition<(&str, &str), u64> = TableDefinition::new("mute_ends");
/// (end ms, user, target): the same ends, soonest first, for the sweep.
pub const MUTES_DUE: TableDefinition<(u64, &str, &str), ()> = TableDefinition::new("mutes_due");
/// When each `notify` option was turned on: (user, target) → ms.
pub const NOTIFY_SINCE: TableDefinition<(&str, &str), u64> = TableDefinition::new("notify_since");
/// author: the authors marked for hybrid fanout.
pub const HYBRID: TableDefinition<&str, ()> = TableDefinition::new("hybrid");
/// user id → (tokens refused up to this ms, suspended): account standings,
/// kept after the account's deletion.
pub const ACCOUNTS: TableDefinition<&str, (u64, bool)> = TableDefinition::new("accounts");
/// post id → post record.
pub const POSTS: TableDefinition<u64, &[u8]> = TableDefinition::new("posts");
/// (author, post id): an author's posts in time order.
pub const AUTHOR_POSTS: TableDefinition<(&str, u64), ()> = TableDefinition::new("author_posts");
/// (mentioned user, post id): the posts that mention a user, in time order.
pub const MENTIONS: TableDefinition<(&str, u64), ()> = TableDefinition::new("mentions");
/// (post id as text, user) → when the user liked the post.
pub const LIKES: TableDefinition<(&str, &str), u64> = TableDefinition::new("likes");
/// (post id as text, newness, user): a post's likers, newest first
/// (newness is `u64::MAX` minus the like's time).
pub const LIKES_BY_TIME: TableDefinition<(&str, u64, &str), ()> =
    TableDefinition::new("likes_by_time");
/// (user, post id): the posts a user likes.
pub const USER_LIKES: TableDefinition<(&str, u64), ()> = TableDefinition::new("user_likes");
/// (post id, reply id): the replies to a post, in time order.
pub const REPLIES: TableDefinition<(u64, u64), ()> = TableDefinition::new("replies");
/// (user, post id) → the item (a post of the user's) of their repost of the post.
pub const REPOSTS: TableDefinition<(&str, u64), u64> = TableDefinition::new("reposts");
/// (post id, item id) → the reposter: a post's reposts, in time order.
pub const REPOSTERS: TableDefinition<(u64, u64), &str> = TableDefinition::new("reposters");
/// (recipient, kind code, post or 0, actor, source or 0) → the notice's id.
pub const NOTICES: TableDefinition<(&str, u8, u64, &str, u64), u64> =
    TableDefinition::new("notices");
/// (actor, recipient, kind code, post or 0, source or 0) → the notice's id:
/// what a user caused, for their deletion.
pub const NOTICES_BY_ACTOR: TableDefinition<(&str, &str, u8, u64, u64), u64> =
    TableDefinition::new("notices_by_actor");
/// (recipient, kind code, post or 0, window, id, actor) → source or 0: an
/// entry's notices in time order.
pub const ENTRY_NOTICES: TableDefinition<(&str, u8, u64, u64, u64, &str), u64> =
    TableDefinition::new("entry_notices");
/// (recipient, kind code, post or 0, window) → the entry (count, newest,
/// actors), encoded.
pub const NOTICE_GROUPS: TableDefinition<(&str, u8, u64, u64), &[u8]> =
    TableDefinition::new("notice_groups");
/// (recipient, newest notice id, kind code, post or 0, window): a user's
/// entries in the order of their newest notices.
pub const NOTICE_ORDER: TableDefinition<(&str, u64, u8, u64, u64), ()> =
    TableDefinition::new("notice_order");
/// (post id, tally code) → the post's count of that kind; none at zero.
pub const TALLIES: TableDefinition<(u64, u8), i64> = TableDefinition::new("tallies");
/// (user, marker timeline code) → (the newest post read, when set).
pub const MARKERS: TableDefinition<(&str, u8), (u64, u64)> = TableDefinition::new("markers");
/// (user, list): the lists a user marked exclusive.
pub const EXCLUSIVE_LISTS: TableDefinition<(&str, &str), ()> =
    TableDefinition::new("exclusive_lists");
/// (user, post): the threads a user muted, named by their first posts.
pub const THREAD_MUTES: TableDefinition<(&str, u64), ()> = TableDefinition::new("thread_mutes");
/// user → their keyword filters: the set's revision (8 bytes, big-endian),
/// then its JSON (`FilterSet::to_bytes`).
pub const FILTERS: TableDefinition<&str, &[u8]> = TableDefinition::new("filters");
/// (user, collection, post) → when the user kept the post there.
pub const KEPT: TableDefinition<(&str, &str, u64), u64> = TableDefinition::new("kept");
/// (user, collection, when kept, post): a collection in its order (read
/// backwards: newest kept first).
pub const KEPT_ORDER: TableDefinition<(&str, &str, u64, u64), ()> =
    TableDefinition::new("kept_order");
/// (post, user, collection): who keeps a post, so that its deletion takes
/// it out of every collection.
pub const KEPT_BY_POST: TableDefinition<(u64, &str, &str), ()> =
    TableDefinition::new("kept_by_post");
/// sequence → encoded event, waiting to be relayed to the log.
/// Webhook endpoints by id, as JSON.
pub const WEBHOOKS: TableDefinition<&str, &[u8]> = TableDefinition::new("webhooks");
/// Webhook delivery attempts by (endpoint, seq), as JSON.
pub const WEBHOOK_ATTEMPTS: TableDefinition<(&str, u64), &[u8]> =
    TableDefinition::new("webhook_attempts");
pub const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");

/// sequence → encoded event: the embedded log.
pub const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
/// consumer group → next sequence to consume.
pub const OFFSETS: TableDefinition<&str, u64> = TableDefinition::new("offsets");

#[derive(Serialize, Deserialize)]
pub struct PostRecord {
    pub author: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<RefRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repost_of: Option<RefRecord>,
}

/// An entry of a user's notifications: how many notices, the newest, and
/// the newest actors with their notices' ids.
#[derive(Serialize, Deserialize)]
pub struct GroupRecord {
    pub count: u64,
    pub latest: u64,
    pub actors: Vec<(u64, String)>,
}

/// Another post and its author, as a record names it.
#[derive(Serialize, Deserialize)]
pub struct RefRecord {
    pub id: u64,
    pub author: String,
}

pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("records serialize")
}

pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::backend(ErrorKind::Internal, "decoding a stored record", e))
}

/// Maps redb's error types into the port error: an I/O failure is
/// `Unavailable` (the store recovers from it, see `recovery`), anything
/// else `Internal`.
pub trait StoreResult<T> {
    fn store(self) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> StoreResult<T> for std::result::Result<T, E> {
    fn store(self) -> Result<T> {
        self.map_err(|e| {
            let kind = match crate::recovery::io_fault(&e) {
                Some(_) => ErrorKind::Unavailable,
                None => ErrorKind::Internal,
            };
            Error::backend(kind, "embedded store", e)
        })
    }
}

/// The last key of a u64-keyed table, or 0.
pub fn last_u64_key<T: ReadableTable<u64, &'static [u8]>>(table: &T) -> Result<u64> {
    Ok(table.last().store()?.map(|(k, _)| k.value()).unwrap_or(0))
}

/// The time a table keyed by (user, target) keeps for the pair, if any.
pub fn time_of_pair<T: ReadableTable<(&'static str, &'static str), u64>>(
    table: &T,
    user: &str,
    target: &str,
) -> Result<Option<u64>> {
    Ok(table.get((user, target)).store()?.map(|v| v.value()))
}
