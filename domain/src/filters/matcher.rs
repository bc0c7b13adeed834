//! How a reader's phrases match a post: case-insensitively and whatever
//! the Unicode form (compatibility normalisation, NFKC, then lower case, a
//! character at a time, on both sides: `café` typed with its accent
//! composed matches it written with a combining accent, and full-width
//! `ｓｐｏｉｌｅｒ` matches `spoiler`), a whole-word phrase
//! only where the characters either side of it are not letters, digits,
//! `_` or combining marks (checked on
//! a side only when the phrase's own character there is one, so `#tag`
//! matches in `x #tag`). Every phrase of every filter is one automaton
//! (Aho-Corasick), so a post is read once however many phrases there are;
//! its overlapping matches are all seen, so a whole-word phrase that fails
//! its bounds at one place never hides another phrase's match.

use crate::model::filter::{Filter, FilterAction, FilterContext, FilterHit, FilterSet};
use aho_corasick::AhoCorasick;
use std::collections::HashMap;
use std::sync::Arc;
use unicode_normalization::UnicodeNormalization;

/// A reader's filters made ready to match: built once per revision of
/// their set (a cache of them is the core crate's).
pub struct Matcher {
    filters: Vec<Filter>,
    /// None when there is no phrase (or the automaton could not be built,
    /// which the limits rule out).
    automaton: Option<AhoCorasick>,
    /// Per pattern of the automaton: the (filter, phrase) indexes that
    /// hold it (phrases equal once lower-cased share a pattern).
    owners: Vec<Owners>,
}

/// The phrases one pattern stands for, whole-word or not: an occurrence
/// decides all of a kind at once, so a pattern is dealt with at most twice
/// per post however often it occurs (phrases built to overlap everywhere
/// cost one step per occurrence, not one per phrase).
#[derive(Default)]
struct Owners {
    anywhere: Vec<(usize, usize)>,
    whole: Vec<(usize, usize)>,
}

/// What the filters do to a post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Show,
    /// Shown, with each warning filter that matched (in id order).
    Warn(Vec<FilterHit>),
    Hide,
}

/// The filters that apply in one context at one time: what a page's
/// posts are matched with.
#[derive(Clone)]
pub struct View {
    matcher: Arc<Matcher>,
    applies: Vec<bool>,
}

/// NFKC, then lower case, one character at a time (a whole string's
/// lower case writes a Greek capital sigma as final `ς` at a word's end
/// and `σ` elsewhere, so `ΟΣ` would not match inside `ΟΣΑ`): both sigmas
/// are `σ`. ASCII is its own NFKC.
fn lower(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.nfkc() {
        match c {
            'Σ' | 'ς' => out.push('σ'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// A character a word is made of: a letter, a digit, `_`, or a combining
/// mark (an accent written after its letter belongs to the word: `cafe`
/// is not a whole word of `café` written so).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || combining(c)
}

fn combining(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

impl Matcher {
    pub fn new(set: &FilterSet) -> Matcher {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut owners: Vec<Owners> = Vec::new();
        for (fi, f) in set.filters.iter().enumerate() {
            for (pi, p) in f.phrases.iter().enumerate() {
                let pattern = lower(&p.text);
                let at = *index.entry(pattern.clone()).or_insert_with(|| {
                    patterns.push(pattern);
                    owners.push(Owners::default());
                    owners.len() - 1
                });
                match p.whole_word {
                    true => owners[at].whole.push((fi, pi)),
                    false => owners[at].anywhere.push((fi, pi)),
                }
            }
        }
        let automaton = match patterns.is_empty() {
            true => None,
            false => AhoCorasick::new(&patterns).ok(),
        };
        Matcher {
            filters: set.filters.clone(),
            automaton,
            owners,
        }
    }

    /// About how many bytes of memory it holds.
    pub fn memory_usage(&self) -> usize {
        let automaton = self.automaton.as_ref().map_or(0, AhoCorasick::memory_usage);
        let phrases: usize = self
            .filters
            .iter()
            .flat_map(|f| &f.phrases)
            .map(|p| p.text.len() + 32)
            .sum();
        automaton + phrases + self.owners.len() * 48
    }

    /// The filters that apply in `context` at `now_ms`; `None` when none
    /// does (a page then costs nothing more).
    pub fn view(self: &Arc<Self>, context: FilterContext, now_ms: u64) -> Option<View> {
        let applies: Vec<bool> = self
            .filters
            .iter()
            .map(|f| f.applies(context, now_ms))
            .collect();
        (self.automaton.is_some() && applies.contains(&true)).then_some(View {
            matcher: self.clone(),
            applies,
        })
    }
}

impl View {
    /// What the filters do to a post whose text is `text`.
    pub fn verdict(&self, text: &str) -> Verdict {
        let m = &*self.matcher;
        let Some(automaton) = &m.automaton else {
            return Verdict::Show;
        };
        let text = lower(text);
        let mut found = Found {
            warned: vec![false; m.filters.len()],
            hits: Vec::new(),
        };
        // Per pattern: its phrases found anywhere (1), as whole words (2).
        let mut dealt = vec![0u8; m.owners.len()];
        for at in automaton.find_overlapping_iter(&text) {
            let p = at.pattern().as_usize();
            if dealt[p] & 1 == 0 {
                dealt[p] |= 1;
                if self.found(&m.owners[p].anywhere, &mut found) {
                    return Verdict::Hide;
                }
            }
            if dealt[p] & 2 == 0 && whole_word(&text, at.start(), at.end()) {
                dealt[p] |= 2;
                if self.found(&m.owners[p].whole, &mut found) {
                    return Verdict::Hide;
                }
            }
        }
        let mut hits = found.hits;
        match hits.is_empty() {
            true => Verdict::Show,
            false => {
                hits.sort_by_key(|h| h.filter);
                Verdict::Warn(hits)
            }
        }
    }
}

/// What a post's matches decided so far.
struct Found {
    warned: Vec<bool>,
    hits: Vec<FilterHit>,
}

impl View {
    /// Notes that `phrases` occur in the post; whether one of them hides it.
    fn found(&self, phrases: &[(usize, usize)], found: &mut Found) -> bool {
        for &(fi, pi) in phrases {
            if !self.applies[fi] || found.warned[fi] {
                continue;
            }
            let filter = &self.matcher.filters[fi];
            if filter.action == FilterAction::Hide {
                return true;
            }
            found.warned[fi] = true;
            found.hits.push(FilterHit {
                filter: filter.id,
                title: filter.title.clone(),
                phrase: filter.phrases[pi].text.clone(),
            });
        }
        false
    }
}

/// Whether `text[start..end]` stands as a word where its own edge is a
/// word character.
fn whole_word(text: &str, start: usize, end: usize) -> bool {
    let found = &text[start..end];
    let edge_ok = |edge: Option<char>, beside: Option<char>| {
        !edge.is_some_and(word_char) || !beside.is_some_and(word_char)
    };
    edge_ok(found.chars().next(), text[..start].chars().next_back())
        && edge_ok(found.chars().next_back(), text[end..].chars().next())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::filter::{Contexts, Phrase};

    fn filter(id: u64, action: FilterAction, phrases: &[(&str, bool)]) -> Filter {
        Filter {
            id,
            title: format!("f{id}"),
            phrases: phrases
                .iter()
                .map(|(t, w)| Phrase {
                    text: t.to_string(),
                    whole_word: *w,
                })
                .collect(),
            contexts: Contexts::of([FilterContext::Home]),
            action,
            expires_at_ms: Some(100),
        }
    }

    fn verdict(filters: Vec<Filter>, text: &str) -> Verdict {
        let set = FilterSet {
            filters,
            ..FilterSet::default()
        };
        let m = Arc::new(Matcher::new(&set));
        let view = m.view(FilterContext::Home, 50).unwrap();
        view.verdict(text)
    }

    #[test]
    fn whole_words_case_and_unicode() {
        let warn = |p: &str, w: bool| vec![filter(1, FilterAction::Warn, &[(p, w)])];
        let hit = |p: &str| FilterHit {
            filter: 1,
            title: "f1".into(),
            phrase: p.into(),
        };
        assert_eq!(
            verdict(warn("cat", true), "a CAT!"),
            Verdict::Warn(vec![hit("cat")])
        );
        assert_eq!(verdict(warn("cat", true), "concatenate"), Verdict::Show);
        assert_eq!(
            verdict(warn("cat", false), "concatenate"),
            Verdict::Warn(vec![hit("cat")])
        );
        assert_eq!(
            verdict(warn("Straße", true), "STRASSE straße."),
            Verdict::Warn(vec![hit("Straße")])
        );
        assert_eq!(
            verdict(warn("ÉTÉ", true), "l'été"),
            Verdict::Warn(vec![hit("ÉTÉ")])
        );
        assert_eq!(verdict(warn("été", true), "étés"), Verdict::Show);
        assert_eq!(
            verdict(warn("#tag", true), "x #tag y"),
            Verdict::Warn(vec![hit("#tag")])
        );
        assert_eq!(
            verdict(warn("ΟΣ", false), "ΟΣΑ"),
            Verdict::Warn(vec![hit("ΟΣ")])
        );
        assert_eq!(
            verdict(warn("οσ", true), "ΟΣ."),
            Verdict::Warn(vec![hit("οσ")])
        );
        assert_eq!(
            verdict(warn("cafe", true), "cafe\u{301} au lait"),
            Verdict::Show
        );
        // One word in any Unicode form: composed or not, full-width.
        assert_eq!(
            verdict(warn("café", true), "cafe\u{301} au lait"),
            Verdict::Warn(vec![hit("café")])
        );
        assert_eq!(
            verdict(warn("cafe\u{301}", true), "un café"),
            Verdict::Warn(vec![hit("cafe\u{301}")])
        );
        assert_eq!(
            verdict(warn("spoiler", true), "ＳＰＯＩＬＥＲ!"),
            Verdict::Warn(vec![hit("spoiler")])
        );
        // A failed whole word at one place, a match at the next.
        assert_eq!(
            verdict(warn("cat", true), "cats and a cat"),
            Verdict::Warn(vec![hit("cat")])
        );
    }

    #[test]
    fn hide_wins_warnings_are_listed_once_each() {
        let both = vec![
            filter(2, FilterAction::Warn, &[("rain", true), ("storm", true)]),
            filter(1, FilterAction::Warn, &[("storm", false)]),
        ];
        let Verdict::Warn(hits) = verdict(both, "rain, storm, storm") else {
            panic!("warned")
        };
        let ids: Vec<u64> = hits.iter().map(|h| h.filter).collect();
        assert_eq!(ids, vec![1, 2]);
        let hide = vec![
            filter(1, FilterAction::Warn, &[("storm", false)]),
            filter(2, FilterAction::Hide, &[("storm", true)]),
        ];
        assert_eq!(verdict(hide, "a storm"), Verdict::Hide);
    }

    #[test]
    fn phrases_built_to_overlap_everywhere_are_decided_once_each() {
        // 100 filters of 20 phrases, `a` to `aaaa...` (64), whole-word
        // (never a word inside `aaaa...`) but one, against a post of 4,096 `a`s.
        let filters: Vec<Filter> = (0..100)
            .map(|i| {
                let phrases: Vec<(String, bool)> = (0..20)
                    .map(|p| ("a".repeat(1 + (i * 20 + p) % 64), true))
                    .collect();
                let phrases: Vec<(&str, bool)> =
                    phrases.iter().map(|(t, w)| (t.as_str(), *w)).collect();
                filter(i as u64 + 1, FilterAction::Warn, &phrases)
            })
            .collect();
        let text = "a".repeat(4096);
        assert_eq!(verdict(filters.clone(), &text), Verdict::Show);
        let mut last = filters;
        last[99].phrases[0].whole_word = false;
        let Verdict::Warn(hits) = verdict(last, &text) else {
            panic!("the one phrase found anywhere warns")
        };
        assert_eq!(hits.len(), 1);
    }

    #[test]
    fn only_filters_of_the_context_and_not_expired_apply() {
        let set = FilterSet {
            filters: vec![filter(1, FilterAction::Hide, &[("x", false)])],
            ..FilterSet::default()
        };
        let m = Arc::new(Matcher::new(&set));
        assert!(m.view(FilterContext::Home, 99).is_some());
        assert!(m.view(FilterContext::Home, 100).is_none(), "expired");
        assert!(m.view(FilterContext::Lists, 0).is_none(), "not its context");
        let none = Arc::new(Matcher::new(&FilterSet::default()));
        assert!(none.view(FilterContext::Home, 0).is_none());
    }
}
