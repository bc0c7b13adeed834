//! Keyword filters: a reader's phrases that hide posts, or warn of them,
//! where the reader chose ([`FilterContext`]), until they expire. Decided
//! here once: what a change may hold ([`FilterChange::apply`]), how a
//! phrase matches a post ([`matcher`]) and how a change is written
//! ([`plan`]). Applied when a page is read, so a change holds at once for
//! every page, cached entries included, and fanout never learns of it.
//!
//! A filter never applies to the reader's own posts.

pub mod matcher;
pub mod plan;

use crate::error::{Error, Result};
use crate::ids::UserId;
use crate::model::filter::{Contexts, Filter, FilterAction, FilterContext, Phrase};
use crate::model::{FeedItem, Post};
use matcher::{Matcher, Verdict, View};
use std::sync::Arc;

/// A reader's filters as one read applies them: those of its context,
/// at the time of the read, to posts of others than the reader.
#[derive(Clone)]
pub struct Sift {
    view: View,
    reader: UserId,
}

impl std::fmt::Debug for Sift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sift({})", self.reader)
    }
}

impl Sift {
    /// `None` when none of the reader's filters applies in `context` now.
    pub fn new(
        matcher: &Arc<Matcher>,
        context: FilterContext,
        reader: &UserId,
        now_ms: u64,
    ) -> Option<Sift> {
        Some(Sift {
            view: matcher.view(context, now_ms)?,
            reader: reader.clone(),
        })
    }

    pub fn verdict(&self, post: &Post) -> Verdict {
        match post.author == self.reader {
            true => Verdict::Show,
            false => self.view.verdict(&post.message),
        }
    }

    /// Leaves out the entries a hiding filter matches and marks those a
    /// warning one does (an entry shows its post: a repost's is the
    /// original).
    pub fn apply(&self, items: &mut Vec<FeedItem>) {
        items.retain_mut(|item| match self.verdict(&item.post) {
            Verdict::Show => true,
            Verdict::Hide => false,
            Verdict::Warn(hits) => {
                item.filtered = hits;
                true
            }
        });
    }
}

/// Most filters a reader keeps.
pub const MAX_FILTERS: usize = 100;
/// Most phrases one filter holds.
pub const MAX_PHRASES: usize = 20;
/// Longest phrase, in characters.
pub const MAX_PHRASE_CHARS: usize = 64;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 100;
/// Longest `expires_in`: a year, in seconds.
pub const MAX_EXPIRES_IN_S: u64 = 366 * 24 * 3600;

/// A filter's fields as a request names them; `None` keeps the filter's
/// own (a new filter: the defaults of [`FilterChange::apply`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilterChange {
    pub title: Option<String>,
    pub phrases: Option<Vec<Phrase>>,
    pub contexts: Option<Vec<FilterContext>>,
    pub action: Option<FilterAction>,
    /// `Some(None)`: never expires; `Some(Some(s))`: expires `s` seconds
    /// after the change.
    pub expires_in_s: Option<Option<u64>>,
}

impl FilterChange {
    /// `was` (the filter `id` when it is new: no title, phrase or
    /// expiry, every context, action `warn`) as changed at `now_ms`, or
    /// the first limit it breaks.
    pub fn apply(&self, id: u64, was: Option<&Filter>, now_ms: u64) -> Result<Filter> {
        let phrases = match (&self.phrases, was) {
            (Some(p), _) => phrases(p)?,
            (None, Some(f)) => f.phrases.clone(),
            (None, None) => return Err(no_phrases()),
        };
        let title = match (&self.title, was) {
            (Some(t), _) => title(t)?,
            (None, Some(f)) => f.title.clone(),
            (None, None) => phrases[0].text.clone(),
        };
        let contexts = match (&self.contexts, was) {
            (Some(c), _) => contexts(c)?,
            (None, Some(f)) => f.contexts,
            (None, None) => Contexts::of(FilterContext::ALL),
        };
        let expires_at_ms = match (self.expires_in_s, was) {
            (Some(Some(s)), _) => Some(now_ms + expires_in(s)? * 1000),
            (Some(None), _) | (None, None) => None,
            (None, Some(f)) => f.expires_at_ms,
        };
        Ok(Filter {
            id,
            title,
            phrases,
            contexts,
            action: self
                .action
                .or(was.map(|f| f.action))
                .unwrap_or(FilterAction::Warn),
            expires_at_ms,
        })
    }
}

/// A filter as an event or an export names it (maybe written by hand),
/// held to the limits a request is: the filter as a request would have
/// made it, or the first limit it breaks.
pub fn restorable(filter: &Filter) -> Result<Filter> {
    let change = FilterChange {
        title: Some(filter.title.clone()),
        phrases: Some(filter.phrases.clone()),
        contexts: Some(filter.contexts.iter().collect()),
        action: Some(filter.action),
        expires_in_s: Some(None),
    };
    if filter.id == 0 || filter.id == u64::MAX {
        return Err(Error::invalid(
            "invalid_filter_id",
            format!("a filter id is 1 to {}", u64::MAX - 1),
        ));
    }
    let made = change.apply(filter.id, None, 0)?;
    Ok(Filter {
        expires_at_ms: filter.expires_at_ms,
        ..made
    })
}

fn no_phrases() -> Error {
    Error::invalid(
        "invalid_filter_phrases",
        format!("a filter holds 1 to {MAX_PHRASES} phrases"),
    )
}

/// The phrases, trimmed, each once (whole-word or not, case aside).
fn phrases(given: &[Phrase]) -> Result<Vec<Phrase>> {
    // Counted before anything is read of them: a body of thousands of
    // phrases costs nothing past the count.
    if given.is_empty() || given.len() > MAX_PHRASES {
        return Err(no_phrases());
    }
    let mut out: Vec<Phrase> = Vec::with_capacity(given.len());
    for p in given {
        let text = p.text.trim();
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_PHRASE_CHARS || text.chars().any(char::is_control) {
            return Err(Error::invalid(
                "invalid_filter_phrase",
                format!("a phrase is 1 to {MAX_PHRASE_CHARS} characters, none of them a control character"),
            ));
        }
        let same = |o: &Phrase| {
            o.whole_word == p.whole_word && o.text.to_lowercase() == text.to_lowercase()
        };
        if !out.iter().any(same) {
            out.push(Phrase {
                text: text.to_owned(),
                whole_word: p.whole_word,
            });
        }
    }
    if out.is_empty() || out.len() > MAX_PHRASES {
        return Err(no_phrases());
    }
    Ok(out)
}

fn title(given: &str) -> Result<String> {
    let title = given.trim();
    let chars = title.chars().count();
    if chars == 0 || chars > MAX_TITLE_CHARS || title.chars().any(char::is_control) {
        return Err(Error::invalid(
            "invalid_filter_title",
            format!("a filter's title is 1 to {MAX_TITLE_CHARS} characters, none of them a control character"),
        ));
    }
    Ok(title.to_owned())
}

fn contexts(given: &[FilterContext]) -> Result<Contexts> {
    let contexts = Contexts::of(given.iter().copied());
    if contexts.is_empty() {
        return Err(Error::invalid(
            "invalid_filter_context",
            "a filter applies in at least one context",
        ));
    }
    Ok(contexts)
}

fn expires_in(s: u64) -> Result<u64> {
    if s == 0 || s > MAX_EXPIRES_IN_S {
        return Err(Error::invalid(
            "invalid_expires_in",
            format!("`expires_in` is 1 to {MAX_EXPIRES_IN_S} seconds, or null for never"),
        ));
    }
    Ok(s)
}

/// The refusal of a filter the reader does not have.
pub fn filter_not_found(id: u64) -> Error {
    Error::not_found("filter_not_found", format!("no filter {id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrase(t: &str) -> Phrase {
        Phrase {
            text: t.into(),
            whole_word: true,
        }
    }

    #[test]
    fn a_new_filter_takes_the_defaults_and_a_change_keeps_the_rest() {
        let new = FilterChange {
            phrases: Some(vec![phrase(" Spoiler "), phrase("spoiler")]),
            ..FilterChange::default()
        };
        let f = new.apply(7, None, 1_000).unwrap();
        assert_eq!((f.id, f.title.as_str()), (7, "Spoiler"));
        assert_eq!(f.phrases, vec![phrase("Spoiler")]);
        assert_eq!(f.action, FilterAction::Warn);
        assert!(FilterContext::ALL.iter().all(|c| f.contexts.has(*c)));
        let change = FilterChange {
            action: Some(FilterAction::Hide),
            expires_in_s: Some(Some(60)),
            ..FilterChange::default()
        };
        let g = change.apply(7, Some(&f), 5_000).unwrap();
        assert_eq!(
            (g.action, g.expires_at_ms),
            (FilterAction::Hide, Some(65_000))
        );
        assert_eq!(g.phrases, f.phrases);
    }

    #[test]
    fn limits_refuse_with_a_code_each() {
        let code = |c: FilterChange| c.apply(1, None, 0).unwrap_err().code();
        assert_eq!(code(FilterChange::default()), "invalid_filter_phrases");
        let long = FilterChange {
            phrases: Some(vec![phrase(&"x".repeat(MAX_PHRASE_CHARS + 1))]),
            ..FilterChange::default()
        };
        assert_eq!(code(long), "invalid_filter_phrase");
        let many = FilterChange {
            phrases: Some((0..=MAX_PHRASES).map(|i| phrase(&i.to_string())).collect()),
            ..FilterChange::default()
        };
        assert_eq!(code(many), "invalid_filter_phrases");
        let nowhere = FilterChange {
            phrases: Some(vec![phrase("a")]),
            contexts: Some(vec![]),
            ..FilterChange::default()
        };
        assert_eq!(code(nowhere), "invalid_filter_context");
        let never = FilterChange {
            phrases: Some(vec![phrase("a")]),
            expires_in_s: Some(Some(0)),
            ..FilterChange::default()
        };
        assert_eq!(code(never), "invalid_expires_in");
    }

    #[test]
    fn a_restored_filter_keeps_to_the_limits_and_to_ids_a_request_could_name() {
        let made = FilterChange {
            phrases: Some(vec![phrase("a")]),
            ..FilterChange::default()
        };
        let f = made.apply(3, None, 0).unwrap();
        assert_eq!(restorable(&f).unwrap(), f);
        for id in [0, u64::MAX] {
            let bad = Filter { id, ..f.clone() };
            assert_eq!(restorable(&bad).unwrap_err().code(), "invalid_filter_id");
        }
        let long = Filter {
            phrases: vec![phrase("b"); MAX_PHRASES + 1],
            ..f
        };
        assert_eq!(
            restorable(&long).unwrap_err().code(),
            "invalid_filter_phrases"
        );
    }
}
