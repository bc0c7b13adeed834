//! Identifiers: user ids chosen by clients, and time-ordered post ids.

use crate::error::{Error, Result};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest user id, in bytes.
pub const MAX_USER_ID_LEN: usize = 64;

/// A user id: 1 to 64 characters of `[A-Za-z0-9_.-]`. Cheap to clone, because
/// the same id is held by many timeline entries and edge lists.
#[derive(Clone, Eq, PartialOrd, Ord)]
pub struct UserId(Arc<str>);

impl PartialEq for UserId {
    /// Copies of one id share their text, so most comparisons end at the pointer.
    fn eq(&self, other: &UserId) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl std::hash::Hash for UserId {
    /// By the text, as equality is.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl UserId {
    pub fn parse(s: &str) -> Result<UserId> {
        // `.` and `..` are path segments that clients normalise away: a user
        // with such an id could never be addressed by URL.
        let ok = !s.is_empty()
            && s.len() <= MAX_USER_ID_LEN
            && s != "."
            && s != ".."
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if ok {
            Ok(UserId(Arc::from(s)))
        } else {
            Err(Error::invalid(
                "invalid_user_id",
                format!(
                    "user id {:?} must be 1 to {MAX_USER_ID_LEN} characters of A-Z a-z 0-9 _ . -, and not . or ..",
                    truncate_for_message(s)
                ),
            ))
        }
    }

    /// An id read back from a store, validated when it was written.
    pub fn from_stored(id: String) -> UserId {
        debug_assert!(UserId::parse(&id).is_ok(), "stored id {id:?} is invalid");
        UserId(Arc::from(id))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// Longest list name, in bytes.
pub const MAX_LIST_NAME_LEN: usize = 32;
/// Longest group name, in bytes.
pub const MAX_GROUP_NAME_LEN: usize = 64;

/// A name of `[A-Za-z0-9_-]`, of a kind the macro's arguments say: its
/// type, longest length, error code and what it names.
macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $max:expr, $code:literal, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Arc<str>);

        impl $name {
            pub fn parse(s: &str) -> Result<$name> {
                let ok = !s.is_empty()
                    && s.len() <= $max
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
                if ok {
                    Ok($name(Arc::from(s)))
                } else {
                    Err(Error::invalid(
                        $code,
                        format!(
                            "{} {:?} must be 1 to {} characters of A-Z a-z 0-9 _ -",
                            $what,
                            truncate_for_message(s),
                            $max
                        ),
                    ))
                }
            }

            /// A name read back from a store, validated when it was written.
            pub fn from_stored(name: &str) -> $name {
                debug_assert!($name::parse(name).is_ok(), "stored name {name:?} is invalid");
                $name(Arc::from(name))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }
    };
}

name_type!(
    /// The name of a list: a label on follow edges (`work`, `family`), 1 to
    /// 32 characters of `[A-Za-z0-9_-]`. Cheap to clone.
    ListName,
    MAX_LIST_NAME_LEN,
    "invalid_list_name",
    "list name"
);

name_type!(
    /// The name of a group that users join and leave, 1 to 64 characters of
    /// `[A-Za-z0-9_-]`. Cheap to clone.
    GroupName,
    MAX_GROUP_NAME_LEN,
    "invalid_group_name",
    "group name"
);

/// The key of one stored timeline. A home timeline's key is its user's id, so
/// the keys of the home timelines are the user ids themselves (the text is
/// shared, not copied); a list timeline's is `USER:LIST`, a group's
/// `+GROUP`. `:` and `+` are in none of the alphabets, so no two timelines
/// share a key.
#[derive(Clone, Eq, PartialOrd, Ord)]
pub struct TimelineId(Arc<str>);

impl PartialEq for TimelineId {
    fn eq(&self, other: &TimelineId) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl std::hash::Hash for TimelineId {
    /// By the text, as `str` hashes, so maps keyed by timeline find a home
    /// timeline by the user id's text.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl std::borrow::Borrow<str> for TimelineId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl TimelineId {
    /// The user's home timeline.
    pub fn home(user: &UserId) -> TimelineId {
        TimelineId(user.0.clone())
    }

    /// The timeline of the accounts `user` filed under `list`.
    pub fn list(user: &UserId, list: &ListName) -> TimelineId {
        TimelineId(Arc::from(format!("{user}:{list}")))
    }

    /// The timeline of a group's members.
    pub fn group(group: &GroupName) -> TimelineId {
        TimelineId(Arc::from(format!("+{group}")))
    }

    /// Whether this is a group's timeline.
    pub fn is_group(&self) -> bool {
        self.0.starts_with('+')
    }

    /// Whether this is a user's home timeline.
    pub fn is_home(&self) -> bool {
        !self.is_group() && !self.0.contains(':')
    }

    /// A key read back from a store.
    pub fn from_stored(key: &str) -> TimelineId {
        TimelineId(Arc::from(key))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TimelineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for TimelineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

fn truncate_for_message(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Milliseconds of the post id epoch, 2024-01-01T00:00:00Z.
const EPOCH_MS: u64 = 1_704_067_200_000;
const NODE_BITS: u32 = 10;
const SEQ_BITS: u32 = 12;

/// A post id: 42 bits of milliseconds since 2024, 12 bits of sequence within the
/// millisecond, 10 bits of producer node. Ids sort by time, so they order
/// timelines and serve as paging cursors. Printed as 16 hex digits, which sort
/// the same way as the numbers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PostId(pub u64);

impl PostId {
    pub fn parse(s: &str) -> Result<PostId> {
        if s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            if let Ok(v) = u64::from_str_radix(s, 16) {
                return Ok(PostId(v));
            }
        }
        Err(Error::invalid(
            "invalid_post_id",
            format!(
                "post id {:?} must be 16 hex digits",
                truncate_for_message(s)
            ),
        ))
    }

    /// Milliseconds since the Unix epoch at which the id was made.
    pub fn unix_ms(self) -> u64 {
        (self.0 >> (NODE_BITS + SEQ_BITS)) + EPOCH_MS
    }

    /// The lowest id made at or after `unix_ms`: a floor that admits every
    /// post from that millisecond on.
    pub fn first_at(unix_ms: u64) -> PostId {
        PostId(unix_ms.saturating_sub(EPOCH_MS).min(MAX_MS) << (NODE_BITS + SEQ_BITS))
    }

    /// The highest id made at or before `unix_ms`.
    fn last_at(unix_ms: u64) -> PostId {
        PostId(
            PostId::first_at(unix_ms.saturating_add(1))
                .0
                .saturating_sub(1),
        )
    }

    /// Refuses an id from elsewhere (an import, a replay, a client's
    /// marker) made later than [`MAX_CLOCK_SKEW_MS`] past `now_ms`: no
    /// writer here issued it, and taken in, it would date posts in the
    /// future or pin a reader's place past every post to come.
    pub fn check_not_ahead(self, what: &str, now_ms: u64) -> Result<()> {
        if self > PostId::last_at(now_ms.saturating_add(MAX_CLOCK_SKEW_MS)) {
            return Err(ahead(
                what,
                &format!("post id {self}"),
                self.unix_ms(),
                now_ms,
            ));
        }
        Ok(())
    }
}

/// How far ahead of this server's clock an id or a time written elsewhere
/// may be (another server's clock runs a little fast): one minute.
pub const MAX_CLOCK_SKEW_MS: u64 = 60_000;
/// The largest millisecond a post id holds (42 bits: the year 2163).
const MAX_MS: u64 = (1 << (64 - NODE_BITS - SEQ_BITS)) - 1;

/// Refuses a time from elsewhere (a follow's, a like's, a revocation's)
/// later than [`MAX_CLOCK_SKEW_MS`] past `now_ms`.
pub fn check_time_not_ahead(what: &str, unix_ms: u64, now_ms: u64) -> Result<()> {
    if unix_ms > now_ms.saturating_add(MAX_CLOCK_SKEW_MS) {
        return Err(ahead(what, &format!("time {unix_ms} ms"), unix_ms, now_ms));
    }
    Ok(())
}

fn ahead(what: &str, value: &str, unix_ms: u64, now_ms: u64) -> Error {
    Error::invalid(
        "time_ahead",
        format!(
            "{what}: {value} is {} s ahead of this server's clock; at most {} s is accepted",
            unix_ms.saturating_sub(now_ms) / 1000,
            MAX_CLOCK_SKEW_MS / 1000
        ),
    )
}

impl fmt::Display for PostId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for PostId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostId({:016x})", self.0)
    }
}

/// Makes strictly increasing post ids for one producer node.
pub struct PostIdGen {
    node: u64,
    /// The last (milliseconds << SEQ_BITS | sequence) handed out. When a
    /// millisecond's sequence overflows it borrows the next millisecond, so ids
    /// stay unique and increasing at any rate.
    last: AtomicU64,
}

impl PostIdGen {
    /// `node` tells producers apart (0..1024); several producers need distinct nodes.
    pub fn new(node: u16) -> PostIdGen {
        PostIdGen {
            node: u64::from(node) & ((1 << NODE_BITS) - 1),
            last: AtomicU64::new(0),
        }
    }

    pub fn next(&self) -> PostId {
        let now = now_ms().saturating_sub(EPOCH_MS) << SEQ_BITS;
        let mut prev = self.last.load(Ordering::Relaxed);
        loop {
            let candidate = now.max(prev + 1);
            match self.last.compare_exchange_weak(
                prev,
                candidate,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return PostId(candidate << NODE_BITS | self.node),
                Err(actual) => prev = actual,
            }
        }
    }

    /// Continue above `id`, e.g. the newest id found in the store at start-up,
    /// so a clock that moved backwards across a restart never repeats ids,
    /// or a post a reply answers, so a reply is newer than its post
    /// whichever producer made that. Never past the clock by more than
    /// [`MAX_CLOCK_SKEW_MS`]: an id beyond that (stored by an older version
    /// that imported it) must not drag every new post into the future, nor
    /// wrap the generator around to ids of 2024. A store refuses a new
    /// post under an id it holds, so ids are never issued twice.
    pub fn advance_past(&self, id: PostId) {
        let cap = PostId::last_at(now_ms().saturating_add(MAX_CLOCK_SKEW_MS));
        self.last
            .fetch_max(id.min(cap).0 >> NODE_BITS, Ordering::Relaxed);
    }
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Opaque paging cursor over user ids: the hex of the last id of the page.
pub fn encode_user_cursor(last: &UserId) -> String {
    encode_user_cursor_text(last.as_str())
}

/// Opaque paging cursor over a time-ordered edge list: the follow time and
/// the other end of the last edge of the page.
pub fn encode_edge_cursor(at_ms: u64, last: &UserId) -> String {
    encode_user_cursor_text(&format!("{at_ms}:{last}"))
}

pub fn decode_edge_cursor(cursor: &str) -> Result<(u64, UserId)> {
    let bad = || Error::invalid("invalid_cursor", "cursor is not one this API issued");
    let text = decode_cursor_text(cursor).ok_or_else(bad)?;
    let (at, id) = text.split_once(':').ok_or_else(bad)?;
    let at = at.parse().map_err(|_| bad())?;
    Ok((at, UserId::parse(id).map_err(|_| bad())?))
}

fn encode_user_cursor_text(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The text of a hex cursor, if it is one.
fn decode_cursor_text(cursor: &str) -> Option<String> {
    if !cursor.len().is_multiple_of(2) || !cursor.is_ascii() {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&cursor[i..i + 2], 16).ok())
        .collect();
    bytes.and_then(|b| String::from_utf8(b).ok())
}

pub fn decode_user_cursor(cursor: &str) -> Result<UserId> {
    let bad = || Error::invalid("invalid_cursor", "cursor is not one this API issued");
    let text = decode_cursor_text(cursor).ok_or_else(bad)?;
    UserId::parse(&text).map_err(|_| bad())
}

/// The part of `shards` that `key` hashes to (FNV-1a): stable across
/// processes and releases, as stored counts need.
pub fn spread(key: &str, shards: u64) -> u64 {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % shards
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_ids_are_validated() {
        assert!(UserId::parse("alice_01.x-y").is_ok());
        assert!(UserId::parse(&"a".repeat(64)).is_ok());
        assert!(UserId::parse("...").is_ok());
        for bad in ["", ".", "..", "a b", "ä", "a/b", &"a".repeat(65)] {
            let e = UserId::parse(bad).unwrap_err();
            assert_eq!(e.code(), "invalid_user_id", "{bad:?}");
        }
    }

    #[test]
    fn list_names_are_validated_and_keys_never_collide() {
        assert!(ListName::parse("work_2-b").is_ok());
        for bad in ["", "a b", "a:b", "a.b", &"l".repeat(33)] {
            assert_eq!(
                ListName::parse(bad).unwrap_err().code(),
                "invalid_list_name"
            );
        }
        let (u, l) = (UserId::parse("a").unwrap(), ListName::parse("b").unwrap());
        assert_eq!(TimelineId::home(&u).as_str(), "a");
        assert_eq!(TimelineId::list(&u, &l).as_str(), "a:b");
        let g = GroupName::parse("a").unwrap();
        assert_eq!(TimelineId::group(&g).as_str(), "+a");
        assert!(TimelineId::home(&u).is_home() && !TimelineId::home(&u).is_group());
        assert!(!TimelineId::list(&u, &l).is_home() && !TimelineId::list(&u, &l).is_group());
        assert!(TimelineId::group(&g).is_group() && !TimelineId::group(&g).is_home());
        assert_eq!(
            GroupName::parse("a.b").unwrap_err().code(),
            "invalid_group_name"
        );
        assert!(
            UserId::parse("a:b").is_err(),
            "no user id looks like a list key"
        );
    }

    #[test]
    fn post_ids_increase_and_round_trip() {
        let g = PostIdGen::new(3);
        let mut prev = g.next();
        for _ in 0..10_000 {
            let id = g.next();
            assert!(id > prev);
            assert_eq!(PostId::parse(&id.to_string()).unwrap(), id);
            prev = id;
        }
        let age = now_ms().abs_diff(prev.unix_ms());
        assert!(age < 60_000, "id time is {age} ms from now");
        assert_eq!(prev.0 & 1023, 3);
    }

    #[test]
    fn post_ids_stay_above_a_restored_maximum() {
        let g = PostIdGen::new(0);
        // A clock a little behind the one that made the newest stored id.
        let future = PostId((now_ms() - EPOCH_MS + MAX_CLOCK_SKEW_MS / 2) << 22);
        g.advance_past(future);
        assert!(g.next() > future);
    }

    #[test]
    fn ids_far_ahead_never_drag_or_wrap_the_generator() {
        for far in [PostId(0x4000_0000_0000_0000), PostId(u64::MAX)] {
            let g = PostIdGen::new(5);
            g.advance_past(far);
            let next = g.next();
            let ahead = next.unix_ms().saturating_sub(now_ms());
            assert!(ahead <= MAX_CLOCK_SKEW_MS + 1, "{far:?} gave {next:?}");
            assert!(
                next > PostId::first_at(now_ms()),
                "{far:?} wrapped to {next:?}"
            );
            assert!(g.next() > next);
        }
    }

    #[test]
    fn ids_and_times_ahead_of_the_clock_are_refused() {
        let now = now_ms();
        let skew = now + MAX_CLOCK_SKEW_MS;
        assert!(PostId::first_at(skew).check_not_ahead("x", now).is_ok());
        assert!(PostId::last_at(skew).check_not_ahead("x", now).is_ok());
        let e = PostId::first_at(skew + 1)
            .check_not_ahead("line 3", now)
            .unwrap_err();
        assert_eq!(e.code(), "time_ahead");
        assert!(
            e.message().starts_with("line 3: post id "),
            "{}",
            e.message()
        );
        assert!(PostId(u64::MAX).check_not_ahead("x", now).is_err());
        assert!(check_time_not_ahead("x", skew, now).is_ok());
        assert!(check_time_not_ahead("x", skew + 1, now).is_err());
        assert!(check_time_not_ahead("x", u64::MAX, now).is_err());
    }

    #[test]
    fn bad_post_ids_and_cursors_are_refused() {
        for bad in ["", "123", "zzzzzzzzzzzzzzzz", "00000000000000001"] {
            assert_eq!(PostId::parse(bad).unwrap_err().code(), "invalid_post_id");
        }
        let u = UserId::parse("bob").unwrap();
        assert_eq!(decode_user_cursor(&encode_user_cursor(&u)).unwrap(), u);
        let c = encode_edge_cursor(1234, &u);
        assert_eq!(decode_edge_cursor(&c).unwrap(), (1234, u.clone()));
        assert_eq!(
            decode_edge_cursor(&encode_user_cursor(&u))
                .unwrap_err()
                .code(),
            "invalid_cursor"
        );
        for bad in ["x", "zz", "2f2f", "ff"] {
            assert_eq!(
                decode_user_cursor(bad).unwrap_err().code(),
                "invalid_cursor"
            );
        }
    }
}
