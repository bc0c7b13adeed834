//! What a ranked order is ranked from, kept compact: each candidate's
//! post, the item that placed it, its author and counts, and what the
//! reader brings (whom they interact with, their priorities, the posts
//! they asked to see less like). A first page ranks from them
//! ([`RankInputs::balanced`], [`RankInputs::catch_up`]); a later first
//! page of the same reader may rank again from the same inputs with only
//! the entries that arrived since read ([`RankInputs::extended`]), which
//! gives the order a full ranking would give but for the counts and the
//! reader's own signals, as of when they were read.
//!
//! Recency is a factor of the score, the same power of one half for every
//! entry's age: ranking at a later time scales every score alike, so the
//! order of kept entries among themselves does not change with the clock,
//! and entries that arrived since are ranked among them at the new time.

use super::rank::{self, Author, Ranked, Scorable, Signals, Weights, MIN_PRIORITY};
use crate::ids::{PostId, UserId};
use crate::model::PostCounts;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{HashMap, HashSet};

/// One entry the newest-first order shows, as ranking takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fresh {
    /// Where the newest-first order places it (the post, or the repost).
    pub position: PostId,
    pub post: PostId,
    pub author: UserId,
    /// Whose item placed it: the newest reposter, or the author.
    pub placer: UserId,
    /// How many of the timeline's accounts reposted it.
    pub reposted_by: u64,
    pub counts: PostCounts,
}

/// A candidate, compact: its authors by their place in the inputs' table.
#[derive(Debug, Clone, Copy)]
struct Held {
    position: PostId,
    post: PostId,
    likes: u32,
    reposts: u32,
    replies: u32,
    author: u16,
    placer: u16,
    reposted_by: u16,
}

/// Most candidates one set of inputs holds (authors are kept as 16-bit
/// places in a table).
pub const MAX_HELD: usize = u16::MAX as usize;

/// What an order is ranked from.
#[derive(Debug, Clone, Default)]
pub struct RankInputs {
    authors: Vec<UserId>,
    held: Vec<Held>,
    /// The reader's interactions and priorities (before "show less").
    signals: Signals,
    /// The posts the reader asked to see less like.
    less: HashSet<PostId>,
}

/// An entry of a ranked order: the candidate it ranks (an index of
/// [`RankInputs::entry`]) and its parts.
pub type Placed = Ranked;

/// A candidate as a page shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry<'a> {
    pub position: PostId,
    pub post: PostId,
    pub author: &'a UserId,
    pub placer: &'a UserId,
}

fn clamp32(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

impl RankInputs {
    /// `fresh` (newest first, at most [`MAX_HELD`]), with the reader's
    /// `signals` and the posts they asked to see less like.
    pub fn new(fresh: &[Fresh], signals: Signals, less: HashSet<PostId>) -> RankInputs {
        let mut inputs = RankInputs {
            authors: Vec::new(),
            held: Vec::with_capacity(fresh.len().min(MAX_HELD)),
            signals: Signals {
                posted: HashMap::new(),
                ..signals
            },
            less,
        };
        let mut places = FxHashMap::default();
        inputs.push_all(fresh, &mut places);
        inputs
    }

    /// Appends `fresh`, its authors placed by `places` (the table's).
    fn push_all(&mut self, fresh: &[Fresh], places: &mut FxHashMap<UserId, u16>) {
        for f in fresh.iter().take(MAX_HELD - self.held.len()) {
            let mut place = |u: &UserId, authors: &mut Vec<UserId>| {
                *places.entry(u.clone()).or_insert_with(|| {
                    authors.push(u.clone());
                    (authors.len() - 1) as u16
                })
            };
            let author = place(&f.author, &mut self.authors);
            let placer = place(&f.placer, &mut self.authors);
            self.held.push(Held {
                position: f.position,
                post: f.post,
                likes: clamp32(f.counts.likes),
                reposts: clamp32(f.counts.reposts),
                replies: clamp32(f.counts.replies),
                author,
                placer,
                reposted_by: f.reposted_by.min(u16::MAX as u64) as u16,
            });
        }
    }

    /// How many candidates they hold.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Candidate `i` as a page shows it.
    pub fn entry(&self, i: usize) -> Entry<'_> {
        let h = &self.held[i];
        Entry {
            position: h.position,
            post: h.post,
            author: &self.authors[h.author as usize],
            placer: &self.authors[h.placer as usize],
        }
    }

    /// The positions they hold from `from` on: what a read of the entries
    /// since need not load again.
    pub fn positions_from(&self, from: PostId) -> HashSet<PostId> {
        let newer = self.held.iter().take_while(|h| h.position >= from);
        newer.map(|h| h.position).collect()
    }

    /// These inputs with the entries `fresh` (newest first) among them: a
    /// held entry whose post `fresh` places anew (a repost since) gives
    /// way; entries below `floor` (the window's) go, and at most `max`
    /// stay, the newest.
    pub fn extended(&self, fresh: &[Fresh], floor: PostId, max: usize) -> RankInputs {
        let replaced: FxHashSet<PostId> = fresh.iter().map(|f| f.post).collect();
        let max = max.min(MAX_HELD);
        let mut out = RankInputs {
            authors: self.authors.clone(),
            held: Vec::with_capacity(max.min(self.held.len() + fresh.len())),
            signals: self.signals.clone(),
            less: self.less.clone(),
        };
        if out.authors.len() + 2 * fresh.len() > MAX_HELD {
            // The table only grows between full reads: start it afresh.
            out.authors.clear();
            let all: Vec<Fresh> = (0..self.held.len()).map(|i| self.fresh(i)).collect();
            return RankInputs::new(&all, out.signals, out.less).extended(fresh, floor, max);
        }
        let mut places: FxHashMap<UserId, u16> = (out.authors.iter().cloned()).zip(0..).collect();
        let mut added = RankInputs {
            authors: std::mem::take(&mut out.authors),
            ..RankInputs::default()
        };
        added.push_all(fresh, &mut places);
        out.authors = added.authors;
        let kept = self
            .held
            .iter()
            .filter(|h| h.position >= floor && !replaced.contains(&h.post));
        // Both newest first: merged so.
        let (mut a, mut b) = (kept.peekable(), added.held.into_iter().peekable());
        while out.held.len() < max {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.position >= y.position => a.next().copied(),
                (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                (Some(_), None) => a.next().copied(),
                (None, None) => break,
            };
            out.held.extend(next);
        }
        out
    }

    /// The posts of the candidates, in their order.
    pub fn posts(&self) -> Vec<PostId> {
        self.held.iter().map(|h| h.post).collect()
    }

    /// These inputs with the candidates' `counts` (in the order of
    /// [`Self::posts`]) and the reader's `interactions` read again. The
    /// reader's priorities and "show less" posts stay: they change only by
    /// the reader's own writes, which end what the inputs serve
    /// ([`crate::feed`]'s ranked orders rank afresh after them).
    pub fn recounted(
        &self,
        counts: &[PostCounts],
        interactions: HashMap<UserId, u32>,
    ) -> RankInputs {
        let mut held = self.held.clone();
        for (h, n) in held.iter_mut().zip(counts) {
            (h.likes, h.reposts, h.replies) =
                (clamp32(n.likes), clamp32(n.reposts), clamp32(n.replies));
        }
        RankInputs {
            authors: self.authors.clone(),
            held,
            signals: Signals {
                interactions,
                ..self.signals.clone()
            },
            less: self.less.clone(),
        }
    }

    /// Candidate `i` as a fresh entry again.
    fn fresh(&self, i: usize) -> Fresh {
        let h = &self.held[i];
        Fresh {
            position: h.position,
            post: h.post,
            author: self.authors[h.author as usize].clone(),
            placer: self.authors[h.placer as usize].clone(),
            reposted_by: h.reposted_by.into(),
            counts: PostCounts {
                likes: h.likes.into(),
                reposts: h.reposts.into(),
                replies: h.replies.into(),
            },
        }
    }

    /// The candidates ranking sees (those placed after `after`), with
    /// their authors by place in the inputs' table and that table's
    /// signals: the posts the reader asked to see less like left out,
    /// each lowering its author by a step of priority; each author's
    /// entries counted for rarity over all the inputs hold. With the
    /// candidates' places in the inputs.
    fn candidates(&self, after: Option<PostId>) -> (Vec<Scorable>, Vec<usize>, Vec<Author>) {
        let mut table = vec![Author::default(); self.authors.len()];
        let mut lowered = vec![0i8; self.authors.len()];
        for h in &self.held {
            table[h.author as usize].posted += 1;
        }
        let mut out = Vec::with_capacity(self.held.len());
        let mut at = Vec::with_capacity(self.held.len());
        for (i, h) in self.held.iter().enumerate() {
            if after.is_some_and(|a| h.position <= a) {
                continue;
            }
            if self.less.contains(&h.post) {
                let steps = &mut lowered[h.author as usize];
                *steps = steps.saturating_add(1);
                continue;
            }
            at.push(i);
            out.push(Scorable {
                position: h.position,
                author: h.author.into(),
                at_ms: h.post.unix_ms(),
                counts: PostCounts {
                    likes: h.likes.into(),
                    reposts: h.reposts.into(),
                    replies: h.replies.into(),
                },
                reposted_by: h.reposted_by.into(),
            });
        }
        // Each author's signals, read once (the table's placers who
        // author nothing need none).
        let signals = &self.signals;
        for ((a, who), steps) in table.iter_mut().zip(&self.authors).zip(lowered) {
            if a.posted == 0 {
                continue;
            }
            a.met = signals.interactions.get(who).copied().unwrap_or(0);
            let level = signals.priorities.get(who).copied().unwrap_or(0);
            a.level = level.saturating_sub(steps).max(MIN_PRIORITY);
        }
        (out, at, table)
    }

    /// The balanced order at `now_ms`, for pages of `page` entries
    /// ([`rank::balanced`]); each entry's `index` is its candidate here.
    pub fn balanced(&self, w: &Weights, now_ms: u64, page: usize) -> Vec<Placed> {
        self.balanced_from(w, now_ms, (page, usize::MAX), &[])
    }

    /// The first page only of [`Self::balanced`], and how many entries the
    /// whole order has: what a first page needs, the rest being ranked
    /// only if a later page is asked ([`Self::balanced_after`]).
    pub fn balanced_first(&self, w: &Weights, now_ms: u64, page: usize) -> (Vec<Placed>, usize) {
        let first = self.balanced_from(w, now_ms, (page, page), &[]);
        let all = self.held.len()
            - self
                .held
                .iter()
                .filter(|h| self.less.contains(&h.post))
                .count();
        (first, all)
    }

    /// [`Self::balanced`] after its first page `first` (as
    /// [`Self::balanced_first`] gave it at the same `now_ms`): the
    /// candidates left, ranked alone. The same entries as the whole
    /// order's, because each page starts the authors afresh.
    pub fn balanced_after(
        &self,
        w: &Weights,
        now_ms: u64,
        page: usize,
        first: &[usize],
    ) -> Vec<Placed> {
        self.balanced_from(w, now_ms, (page, usize::MAX), first)
    }

    fn balanced_from(
        &self,
        w: &Weights,
        now_ms: u64,
        pages: (usize, usize),
        taken: &[usize],
    ) -> Vec<Placed> {
        let (mut candidates, mut at, table) = self.candidates(None);
        if !taken.is_empty() {
            let taken: FxHashSet<usize> = taken.iter().copied().collect();
            let keep: Vec<bool> = at.iter().map(|i| !taken.contains(i)).collect();
            let mut k = keep.iter();
            candidates.retain(|_| *k.next().expect("one flag per candidate"));
            at.retain(|i| !taken.contains(i));
        }
        let mut ranked = rank::balanced_placed(&candidates, &table, w, now_ms, pages);
        ranked.iter_mut().for_each(|r| r.index = at[r.index]);
        ranked
    }

    /// The catch-up order of the entries placed after `after` (all, if
    /// `None`), rarity counted over them all ([`rank::catch_up`]).
    pub fn catch_up(&self, after: Option<PostId>, w: &Weights) -> Vec<Placed> {
        let (candidates, at, table) = self.candidates(after);
        let mut ranked = rank::catch_up_placed(&candidates, &table, w);
        ranked.iter_mut().for_each(|r| r.index = at[r.index]);
        ranked
    }
}

#[cfg(test)]
#[path = "rank_inputs_tests.rs"]
mod tests;
