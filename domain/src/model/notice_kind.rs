//! What a notice tells, as stored and carried on the log.

/// What a notice tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NoticeKind {
    Follow,
    Mention,
    Reply,
    Repost,
    Like,
}

impl NoticeKind {
    pub const ALL: [NoticeKind; 5] = [
        NoticeKind::Follow,
        NoticeKind::Mention,
        NoticeKind::Reply,
        NoticeKind::Repost,
        NoticeKind::Like,
    ];

    /// The stored code.
    pub fn code(self) -> u8 {
        match self {
            NoticeKind::Follow => 1,
            NoticeKind::Mention => 2,
            NoticeKind::Reply => 3,
            NoticeKind::Repost => 4,
            NoticeKind::Like => 5,
        }
    }

    pub fn from_code(code: u8) -> Option<NoticeKind> {
        NoticeKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The name the API shows.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Follow => "follow",
            NoticeKind::Mention => "mention",
            NoticeKind::Reply => "reply",
            NoticeKind::Repost => "repost",
            NoticeKind::Like => "like",
        }
    }
}
