//! The orders a reader may choose for their home timeline besides the
//! newest first: `balanced` and `catchup`. Both rank the candidates the
//! newest-first order would show (so every rule of what a reader sees
//! holds); this module is the rule that orders them, pure and
//! deterministic: the same candidates, signals and weights give the same
//! order, with ties broken by position, newest first.
//!
//! A candidate's score is
//!
//! ```text
//! score = recency × (1 + engagement + affinity + rarity) × priority × diversity
//! recency    = 0.5 ^ (age / half_life)
//! engagement = w_engagement × ln(1 + likes + 2 × reposts + 2 × replies)
//! affinity   = w_affinity × ln(1 + the reader's recent likes, replies and reposts of the author)
//! rarity     = w_rarity / (the author's posts among the window's candidates)
//! priority   = 2 ^ (the reader's priority for the author, -2 to 2)
//! diversity  = max(decay ^ k, floor), k = the author's entries placed
//!              before it in the same page
//! ```
//!
//! Catch-up ranks by the same parts without recency (everything since the
//! marker is new to the reader) and shows each author once, their best
//! post, with the count of the rest.

use crate::ids::{PostId, UserId};
use crate::model::PostCounts;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// How a ranked order weighs its parts (documented with their defaults in
/// docs/ranking.md; set from the settings file).
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    /// Hours after which a post's recency has halved.
    pub half_life_hours: f64,
    pub engagement: f64,
    pub affinity: f64,
    pub rarity: f64,
    /// What each further entry of one author in a page weighs, relative
    /// to the one before it...
    pub diversity_decay: f64,
    /// ...down to this.
    pub diversity_floor: f64,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            half_life_hours: 6.0,
            engagement: 0.5,
            affinity: 1.0,
            rarity: 1.0,
            diversity_decay: 0.5,
            diversity_floor: 0.25,
        }
    }
}

pub use crate::model::relation::{MAX_PRIORITY, MIN_PRIORITY};

/// One entry the newest-first order would show, with what ranking needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Where the newest-first order places it (the post, or the repost
    /// that brought it); entries are told apart by it.
    pub position: PostId,
    pub author: UserId,
    /// When it was posted.
    pub at_ms: u64,
    pub counts: PostCounts,
    /// How many of the reader's accounts reposted it.
    pub reposted_by: u64,
}

/// What the reader brings: whom they interact with, and their priorities.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// The reader's recent likes of, replies to and reposts of each author.
    pub interactions: HashMap<UserId, u32>,
    /// The reader's priority for an author, where set.
    pub priorities: HashMap<UserId, i8>,
    /// How many posts each author has in the window, where known beyond
    /// the candidates (catch-up ranks those since the marker, but an
    /// author's rarity is over the whole window); else their candidates
    /// are counted.
    pub posted: HashMap<UserId, u32>,
}

/// Why an entry is where it is: the part that lifted it most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The reader gave the author a raised priority.
    Priority,
    /// Accounts the reader follows reposted it.
    RepostedBy,
    /// Many liked, reposted or replied to it.
    Popular,
    /// The reader often likes, replies to or reposts the author.
    Affinity,
    /// The author rarely posts.
    RarelyPosts,
    /// The reader follows the author; nothing else stands out.
    Followed,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Priority => "priority",
            Reason::RepostedBy => "reposted_by",
            Reason::Popular => "popular",
            Reason::Affinity => "affinity",
            Reason::RarelyPosts => "rarely_posts",
            Reason::Followed => "followed",
        }
    }
}

/// A score and its parts, as `explain` shows them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    pub recency: f64,
    pub engagement: f64,
    pub affinity: f64,
    pub rarity: f64,
    pub priority: f64,
    pub diversity: f64,
    pub score: f64,
}

impl Parts {
    /// The parts of an entry served in latest order: nothing ranked it.
    pub fn unranked() -> Parts {
        Parts {
            recency: 1.0,
            engagement: 0.0,
            affinity: 0.0,
            rarity: 0.0,
            priority: 1.0,
            diversity: 1.0,
            score: 0.0,
        }
    }

    /// The part that lifted the entry most, as its reason.
    fn reason(&self, reposted_by: u64) -> Reason {
        if self.priority > 1.0 {
            return Reason::Priority;
        }
        if reposted_by > 0 && self.engagement <= self.affinity.max(self.rarity) {
            return Reason::RepostedBy;
        }
        let lifts = [
            (self.engagement, Reason::Popular),
            (self.affinity, Reason::Affinity),
            (self.rarity, Reason::RarelyPosts),
        ];
        // A part must lift the score by half again to be named.
        let best = lifts
            .iter()
            .filter(|(v, _)| *v >= 0.5)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match best {
            Some((_, reason)) => *reason,
            None if reposted_by > 0 => Reason::RepostedBy,
            None => Reason::Followed,
        }
    }
}

/// A ranked entry: the candidate's index, its parts and its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub index: usize,
    pub parts: Parts,
    pub reason: Reason,
    /// In catch-up: how many more of the author's posts since the marker.
    pub more: u64,
}

/// What the score takes from a candidate's author: the reader's
/// interactions with them, the reader's priority for them, and their
/// posts in the window.
#[derive(Clone, Copy, Default)]
pub(crate) struct Author {
    pub met: u32,
    pub level: i8,
    pub posted: u32,
}

/// A candidate as the rule ranks it: its author by place in a table of
/// [`Author`]s, so that the rule reads an author's signals once and never
/// hashes an id per candidate.
#[derive(Clone, Copy)]
pub(crate) struct Scorable {
    pub position: PostId,
    pub author: u32,
    pub at_ms: u64,
    pub counts: PostCounts,
    pub reposted_by: u64,
}

/// `candidates` as the rule ranks them, and their authors' table.
pub(crate) fn placed(candidates: &[Candidate], signals: &Signals) -> (Vec<Scorable>, Vec<Author>) {
    let mut places: FxHashMap<&UserId, u32> = FxHashMap::default();
    let mut table: Vec<Author> = Vec::new();
    let mut ids: Vec<&UserId> = Vec::new();
    let scorable = candidates
        .iter()
        .map(|c| {
            let author = *places.entry(&c.author).or_insert_with(|| {
                table.push(Author::default());
                ids.push(&c.author);
                (table.len() - 1) as u32
            });
            table[author as usize].posted += 1;
            Scorable {
                position: c.position,
                author,
                at_ms: c.at_ms,
                counts: c.counts,
                reposted_by: c.reposted_by,
            }
        })
        .collect();
    for (a, who) in table.iter_mut().zip(ids) {
        a.met = signals.interactions.get(who).copied().unwrap_or(0);
        a.level = signals.priorities.get(who).copied().unwrap_or(0);
        a.posted = signals
            .posted
            .get(who)
            .map_or(a.posted, |n| (*n).max(a.posted));
    }
    (scorable, table)
}

/// The score before diversity.
pub(crate) fn base(c: &Scorable, a: Author, w: &Weights, now_ms: u64, recent: bool) -> Parts {
    let recency = match recent {
        true => {
            let age_h = now_ms.saturating_sub(c.at_ms) as f64 / 3_600_000.0;
            (-age_h / w.half_life_hours.max(1e-3)).exp2()
        }
        false => 1.0,
    };
    let n = c.counts;
    let acts = n.likes as f64 + 2.0 * (n.reposts + n.replies) as f64 + c.reposted_by as f64;
    let engagement = w.engagement * acts.ln_1p();
    let affinity = w.affinity * (a.met as f64).ln_1p();
    let rarity = w.rarity / a.posted.max(1) as f64;
    let level = a.level.clamp(MIN_PRIORITY, MAX_PRIORITY);
    let priority = 2f64.powi(level as i32);
    let score = recency * (1.0 + engagement + affinity + rarity) * priority;
    Parts {
        recency,
        engagement,
        affinity,
        rarity,
        priority,
        diversity: 1.0,
        score,
    }
}

/// A heap item: the best score first, then the newest position.
struct Scored {
    score: f64,
    position: PostId,
    index: usize,
    /// The author's queue ([`diversify`]).
    queue: usize,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.position.cmp(&other.position))
    }
}

/// The balanced order of `candidates` for pages of `page` entries: each
/// page takes the best remaining score, where each further entry of one
/// author in the same page weighs less ([`Weights::diversity_decay`],
/// down to [`Weights::diversity_floor`]).
pub fn balanced(
    candidates: &[Candidate],
    signals: &Signals,
    w: &Weights,
    now_ms: u64,
    page: usize,
) -> Vec<Ranked> {
    let (scorable, table) = placed(candidates, signals);
    balanced_placed(&scorable, &table, w, now_ms, (page, usize::MAX))
}

/// [`balanced`] of candidates already placed, its first `stop` entries
/// (all of them: `usize::MAX`).
pub(crate) fn balanced_placed(
    candidates: &[Scorable],
    table: &[Author],
    w: &Weights,
    now_ms: u64,
    (page, stop): (usize, usize),
) -> Vec<Ranked> {
    let bases: Vec<Parts> = candidates
        .iter()
        .map(|c| base(c, table[c.author as usize], w, now_ms, true))
        .collect();
    diversify(candidates, table.len(), &bases, w, (page.max(1), stop))
}

/// The diversity factor of an author's entry with `placed` entries of
/// theirs before it in the page.
pub(crate) fn diversity(w: &Weights, placed: u32) -> f64 {
    w.diversity_decay
        .powi(placed as i32)
        .max(w.diversity_floor)
        .min(1.0)
}

/// Each page takes the best remaining score. Within one author the
/// diversity factor is the same for every entry, so an author's best
/// weighed entry is among those of their best base score: a queue per
/// author (of `authors` places) in base order, and a heap of the authors
/// by their next entry's weighed score. Where weighing makes entries of
/// one author equal (a factor of 0, or rounding), the newest of them is
/// next, as the rule says. O(n log n) for the whole order, the page
/// resets included (a reset reckons the authors again, not the entries).
/// Stops after `stop` entries.
pub(crate) fn diversify(
    candidates: &[Scorable],
    authors: usize,
    bases: &[Parts],
    w: &Weights,
    (page, stop): (usize, usize),
) -> Vec<Ranked> {
    let better = |a: usize, b: usize| {
        bases[a]
            .score
            .total_cmp(&bases[b].score)
            .then(candidates[a].position.cmp(&candidates[b].position))
    };
    let mut queues: Vec<Vec<usize>> = vec![Vec::new(); authors];
    for (i, c) in candidates.iter().enumerate() {
        queues[c.author as usize].push(i);
    }
    // Worst first, so that the best is popped from the end.
    for q in &mut queues {
        q.sort_unstable_by(|&a, &b| better(a, b));
    }
    let mut placed = vec![0u32; queues.len()];
    // The factors of the first entries of an author in a page, computed
    // once (the same function, so the same bits).
    let factors: Vec<f64> = (0..page.min(64) as u32).map(|k| diversity(w, k)).collect();
    let factor = |k: u32| match factors.get(k as usize) {
        Some(f) => *f,
        None => diversity(w, k),
    };
    let head = |queues: &[Vec<usize>], placed: &[u32], s: usize| {
        let factor = factor(placed[s]);
        let weighed = |i: usize| bases[i].score * factor;
        let &last = queues[s].last()?;
        let top = weighed(last);
        // The entries that weigh as much as the best: the end of the queue.
        let index = queues[s]
            .iter()
            .rev()
            .take_while(|&&i| weighed(i).total_cmp(&top).is_eq())
            .copied()
            .max_by_key(|&i| candidates[i].position)?;
        Some(Scored {
            score: top,
            position: candidates[index].position,
            index,
            queue: s,
        })
    };
    let heads = |queues: &[Vec<usize>], placed: &[u32]| -> BinaryHeap<Scored> {
        (0..queues.len())
            .filter_map(|s| head(queues, placed, s))
            .collect()
    };
    let mut heap = heads(&queues, &placed);
    let mut out = Vec::with_capacity(candidates.len().min(stop));
    while out.len() < stop {
        let Some(top) = heap.pop() else {
            break;
        };
        let s = top.queue;
        let at = queues[s].iter().rposition(|&i| i == top.index);
        queues[s].remove(at.expect("the head is in its queue"));
        let mut parts = bases[top.index];
        parts.diversity = factor(placed[s]);
        parts.score *= parts.diversity;
        out.push(Ranked {
            index: top.index,
            parts,
            reason: parts.reason(candidates[top.index].reposted_by),
            more: 0,
        });
        placed[s] += 1;
        if out.len() % page == 0 {
            // A new page: every author starts afresh.
            placed.iter_mut().for_each(|p| *p = 0);
            heap = heads(&queues, &placed);
        } else if let Some(next) = head(&queues, &placed, s) {
            heap.push(next);
        }
    }
    out
}

/// The catch-up order of `candidates` (those since the reader's marker):
/// each author once, with their best post (by engagement, affinity,
/// rarity and priority, not recency: all of it is new to the reader) and
/// how many more they posted; authors by their best post's score.
pub fn catch_up(candidates: &[Candidate], signals: &Signals, w: &Weights) -> Vec<Ranked> {
    let (scorable, table) = placed(candidates, signals);
    catch_up_placed(&scorable, &table, w)
}

/// [`catch_up`] of candidates already placed.
pub(crate) fn catch_up_placed(
    candidates: &[Scorable],
    table: &[Author],
    w: &Weights,
) -> Vec<Ranked> {
    // Per author: their best candidate, its parts, and how many they have.
    let mut best: Vec<Option<(usize, Parts, u64)>> = vec![None; table.len()];
    for (i, c) in candidates.iter().enumerate() {
        let parts = base(c, table[c.author as usize], w, 0, false);
        let held = &mut best[c.author as usize];
        match held {
            Some((at, kept, n)) => {
                *n += 1;
                let better = parts
                    .score
                    .total_cmp(&kept.score)
                    .then(c.position.cmp(&candidates[*at].position));
                if better == Ordering::Greater {
                    (*at, *kept) = (i, parts);
                }
            }
            None => *held = Some((i, parts, 1)),
        }
    }
    let mut out: Vec<Ranked> = best
        .into_iter()
        .flatten()
        .map(|(index, parts, n)| Ranked {
            index,
            parts,
            reason: parts.reason(candidates[index].reposted_by),
            more: n - 1,
        })
        .collect();
    out.sort_by(|a, b| {
        b.parts.score.total_cmp(&a.parts.score).then(
            candidates[b.index]
                .position
                .cmp(&candidates[a.index].position),
        )
    });
    out
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;
