//! What a post's tally counts, as stored and carried in steps.

/// What a post's tally counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tally {
    Likes,
    Reposts,
    Replies,
}

impl Tally {
    pub const ALL: [Tally; 3] = [Tally::Likes, Tally::Reposts, Tally::Replies];

    /// The code stores key a tally by.
    pub fn code(self) -> u8 {
        match self {
            Tally::Likes => 1,
            Tally::Reposts => 2,
            Tally::Replies => 3,
        }
    }

    pub fn from_code(code: u8) -> Option<Tally> {
        Tally::ALL.into_iter().find(|t| t.code() == code)
    }

    /// Adds `n` to this tally's field of `counts`.
    pub fn add_to(self, counts: &mut crate::model::PostCounts, n: i64) {
        let field = match self {
            Tally::Likes => &mut counts.likes,
            Tally::Reposts => &mut counts.reposts,
            Tally::Replies => &mut counts.replies,
        };
        *field = (*field as i64 + n).max(0) as u64;
    }
}
