//! A stored timeline entry as the layouts hold it.

use socialite_core::ids::PostId;

/// A stored entry: the post and its author's interned number (see
/// [`crate::authors`]). Packed to 12 bytes (aligned, it would be 16) where
/// buckets hold it; a capped cache packs its slots further (see
/// [`crate::packed`]). Read its fields by value (`{s.post}`); references
/// into a packed struct are not allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct Slot {
    pub post: PostId,
    pub author: u32,
}
