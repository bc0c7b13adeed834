//! A reader's keyword filters, as stored, exported and carried on the log
//! (what they hide or warn of, and the limits of a change, are
//! [`crate::filters`]).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Where a filter applies: a set of [`FilterContext`]s, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Contexts(u8);

/// The places a reader meets posts, each of which a filter may cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FilterContext {
    Home,
    Lists,
    Groups,
    Mentions,
    Notifications,
    Threads,
    Profiles,
}

impl FilterContext {
    pub const ALL: [FilterContext; 7] = [
        FilterContext::Home,
        FilterContext::Lists,
        FilterContext::Groups,
        FilterContext::Mentions,
        FilterContext::Notifications,
        FilterContext::Threads,
        FilterContext::Profiles,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FilterContext::Home => "home",
            FilterContext::Lists => "lists",
            FilterContext::Groups => "groups",
            FilterContext::Mentions => "mentions",
            FilterContext::Notifications => "notifications",
            FilterContext::Threads => "threads",
            FilterContext::Profiles => "profiles",
        }
    }

    pub fn parse(name: &str) -> Result<FilterContext> {
        FilterContext::ALL
            .into_iter()
            .find(|c| c.as_str() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "invalid_filter_context",
                    format!(
                        "a filter's contexts are home, lists, groups, mentions, notifications, threads and profiles; `{name}` is none"
                    ),
                )
            })
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl Contexts {
    pub fn of(contexts: impl IntoIterator<Item = FilterContext>) -> Contexts {
        Contexts(contexts.into_iter().fold(0, |bits, c| bits | c.bit()))
    }

    pub fn has(self, context: FilterContext) -> bool {
        self.0 & context.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The contexts, in [`FilterContext::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = FilterContext> {
        FilterContext::ALL.into_iter().filter(move |c| self.has(*c))
    }

    /// The set a stored or carried value names (bits no context has are
    /// dropped: a record written by hand cannot name a context that is not).
    pub fn from_bits(bits: u8) -> Contexts {
        Contexts(bits & Contexts::of(FilterContext::ALL).0)
    }

    pub fn bits(self) -> u8 {
        self.0
    }
}

/// What a filter does to a post it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterAction {
    /// Left out of the page, as a muted author's post is.
    Hide,
    /// Kept, with the filter and phrase that matched, for the client to
    /// show collapsed.
    Warn,
}

impl FilterAction {
    pub fn as_str(self) -> &'static str {
        match self {
            FilterAction::Hide => "hide",
            FilterAction::Warn => "warn",
        }
    }

    pub fn parse(name: &str) -> Result<FilterAction> {
        match name {
            "hide" => Ok(FilterAction::Hide),
            "warn" => Ok(FilterAction::Warn),
            other => Err(Error::invalid(
                "invalid_filter_action",
                format!("a filter's action is `hide` or `warn`; `{other}` is neither"),
            )),
        }
    }
}

/// A phrase a filter looks for, case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phrase {
    pub text: String,
    /// Matches only as a whole word: not inside a longer word.
    pub whole_word: bool,
}

/// One of a reader's filters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// The filter's number among its owner's, never reused by them.
    pub id: u64,
    pub title: String,
    pub phrases: Vec<Phrase>,
    pub contexts: Contexts,
    pub action: FilterAction,
    /// When it stops applying (it is kept, and listed, until deleted).
    pub expires_at_ms: Option<u64>,
}

impl Filter {
    /// Whether it applies at `now_ms` in `context`.
    pub fn applies(&self, context: FilterContext, now_ms: u64) -> bool {
        self.contexts.has(context) && self.expires_at_ms.is_none_or(|at| now_ms < at)
    }
}

/// A reader's filters as stored: one record per reader.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FilterSet {
    /// Moves on every change, and never back, not even across a deletion of
    /// the reader and a new account under the id: a cache of the set's
    /// matcher is current while its revision is.
    pub rev: u64,
    /// The id the next new filter takes.
    pub next_id: u64,
    /// In id order.
    pub filters: Vec<Filter>,
}

impl FilterSet {
    pub fn get(&self, id: u64) -> Option<&Filter> {
        self.filters.iter().find(|f| f.id == id)
    }

    /// The set as stored: its JSON after the revision's 8 bytes
    /// (big-endian), so a reader of the record learns the revision without
    /// decoding the rest.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.rev.to_be_bytes().to_vec();
        // A set of plain strings, numbers and enums always serializes.
        out.extend(serde_json::to_vec(self).unwrap_or_default());
        out
    }

    /// The revision of a stored set, without decoding it.
    pub fn rev_of(bytes: &[u8]) -> Option<u64> {
        Some(u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<FilterSet> {
        let json = bytes.get(8..).unwrap_or_default();
        serde_json::from_slice(json).map_err(|e| {
            Error::new(
                crate::ErrorKind::Internal,
                "internal",
                format!("a stored filter set does not decode: {e}"),
            )
        })
    }
}

/// What a warning filter says of an entry it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterHit {
    pub filter: u64,
    pub title: String,
    /// The phrase, as the filter holds it.
    pub phrase: String,
}
