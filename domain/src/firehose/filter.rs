//! What a firehose reader asks for: kinds of acts and the accounts that
//! made them, each all when not named. Capped, so a connection's memory is
//! bounded: [`MAX_AUTHORS`] accounts.

use super::{Kind, PublicAct};
use crate::error::{Error, Result};
use crate::ids::UserId;
use std::collections::HashSet;

/// Most accounts one filter names.
pub const MAX_AUTHORS: usize = 10_000;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// `None`: every kind.
    kinds: Option<HashSet<Kind>>,
    /// `None`: every account.
    authors: Option<HashSet<UserId>>,
}

impl Filter {
    /// A filter of these kind names and account ids (none named: all):
    /// 400 `invalid_kind` for a kind that is not one, `too_many_authors`
    /// past [`MAX_AUTHORS`], `invalid_user_id` for a malformed id.
    pub fn new<'a>(
        kinds: impl IntoIterator<Item = &'a str>,
        authors: impl IntoIterator<Item = &'a str>,
    ) -> Result<Filter> {
        let kinds = kinds
            .into_iter()
            .map(|k| {
                Kind::parse(k).ok_or_else(|| {
                    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
                    Error::invalid(
                        "invalid_kind",
                        format!("unknown kind {k:?}; kinds are {}", names.join(", ")),
                    )
                })
            })
            .collect::<Result<HashSet<Kind>>>()?;
        let mut named = HashSet::new();
        for a in authors {
            if named.len() == MAX_AUTHORS {
                return Err(Error::invalid(
                    "too_many_authors",
                    format!("a firehose filter names at most {MAX_AUTHORS} accounts"),
                ));
            }
            named.insert(UserId::parse(a)?);
        }
        Ok(Filter {
            kinds: (!kinds.is_empty()).then_some(kinds),
            authors: (!named.is_empty()).then_some(named),
        })
    }

    pub fn admits(&self, act: &PublicAct) -> bool {
        self.kinds.as_ref().is_none_or(|k| k.contains(&act.kind()))
            && self
                .authors
                .as_ref()
                .is_none_or(|a| a.contains(act.actor()))
    }
}
