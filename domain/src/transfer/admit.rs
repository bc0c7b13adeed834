//! What a record of an import may hold: no more than the write path lets
//! a client write. Each check is the write path's own function (message,
//! JSON objects, mentions, lists, ids and times against the clock), so a
//! limit is stated once and holds on both ways in. What a record says of
//! other records (a like's post, a reply's post, a follow cap) is the
//! store's to check, in [`crate::transfer::import`].

use crate::checks::{check_lists_per_edge, DEFAULT_MAX_FOLLOWING};
use crate::error::{Error, Result};
use crate::graph::relations::Relation;
use crate::ids::{check_time_not_ahead, PostId};
use crate::model::{check_json_size, validate_message, Post};
use crate::posts::mentions::candidates;
use crate::transfer::record::Record;

/// What an import holds records to beyond their own limits: the
/// deployment's settings that the write path holds writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The most accounts a user may follow.
    pub max_following: u64,
}

impl Default for Caps {
    fn default() -> Caps {
        Caps {
            max_following: DEFAULT_MAX_FOLLOWING,
        }
    }
}

/// Longest line read, in bytes: far above any record the limits admit
/// (a message and a JSON object, each escaped), and a bound on what one
/// hostile line costs before it is refused.
pub const MAX_LINE_BYTES: usize = 256 * 1024;

/// Refuses `record` if no write could have made it: a limit of the write
/// path broken, or an id or a time later than the clock allows.
pub fn admit(record: &Record, now_ms: u64) -> Result<()> {
    match record {
        Record::User { profile, .. } => match profile {
            Some(p) => check_json_size("profile", p),
            None => Ok(()),
        },
        Record::Account { standing, .. } => {
            check_time_not_ahead("a revocation", standing.tokens_after_ms, now_ms)
        }
        Record::Follow { at_ms, lists, .. } => {
            check_lists_per_edge(lists.len())?;
            check_time_not_ahead("a follow", *at_ms, now_ms)
        }
        Record::Relation {
            relation: Relation::Mute,
            at_ms: Some(at),
            ..
        } => crate::graph::mute_ends::check_end(*at, now_ms),
        Record::Relation {
            at_ms: Some(at), ..
        } => check_time_not_ahead("a notify option", *at, now_ms),
        Record::Relation { .. }
        | Record::Member { .. }
        | Record::ThreadMute { .. }
        | Record::ExclusiveList { .. } => Ok(()),
        Record::Post { post, .. } => admit_post(post, now_ms),
        Record::Like { at_ms, .. } => check_time_not_ahead("a like", *at_ms, now_ms),
        Record::Marker { marker, .. } => {
            marker.last_read.check_not_ahead("a marker", now_ms)?;
            check_time_not_ahead("a marker", marker.at_ms, now_ms)
        }
        Record::Kept { kept, .. } => {
            kept.post.check_not_ahead("a kept post", now_ms)?;
            check_time_not_ahead("a kept post", kept.at_ms, now_ms)
        }
        Record::Filters { filters, .. } => {
            if filters.len() > crate::filters::MAX_FILTERS {
                return Err(Error::invalid(
                    "too_many_filters",
                    format!(
                        "a user keeps at most {} filters",
                        crate::filters::MAX_FILTERS
                    ),
                ));
            }
            filters
                .iter()
                .try_for_each(|f| crate::filters::restorable(f).map(drop))
        }
    }
}

/// A post as a user writes it, or a repost as one is made: a repost holds
/// nothing of its own; a post holds a message that passes, data within
/// the limit and mentions that its message names. Either is newer than
/// the post it answers or carries, so no chain of replies turns back on
/// itself.
fn admit_post(post: &Post, now_ms: u64) -> Result<()> {
    post.id.check_not_ahead("a post", now_ms)?;
    if let Some(original) = &post.repost_of {
        if !post.message.is_empty()
            || post.data.is_some()
            || !post.mentions.is_empty()
            || post.reply_to.is_some()
        {
            return Err(Error::invalid(
                "invalid_repost",
                "a repost holds no message, data, mentions or reply of its own",
            ));
        }
        return older(post.id, original.id, "the post it reposts");
    }
    validate_message(&post.message)?;
    if let Some(data) = &post.data {
        check_json_size("data", data)?;
    }
    let named = candidates(&post.message)?;
    let mut rest = named.iter();
    // In the order the message names them, each at most once.
    if !post.mentions.iter().all(|m| rest.any(|n| n == m)) {
        return Err(Error::invalid(
            "invalid_mentions",
            "a post mentions only users its message names with @, in their order",
        ));
    }
    match &post.reply_to {
        Some(answered) => older(post.id, answered.id, "the post it answers"),
        None => Ok(()),
    }
}

fn older(post: PostId, other: PostId, what: &str) -> Result<()> {
    if other >= post {
        return Err(Error::invalid(
            "invalid_reply",
            format!("post {post} is not newer than {what}, {other}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{now_ms, ListName, UserId};
    use crate::model::PostRef;
    use serde_json::{json, Map, Value};

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    fn post(id: u64, message: &str) -> Post {
        Post::written(PostId(id), u("ann"), message.into(), None, Vec::new())
    }

    fn code(r: Record) -> &'static str {
        match admit(&r, now_ms()) {
            Ok(()) => "ok",
            Err(e) => e.code(),
        }
    }

    fn object(bytes: usize) -> Map<String, Value> {
        let Value::Object(m) = json!({ "k": "x".repeat(bytes) }) else {
            unreachable!()
        };
        m
    }

    #[test]
    fn a_post_passes_the_write_paths_limits() {
        assert_eq!(code(Record::post(post(10, "hi @bo and @cy"))), "ok");
        for (message, refused) in [
            ("x".repeat(4097), "message_too_long"),
            (" \u{200b} ".into(), "empty_message"),
            ("nul\u{0}".into(), "control_character"),
            ("esc\u{1b}[2J".into(), "control_character"),
            (
                (0..11).map(|i| format!("@u{i} ")).collect(),
                "too_many_mentions",
            ),
        ] {
            assert_eq!(code(Record::post(post(10, &message))), refused);
        }
        let mut big = post(10, "data");
        big.data = Some(object(16 * 1024));
        assert_eq!(code(Record::post(big)), "json_field_too_large");
        let mut unnamed = post(10, "hi @bo");
        unnamed.mentions = vec![u("cy")];
        assert_eq!(code(Record::post(unnamed)), "invalid_mentions");
        let mut twice = post(10, "hi @bo");
        twice.mentions = vec![u("bo"), u("bo")];
        assert_eq!(code(Record::post(twice)), "invalid_mentions");
    }

    #[test]
    fn a_reply_or_a_repost_is_newer_than_its_post_and_a_repost_holds_nothing() {
        let to = |id| PostRef {
            id: PostId(id),
            author: u("bo"),
        };
        let mut reply = post(10, "yes");
        reply.reply_to = Some(to(9));
        assert_eq!(code(Record::post(reply.clone())), "ok");
        reply.reply_to = Some(to(10));
        assert_eq!(code(Record::post(reply.clone())), "invalid_reply");
        reply.reply_to = Some(to(11));
        assert_eq!(code(Record::post(reply)), "invalid_reply");
        let repost = Post::repost(PostId(10), u("ann"), to(9));
        assert_eq!(code(Record::post(repost.clone())), "ok");
        let mut worded = repost.clone();
        worded.message = "mine".into();
        assert_eq!(code(Record::post(worded)), "invalid_repost");
        let backwards = Post::repost(PostId(10), u("ann"), to(12));
        assert_eq!(code(Record::post(backwards)), "invalid_reply");
        let empty = post(10, "");
        assert_eq!(code(Record::post(empty)), "empty_message");
    }

    #[test]
    fn profiles_lists_ids_and_times_are_bounded() {
        let user = |bytes| Record::User {
            id: u("ann"),
            profile: Some(object(bytes)),
        };
        assert_eq!(code(user(100)), "ok");
        assert_eq!(code(user(100_000_000 / 1000)), "json_field_too_large");
        let follow = |n: usize, at_ms| Record::Follow {
            follower: u("ann"),
            followee: u("bo"),
            at_ms,
            lists: (0..n)
                .map(|i| ListName::parse(&format!("l{i}")).unwrap())
                .collect(),
        };
        assert_eq!(code(follow(8, 5)), "ok");
        assert_eq!(code(follow(9, 5)), "too_many_lists");
        assert_eq!(code(follow(0, now_ms() + 3_600_000)), "time_ahead");
        assert_eq!(code(Record::post(post(u64::MAX, "far"))), "time_ahead");
        let like = Record::Like {
            post: PostId(1),
            user: u("bo"),
            at_ms: u64::MAX,
        };
        assert_eq!(code(like), "time_ahead");
    }
}
