//! A user's collection of posts: posts a user keeps, each once, newest
//! kept first, private to them. Bookmarks are one; a feature that keeps
//! posts for a user names a collection of its own and needs nothing of a
//! backend, the log or the export format: stores keep every collection
//! alike, a post's deletion removes it from all of them, a user's deletion
//! removes theirs, and export, import and replay carry them.

use crate::error::{Error, Result};
use crate::ids::PostId;
use std::borrow::Cow;
use std::fmt;

/// Longest collection name.
pub const MAX_COLLECTION_NAME: usize = 32;

/// A collection's name: 1 to [`MAX_COLLECTION_NAME`] lowercase ASCII
/// letters or `_`, as stored, exported and carried on the log.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Collection(Cow<'static, str>);

impl Collection {
    /// A collection a feature names in its code (checked by its tests).
    pub const fn named(name: &'static str) -> Collection {
        Collection(Cow::Borrowed(name))
    }

    /// A collection named in a record or an event.
    pub fn parse(name: &str) -> Result<Collection> {
        let ok = !name.is_empty()
            && name.len() <= MAX_COLLECTION_NAME
            && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        if !ok {
            return Err(Error::invalid(
                "invalid_collection",
                format!(
                    "a collection is named by 1 to {MAX_COLLECTION_NAME} lowercase letters or _"
                ),
            ));
        }
        Ok(Collection(Cow::Owned(name.to_owned())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Collection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A post in a collection, and when it was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    pub post: PostId,
    pub at_ms: u64,
}

/// Where a page of a collection starts: after this entry, in the
/// collection's order (newest kept first; a post id tells apart entries of
/// one millisecond).
pub fn kept_before(entry: &Kept) -> (u64, PostId) {
    (entry.at_ms, entry.post)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_lowercase_words() {
        assert!(Collection::parse("bookmarks").is_ok());
        assert!(Collection::parse("read_later").is_ok());
        for bad in ["", "Bookmarks", "book marks", "b-1", &"x".repeat(33)] {
            assert_eq!(
                Collection::parse(bad).unwrap_err().code(),
                "invalid_collection"
            );
        }
    }
}
