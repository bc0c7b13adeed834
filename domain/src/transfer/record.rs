//! The export format: JSON Lines, one object per line, each with a `kind`.
//! A stream opens with a `header` (format name, version, when it was
//! made), then every `user`, `account` (ids with a standing other than the
//! default), `follow` (with its time and lists), `mute` and `block`,
//! `member` (of a group), `post` (a repost is a post with `repost_of`
//! and no message, a reply one with `reply_to`, marked `gone` when the
//! post it answers is not in the stream: deleted since), `like` (with its
//! time), `marker` (a user's place in a timeline) and `kept` (a post in
//! one of a user's collections, such as bookmarks) and `filters` (a
//! user's keyword filters, all on one line), in that order and
//! each kind in key order, and closes with an `end` that counts the
//! records, so a cut stream is told from a whole one. Timelines are not in
//! it: they are rebuilt from the graph and the posts.
//!
//! Version 2 marks replies whose post is gone; a version 1 stream did
//! not, so each of its replies may answer a post it does not hold.
//! Version 3 adds `kept`; a stream of an older version holds none.
//! Version 6 adds `filters`; a stream of an older version holds none.
//! Version 7 adds `until_ms` to a `mute` that ends by itself,
//! `thread_mute` and `exclusive_list`.
//! Version 8 adds `since_ms` to a `notify` follow option.
//!
//! Lines are read into [`Line`] (plain strings, as written), then checked
//! into a [`Record`] of validated ids, so a bad line is refused with what
//! is wrong with it.

use crate::accounts::lifecycle::Standing;
use crate::checks::edge_lists;
use crate::error::{Error, Result};
use crate::feed::markers::Marker;
use crate::graph::relations::{Priority, Relation};
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::collection::{Collection, Kept};
use crate::model::filter::Filter;
use crate::model::relation::FollowOption;
use crate::model::Post;
pub use crate::transfer::line::{Line, RefLine};
use serde_json::{Map, Value};

/// The format's name, in the header.
pub const FORMAT: &str = "socialite-export";
/// The format's version written; a reader takes this one and
/// [`OLDEST_VERSION`] on, and refuses a stream of any other.
pub const VERSION: u32 = 8;
/// The oldest version read.
pub const OLDEST_VERSION: u32 = 1;

/// A record of a store, with validated ids.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    User {
        id: UserId,
        profile: Option<Map<String, Value>>,
    },
    Account {
        id: UserId,
        standing: Standing,
    },
    Follow {
        follower: UserId,
        followee: UserId,
        at_ms: u64,
        lists: Vec<ListName>,
    },
    /// `at_ms`: the time the relation keeps, if any: when a mute ends by
    /// itself (its line's `until_ms`), when a `notify` option was turned
    /// on (its line's `since_ms`); none for the others.
    Relation {
        user: UserId,
        relation: Relation,
        target: UserId,
        at_ms: Option<u64>,
    },
    Member {
        group: GroupName,
        user: UserId,
    },
    /// A post; `answered_gone` for a reply whose post the source no
    /// longer held (a reply outlives the post it answers), which the
    /// target stores as it was, counted nowhere.
    Post {
        post: Post,
        answered_gone: bool,
    },
    Like {
        post: PostId,
        user: UserId,
        at_ms: u64,
    },
    Marker {
        user: UserId,
        marker: Marker,
    },
    /// A post in one of the user's collections.
    Kept {
        collection: Collection,
        user: UserId,
        kept: Kept,
    },
    /// The user's keyword filters, in id order, and the id the next new
    /// one takes (ids are never given twice).
    Filters {
        user: UserId,
        filters: Vec<Filter>,
        next_id: u64,
    },
    /// A thread `user` muted, named by its first post.
    ThreadMute {
        user: UserId,
        post: PostId,
    },
    /// A list `user` marked exclusive.
    ExclusiveList {
        user: UserId,
        list: ListName,
    },
}

fn user(s: &str) -> Result<UserId> {
    UserId::parse(s)
}

/// A relation's record, from its line's ids.
fn relation(u: &str, relation: Relation, target: &str, at_ms: Option<u64>) -> Result<Record> {
    Ok(Record::Relation {
        user: user(u)?,
        relation,
        target: user(target)?,
        at_ms,
    })
}

impl Record {
    /// A post as a store holds it, before an export marks its reply.
    pub fn post(post: Post) -> Record {
        Record::Post {
            post,
            answered_gone: false,
        }
    }

    /// The record a data line of a stream of `version` holds; `None` for
    /// the header and the end.
    pub fn from_line(line: Line, version: u32) -> Result<Option<Record>> {
        Ok(Some(match line {
            Line::Header { .. } | Line::End { .. } => return Ok(None),
            Line::User { id, profile } => Record::User {
                id: user(&id)?,
                profile,
            },
            Line::Account {
                id,
                tokens_after_ms,
                suspended,
            } => Record::Account {
                id: user(&id)?,
                standing: Standing {
                    tokens_after_ms,
                    suspended,
                },
            },
            Line::Follow {
                follower,
                followee,
                at_ms,
                lists,
            } => Record::Follow {
                follower: user(&follower)?,
                followee: user(&followee)?,
                at_ms,
                // In name order, each once, as a follow files them.
                lists: edge_lists(&lists.iter().map(String::as_str).collect::<Vec<_>>())?,
            },
            Line::Mute {
                user: u,
                target,
                until_ms,
            } => relation(&u, Relation::Mute, &target, until_ms)?,
            Line::Block { user: u, target } => relation(&u, Relation::Block, &target, None)?,
            Line::Priority {
                user: u,
                target,
                level,
            } => Record::Relation {
                user: user(&u)?,
                relation: Relation::Priority(Priority::new(level)?.ok_or_else(|| {
                    Error::invalid(
                        "invalid_priority",
                        "a priority record has a level of -2 to 2 but 0",
                    )
                })?),
                target: user(&target)?,
                at_ms: None,
            },
            Line::FollowOption {
                user: u,
                target,
                option,
                since_ms,
            } => {
                let option = FollowOption::parse(&option)?;
                let since_ms = since_ms.filter(|_| option == FollowOption::Notify);
                relation(&u, Relation::Option(option), &target, since_ms)?
            }
            Line::Member { group, user: u } => Record::Member {
                group: GroupName::parse(&group)?,
                user: user(&u)?,
            },
            Line::Post {
                id,
                author,
                message,
                data,
                mentions,
                reply_to,
                repost_of,
            } => Record::Post {
                // Version 1 did not mark replies whose post was gone.
                answered_gone: reply_to.as_ref().is_some_and(|r| r.gone || version < 2),
                post: Post {
                    id: PostId::parse(&id)?,
                    author: user(&author)?,
                    message,
                    data,
                    mentions: mentions.iter().map(|m| user(m)).collect::<Result<_>>()?,
                    reply_to: reply_to.as_ref().map(RefLine::read).transpose()?,
                    repost_of: repost_of.as_ref().map(RefLine::read).transpose()?,
                },
            },
            Line::Like {
                post,
                user: u,
                at_ms,
            } => Record::Like {
                post: PostId::parse(&post)?,
                user: user(&u)?,
                at_ms,
            },
            reader => Record::of_reader(reader)?,
        }))
    }
}

impl From<&Record> for Line {
    fn from(record: &Record) -> Line {
        let text = |u: &UserId| u.as_str().to_owned();
        match record {
            Record::User { id, profile } => Line::User {
                id: text(id),
                profile: profile.clone(),
            },
            Record::Account { id, standing } => Line::Account {
                id: text(id),
                tokens_after_ms: standing.tokens_after_ms,
                suspended: standing.suspended,
            },
            Record::Follow {
                follower,
                followee,
                at_ms,
                lists,
            } => Line::Follow {
                follower: text(follower),
                followee: text(followee),
                at_ms: *at_ms,
                lists: lists.iter().map(|l| l.as_str().to_owned()).collect(),
            },
            Record::Relation {
                user,
                relation: Relation::Mute,
                target,
                at_ms,
            } => Line::Mute {
                user: text(user),
                target: text(target),
                until_ms: *at_ms,
            },
            Record::Relation {
                user,
                relation: Relation::Priority(p),
                target,
                ..
            } => Line::Priority {
                user: text(user),
                target: text(target),
                level: i64::from(p.level()),
            },
            Record::Relation {
                user,
                relation: Relation::Option(o),
                target,
                at_ms,
            } => Line::FollowOption {
                user: text(user),
                target: text(target),
                option: o.as_str().to_owned(),
                since_ms: *at_ms,
            },
            Record::Relation {
                user,
                relation: Relation::Block,
                target,
                ..
            } => Line::Block {
                user: text(user),
                target: text(target),
            },
            Record::Member { group, user } => Line::Member {
                group: group.as_str().to_owned(),
                user: text(user),
            },
            Record::Post {
                post: p,
                answered_gone,
            } => Line::Post {
                id: p.id.to_string(),
                author: text(&p.author),
                message: p.message.clone(),
                data: p.data.clone(),
                mentions: p.mentions.iter().map(text).collect(),
                reply_to: p.reply_to.as_ref().map(|r| RefLine {
                    gone: *answered_gone,
                    ..RefLine::of(r)
                }),
                repost_of: p.repost_of.as_ref().map(RefLine::of),
            },
            Record::Like { post, user, at_ms } => Line::Like {
                post: post.to_string(),
                user: text(user),
                at_ms: *at_ms,
            },
            reader => reader.reader_line(),
        }
    }
}

/// Reads one line of a stream: a [`Line`], or a refusal naming the line
/// (`line_no`, counted from 1) and what is wrong with it.
pub fn parse_line(line_no: u64, text: &str) -> Result<Line> {
    let refused =
        |what: String| Error::invalid("invalid_import_line", format!("line {line_no}: {what}"));
    let line: Line = serde_json::from_str(text).map_err(|e| refused(e.to_string()))?;
    if let Line::Header {
        format, version, ..
    } = &line
    {
        if format != FORMAT || !(OLDEST_VERSION..=VERSION).contains(version) {
            return Err(refused(format!(
                "a {format} stream of version {version}; this reads {FORMAT} versions {OLDEST_VERSION} to {VERSION}"
            )));
        }
    }
    Ok(line)
}

/// The record of a line of a stream of `version`, refused with the line's
/// number if its ids are not valid.
pub fn record_of(line_no: u64, line: Line, version: u32) -> Result<Option<Record>> {
    Record::from_line(line, version).map_err(|e| {
        Error::invalid(
            "invalid_import_line",
            format!("line {line_no}: {}", e.message()),
        )
    })
}

/// A line as written: compact JSON, no newline.
pub fn write_line(line: &Line) -> String {
    serde_json::to_string(line).expect("a line is always JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let line = parse_line(1, text).unwrap();
        let record = record_of(1, line, VERSION).unwrap().unwrap();
        write_line(&Line::from(&record))
    }

    #[test]
    fn each_kind_reads_and_writes_back_the_same() {
        for text in [
            r#"{"kind":"user","id":"ann","profile":{"name":"Ann"}}"#,
            r#"{"kind":"user","id":"bo","profile":null}"#,
            r#"{"kind":"account","id":"bo","tokens_after_ms":5,"suspended":true}"#,
            r#"{"kind":"follow","follower":"ann","followee":"bo","at_ms":7,"lists":["work"]}"#,
            r#"{"kind":"mute","user":"ann","target":"bo"}"#,
            r#"{"kind":"block","user":"bo","target":"ann"}"#,
            r#"{"kind":"priority","user":"bo","target":"ann","level":-2}"#,
            r#"{"kind":"member","group":"rust","user":"ann"}"#,
            r#"{"kind":"post","id":"00000000000003e8","author":"ann","message":"hi @bo","data":null,"mentions":["bo"]}"#,
            r#"{"kind":"post","id":"00000000000003e9","author":"bo","message":"","data":null,"mentions":[],"repost_of":{"id":"00000000000003e8","author":"ann"}}"#,
            r#"{"kind":"post","id":"00000000000003ea","author":"bo","message":"yes","data":null,"mentions":[],"reply_to":{"id":"00000000000003e7","author":"ann","gone":true}}"#,
            r#"{"kind":"like","post":"00000000000003e8","user":"bo","at_ms":9}"#,
            r#"{"kind":"marker","user":"bo","timeline":"home","last_read_id":"00000000000003e8","at_ms":11}"#,
            r#"{"kind":"kept","collection":"bookmarks","user":"bo","post":"00000000000003e8","at_ms":12}"#,
        ] {
            assert_eq!(round_trip(text), text);
        }
    }

    #[test]
    fn a_bad_line_is_refused_with_its_number_and_what_is_wrong() {
        let e = parse_line(7, "{\"kind\":\"user\"").unwrap_err();
        assert_eq!(e.code(), "invalid_import_line");
        assert!(e.message().starts_with("line 7: "), "{}", e.message());
        let bad_id = parse_line(9, r#"{"kind":"user","id":"no spaces"}"#).unwrap();
        let e = record_of(9, bad_id, VERSION).unwrap_err();
        assert!(e.message().starts_with("line 9: "), "{}", e.message());
        let other =
            r#"{"kind":"header","format":"socialite-export","version":9,"exported_at_ms":1}"#;
        assert!(parse_line(1, other)
            .unwrap_err()
            .message()
            .contains("version 9"));
    }

    #[test]
    fn a_version_1_reply_may_answer_a_post_the_stream_does_not_hold() {
        let text = r#"{"kind":"post","id":"00000000000003ea","author":"bo","message":"yes","data":null,"mentions":[],"reply_to":{"id":"00000000000003e7","author":"ann"}}"#;
        let gone = |version| match record_of(1, parse_line(1, text).unwrap(), version) {
            Ok(Some(Record::Post { answered_gone, .. })) => answered_gone,
            other => panic!("{other:?}"),
        };
        assert!(gone(1));
        assert!(!gone(2));
    }
}
