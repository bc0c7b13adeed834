//! A relation one user keeps to another, as stored and carried in steps.

use crate::error::{Error, Result};

/// A relation one user keeps to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relation {
    Mute,
    Block,
    /// The user's priority for the other's posts in their ranked
    /// timelines (`crate::feed::rank`): one level per pair at most.
    Priority(Priority),
    /// A follow option (`crate::graph::options`): kept only while the user
    /// follows the other.
    Option(FollowOption),
}

/// What a follower changes of one account they follow: each is off
/// without its relation, the defaults of a plain follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FollowOption {
    /// Their reposts are not shown (a plain follow shows them).
    HideReposts,
    /// Their replies to accounts the follower does not follow are shown
    /// (the replies rule leaves them out otherwise).
    AllReplies,
    /// A notification when they post or reply.
    Notify,
}

impl FollowOption {
    pub const ALL: [FollowOption; 3] = [
        FollowOption::HideReposts,
        FollowOption::AllReplies,
        FollowOption::Notify,
    ];

    /// The changes an API request asks for, each `None` to keep it: show
    /// the account's reposts, show all their replies, notify.
    pub fn changes(
        reposts: Option<bool>,
        replies: Option<bool>,
        notify: Option<bool>,
    ) -> Vec<(FollowOption, bool)> {
        [
            (FollowOption::HideReposts, reposts.map(|show| !show)),
            (FollowOption::AllReplies, replies),
            (FollowOption::Notify, notify),
        ]
        .into_iter()
        .filter_map(|(o, on)| on.map(|on| (o, on)))
        .collect()
    }

    /// Its name in the export format and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            FollowOption::HideReposts => "hide_reposts",
            FollowOption::AllReplies => "all_replies",
            FollowOption::Notify => "notify",
        }
    }

    pub fn parse(name: &str) -> Result<FollowOption> {
        FollowOption::ALL
            .into_iter()
            .find(|o| o.as_str() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "invalid_follow_option",
                    format!("`{name}` is not one of hide_reposts, all_replies, notify"),
                )
            })
    }
}

/// A priority a reader gives an account: -2, -1, 1 or 2 (none is no
/// relation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Priority(i8);

/// Lowest and highest priority.
pub const MIN_PRIORITY: i8 = -2;
pub const MAX_PRIORITY: i8 = 2;

impl Priority {
    /// Every level a priority may have.
    pub const ALL: [Priority; 4] = [Priority(-2), Priority(-1), Priority(1), Priority(2)];

    /// The priority `level` sets: `None` for 0 (no priority), refused
    /// outside -2..=2 (`invalid_priority`).
    pub fn new(level: i64) -> Result<Option<Priority>> {
        match level {
            0 => Ok(None),
            l if (i64::from(MIN_PRIORITY)..=i64::from(MAX_PRIORITY)).contains(&l) => {
                Ok(Some(Priority(l as i8)))
            }
            _ => Err(Error::invalid(
                "invalid_priority",
                format!(
                    "a priority is from {MIN_PRIORITY} to {MAX_PRIORITY} (0: none), not {level}"
                ),
            )),
        }
    }

    pub fn level(self) -> i8 {
        self.0
    }
}

impl Relation {
    /// The stored code of the relation.
    pub fn code(self) -> u8 {
        match self {
            Relation::Mute => 1,
            Relation::Block => 2,
            // 10, 11, 13, 14 for -2, -1, 1, 2.
            Relation::Priority(p) => (12 + p.0) as u8,
            Relation::Option(FollowOption::HideReposts) => 20,
            Relation::Option(FollowOption::AllReplies) => 21,
            Relation::Option(FollowOption::Notify) => 22,
        }
    }

    pub fn from_code(code: u8) -> Option<Relation> {
        match code {
            1 => Some(Relation::Mute),
            2 => Some(Relation::Block),
            10 | 11 | 13 | 14 => Some(Relation::Priority(Priority(code as i8 - 12))),
            20 => Some(Relation::Option(FollowOption::HideReposts)),
            21 => Some(Relation::Option(FollowOption::AllReplies)),
            22 => Some(Relation::Option(FollowOption::Notify)),
            _ => None,
        }
    }

    /// The verb: `mute`, `block`, `prioritize` or `set options for`.
    pub fn verb(self) -> &'static str {
        match self {
            Relation::Mute => "mute",
            Relation::Block => "block",
            Relation::Priority(_) => "prioritize",
            Relation::Option(_) => "set options for",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_relation_has_a_code_of_its_own() {
        let all = [Relation::Mute, Relation::Block]
            .into_iter()
            .chain(Priority::ALL.map(Relation::Priority))
            .chain(FollowOption::ALL.map(Relation::Option));
        let mut codes = Vec::new();
        for r in all {
            assert_eq!(Relation::from_code(r.code()), Some(r));
            codes.push(r.code());
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 9);
        assert_eq!(Relation::from_code(12), None, "no priority is no relation");
        assert_eq!(Priority::new(0).unwrap(), None);
        assert_eq!(Priority::new(-2).unwrap().unwrap().level(), -2);
        assert_eq!(Priority::new(3).unwrap_err().code(), "invalid_priority");
    }
}
