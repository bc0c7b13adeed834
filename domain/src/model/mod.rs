//! The domain's records and the documented limits that guard them.

pub mod collection;
pub mod filter;
pub mod marker;
pub mod notice;
pub mod relation;
pub mod standing;
pub mod tally;

use crate::error::{Error, Result};
use crate::ids::{ListName, PostId, UserId};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Largest message, in bytes of UTF-8.
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Largest post `data` or user `profile`, as serialized JSON.
pub const MAX_JSON_BYTES: usize = 16 * 1024;
/// Page size when a request names none.
pub const DEFAULT_PAGE_SIZE: usize = 20;
/// Largest page a request may ask for.
pub const MAX_PAGE_SIZE: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: UserId,
    pub followers: u64,
    pub following: u64,
    /// A JSON object, or `None`.
    pub profile: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    pub id: PostId,
    pub author: UserId,
    pub message: String,
    /// Application data: a JSON object, or `None`.
    pub data: Option<Map<String, Value>>,
    /// The users the message mentions (`crate::posts::mentions`), in order.
    pub mentions: Vec<UserId>,
    /// The post this one replies to, and its author.
    pub reply_to: Option<PostRef>,
    /// Set on a repost: the post it carries to the reposter's followers
    /// ([`crate::interactions::reposts`]). A repost has no message of its own.
    pub repost_of: Option<PostRef>,
}

/// Another post, named with its author (what a rule needs of it without
/// reading it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostRef {
    pub id: PostId,
    pub author: UserId,
}

/// What a post's readers did with it, counted exactly
/// ([`crate::interactions::likes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PostCounts {
    pub likes: u64,
    pub reposts: u64,
    pub replies: u64,
}

/// One entry of a timeline as its reader sees it: the post, where it sits
/// (`position`: the post's id, or the id of the newest repost that placed
/// it), and which of the timeline's accounts reposted it, newest first
/// ([`crate::interactions::reposts`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedItem {
    pub position: PostId,
    pub post: Post,
    /// The newest [`crate::interactions::reposts::MAX_REPOSTED_BY`] reposters.
    pub reposted_by: Vec<UserId>,
    /// How many of the timeline's accounts reposted it.
    pub reposts_seen: u64,
    /// The reader's warning filters that match it (`crate::filters`).
    pub filtered: Vec<filter::FilterHit>,
}

impl FeedItem {
    /// The post as itself: no repost placed it.
    pub fn plain(post: Post) -> FeedItem {
        FeedItem {
            position: post.id,
            post,
            reposted_by: Vec::new(),
            reposts_seen: 0,
            filtered: Vec::new(),
        }
    }
}

impl Post {
    /// The creation time is the one encoded in the id.
    pub fn created_at_ms(&self) -> u64 {
        self.id.unix_ms()
    }

    /// A post as a user writes it: a message, maybe data, mentions found
    /// in the message; no reply, no repost.
    pub fn written(
        id: PostId,
        author: UserId,
        message: String,
        data: Option<Map<String, Value>>,
        mentions: Vec<UserId>,
    ) -> Post {
        Post {
            id,
            author,
            message,
            data,
            mentions,
            reply_to: None,
            repost_of: None,
        }
    }

    /// The repost `id` of `original` by `user`.
    pub fn repost(id: PostId, user: UserId, original: PostRef) -> Post {
        Post {
            repost_of: Some(original),
            ..Post::written(id, user, String::new(), None, Vec::new())
        }
    }

    /// The post a timeline shows for this one: the original of a repost,
    /// else the post itself.
    pub fn shown(&self) -> PostRef {
        self.repost_of.clone().unwrap_or_else(|| PostRef {
            id: self.id,
            author: self.author.clone(),
        })
    }
}

/// One entry of a home timeline: the post and its author, and with embedding
/// also the post's content. A linked entry (no body) is hydrated from the
/// content store when a page is served.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub post: PostId,
    pub author: UserId,
    pub body: Option<Arc<Body>>,
}

/// The content an embedded entry carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub message: String,
    pub data: Option<Map<String, Value>>,
    pub mentions: Vec<UserId>,
    pub reply_to: Option<PostRef>,
    pub repost_of: Option<PostRef>,
}

impl Entry {
    pub fn linked(post: PostId, author: UserId) -> Entry {
        Entry {
            post,
            author,
            body: None,
        }
    }

    /// An entry that carries the post's content.
    pub fn embedded(post: &Post) -> Entry {
        let body = Body {
            message: post.message.clone(),
            data: post.data.clone(),
            mentions: post.mentions.clone(),
            reply_to: post.reply_to.clone(),
            repost_of: post.repost_of.clone(),
        };
        Entry {
            post: post.id,
            author: post.author.clone(),
            body: Some(Arc::new(body)),
        }
    }

    /// The post, when the entry carries it.
    pub fn to_post(&self) -> Option<Post> {
        self.body.as_ref().map(|b| Post {
            id: self.post,
            author: self.author.clone(),
            message: b.message.clone(),
            data: b.data.clone(),
            mentions: b.mentions.clone(),
            reply_to: b.reply_to.clone(),
            repost_of: b.repost_of.clone(),
        })
    }
}

/// How two users stand: whether the first follows the second (and under
/// which of their lists), and back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relationship {
    pub following: bool,
    pub followed_by: bool,
    pub lists: Vec<ListName>,
    /// The first user's follow options for the second that are on; `None`
    /// to a caller who cannot read the first user's own settings.
    pub options: Option<Vec<crate::model::relation::FollowOption>>,
}

/// Ancestors a thread walks up at most: a longer chain starts at the
/// newest this many (`crate::posts::replies`; a muted thread's first post
/// is looked for as far, `crate::notifications::thread_mutes`).
pub const MAX_ANCESTORS: usize = 50;

/// One of a user's lists: how many accounts it holds, and whether it is
/// exclusive (`None` to a caller who cannot read the user's own settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListSummary {
    pub name: crate::ids::ListName,
    pub count: u64,
    pub exclusive: Option<bool>,
}

/// An account to follow, and how many of the user's followees follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub user: UserId,
    pub mutuals: u32,
}

/// One page of a list, newest first, with the cursor of the next page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T, C> {
    pub items: Vec<T>,
    pub next_cursor: Option<C>,
}

/// The validated `limit` of a paged request.
pub fn page_size(limit: Option<u64>) -> Result<usize> {
    match limit {
        None => Ok(DEFAULT_PAGE_SIZE),
        Some(n) if (1..=MAX_PAGE_SIZE as u64).contains(&n) => Ok(n as usize),
        Some(n) => Err(Error::invalid(
            "invalid_limit",
            format!("limit {n} is outside 1..={MAX_PAGE_SIZE}"),
        )),
    }
}

/// Characters that show nothing: whitespace, controls, and the invisible
/// format characters (zero-width spaces and joiners, direction marks, the
/// byte order mark, the soft hyphen).
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
            | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}')
}

/// A message shows something (not only whitespace, controls or invisible
/// characters), holds no control character but newline and tab (a NUL or a
/// terminal escape would reach every reader's screen and log), and is at
/// most [`MAX_MESSAGE_BYTES`] of UTF-8.
pub fn validate_message(message: &str) -> Result<()> {
    if message.chars().all(is_invisible) {
        return Err(Error::invalid("empty_message", "message must not be empty"));
    }
    if let Some(c) = message
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Err(Error::invalid(
            "control_character",
            format!(
                "message holds the control character U+{:04X}; only newline and tab are allowed",
                c as u32
            ),
        ));
    }
    if message.len() > MAX_MESSAGE_BYTES {
        return Err(Error::invalid(
            "message_too_long",
            format!(
                "message is {} bytes; the limit is {MAX_MESSAGE_BYTES} bytes of UTF-8",
                message.len()
            ),
        ));
    }
    Ok(())
}

/// Checks that `value` is a JSON object within the size limit; `field` names it
/// in the error.
pub fn json_object(field: &'static str, value: Value) -> Result<Map<String, Value>> {
    let Value::Object(map) = value else {
        return Err(Error::invalid(
            "invalid_json_field",
            format!("{field} must be a JSON object"),
        ));
    };
    check_json_size(field, &map)?;
    Ok(map)
}

/// Checks that the object `map` is within the size limit, as serialized.
pub fn check_json_size(field: &str, map: &Map<String, Value>) -> Result<()> {
    let size = serde_json::to_vec(map)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_JSON_BYTES {
        return Err(Error::invalid(
            "json_field_too_large",
            format!("{field} is {size} bytes; the limit is {MAX_JSON_BYTES}"),
        ));
    }
    Ok(())
}

/// Refuses JSON text holding an integer literal beyond 64 bits: parsing
/// would silently turn it into a float and lose digits. Integers within 64
/// bits and floats are kept as sent. A lexical scan of the text, since the
/// parsed value no longer tells an integer literal from a float.
pub fn check_json_integers(text: &[u8]) -> Result<()> {
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                // Skip the string, escapes included.
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < text.len()
                    && matches!(text[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let token = std::str::from_utf8(&text[start..i]).unwrap_or("");
                let integer = !token.contains(['.', 'e', 'E']);
                if integer && token.parse::<i64>().is_err() && token.parse::<u64>().is_err() {
                    return Err(Error::invalid(
                        "invalid_json_field",
                        format!(
                            "the integer {} does not fit in 64 bits and cannot be kept exactly",
                            truncate(token)
                        ),
                    ));
                }
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn truncate(s: &str) -> &str {
    s.get(..40).unwrap_or(s)
}

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-21T06:40:00.123Z`.
pub fn rfc3339_ms(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        unix_ms % 1000
    )
}

/// Gregorian date of a day count since 1970-01-01 (proleptic calendar, by
/// eras of 400 years).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The `limit` newest entries, newest first.
pub fn newest(mut entries: Vec<Entry>, limit: usize) -> Vec<Entry> {
    if entries.len() > limit {
        entries.select_nth_unstable_by(limit, |a, b| b.post.cmp(&a.post));
        entries.truncate(limit);
    }
    entries.sort_unstable_by_key(|e| std::cmp::Reverse(e.post));
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_795_243_200_123), "2026-11-21T06:40:00.123Z");
    }

    #[test]
    fn limits_are_enforced() {
        assert_eq!(page_size(None).unwrap(), DEFAULT_PAGE_SIZE);
        assert_eq!(page_size(Some(200)).unwrap(), 200);
        assert_eq!(page_size(Some(0)).unwrap_err().code(), "invalid_limit");
        assert_eq!(page_size(Some(201)).unwrap_err().code(), "invalid_limit");
        assert_eq!(validate_message("  ").unwrap_err().code(), "empty_message");
        assert!(validate_message(&"é".repeat(2048)).is_ok());
        assert_eq!(
            validate_message(&"x".repeat(4097)).unwrap_err().code(),
            "message_too_long"
        );
        assert!(json_object("data", serde_json::json!([1])).is_err());
        let big = serde_json::json!({ "k": "x".repeat(MAX_JSON_BYTES) });
        assert_eq!(
            json_object("data", big).unwrap_err().code(),
            "json_field_too_large"
        );
    }

    #[test]
    fn a_message_of_invisible_characters_is_blank() {
        for blank in [
            "\u{200B}\u{200D}",
            "\u{0007}\t",
            "\u{FEFF} \u{2060}",
            "\u{00AD}",
        ] {
            assert_eq!(
                validate_message(blank).unwrap_err().code(),
                "empty_message",
                "{blank:?}"
            );
        }
        assert!(validate_message("\u{200B}hi").is_ok());
    }

    #[test]
    fn control_characters_but_newline_and_tab_are_refused() {
        for bad in [
            "a\u{0}b",
            "red \u{1b}[31m",
            "bell\u{7}",
            "cr\r",
            "\u{9b}csi",
        ] {
            assert_eq!(
                validate_message(bad).unwrap_err().code(),
                "control_character",
                "{bad:?}"
            );
        }
        assert!(validate_message("line one\n\tline two").is_ok());
    }

    #[test]
    fn integers_beyond_64_bits_are_refused_and_the_rest_kept() {
        for exact in [
            r#"{"big": 18446744073709551615, "neg": -9223372036854775808, "f": 1.5}"#,
            r#"{"float": 1e300, "s": "123456789012345678901234567890"}"#,
            r#"{"esc": "\"9\" 99999999999999999999"}"#,
        ] {
            assert!(check_json_integers(exact.as_bytes()).is_ok(), "{exact}");
        }
        for inexact in [
            r#"{"n": 18446744073709551616}"#,
            r#"{"deep": [{"n": -9223372036854775809}]}"#,
        ] {
            assert_eq!(
                check_json_integers(inexact.as_bytes()).unwrap_err().code(),
                "invalid_json_field",
                "{inexact}"
            );
        }
    }
}
