//! Which users a post mentions. A mention is `@` followed by a user id, at
//! the start of the message or after a character that cannot be part of an
//! id (so `mail@example.com` mentions nobody); trailing dots end a sentence,
//! not the id. Only users that exist when the post is stored are mentioned:
//! the store keeps the candidates that are users, in the transaction that
//! stores the post. An `@name` that is not a user is plain text.

use crate::error::{Error, Result};
use crate::ids::UserId;

/// Most distinct `@id` candidates one message may hold.
pub const MAX_MENTIONS: usize = 10;

fn id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The distinct user ids a message names with `@`, in order of first
/// appearance; more than [`MAX_MENTIONS`] is `too_many_mentions`.
pub fn candidates(message: &str) -> Result<Vec<UserId>> {
    let bytes = message.as_bytes();
    let mut out: Vec<UserId> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i] == b'@' && (i == 0 || !id_byte(bytes[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < bytes.len() && id_byte(bytes[end]) {
            end += 1;
        }
        i = end;
        // The bytes are ASCII, so the slice is valid UTF-8.
        let name = message[start..end].trim_end_matches('.');
        let Ok(id) = UserId::parse(name) else {
            continue;
        };
        if !out.contains(&id) {
            if out.len() == MAX_MENTIONS {
                return Err(Error::invalid(
                    "too_many_mentions",
                    format!("a message mentions at most {MAX_MENTIONS} users"),
                ));
            }
            out.push(id);
        }
    }
    Ok(out)
}

/// The candidates that are users, as the store's `exists` (asked inside
/// the transaction that stores the post) tells: the post's mentions.
pub fn kept(
    candidates: &[UserId],
    mut exists: impl FnMut(&UserId) -> Result<bool>,
) -> Result<Vec<UserId>> {
    let mut out = Vec::with_capacity(candidates.len());
    for c in candidates {
        if exists(c)? {
            out.push(c.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(m: &str) -> Vec<String> {
        candidates(m)
            .unwrap()
            .iter()
            .map(|u| u.to_string())
            .collect()
    }

    #[test]
    fn mentions_are_ids_after_an_at_sign() {
        assert_eq!(names("@alice hi @bob_2, and @alice."), ["alice", "bob_2"]);
        assert_eq!(names("(@x.y) @a-b!"), ["x.y", "a-b"]);
        assert!(names("mail@example.com @ @. @@").is_empty());
        assert_eq!(names("é@a @é @b"), ["a", "b"]);
        assert_eq!(names(&format!("@{}", "x".repeat(65))), Vec::<String>::new());
    }

    #[test]
    fn at_most_ten_distinct() {
        let ten: String = (0..10).map(|i| format!("@u{i} @u{i} ")).collect();
        assert_eq!(candidates(&ten).unwrap().len(), 10);
        let eleven = format!("{ten} @u10");
        assert_eq!(candidates(&eleven).unwrap_err().code(), "too_many_mentions");
    }
}
