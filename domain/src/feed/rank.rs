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
    fn reason(&self, candidate: &Candidate) -> Reason {
        if self.priority > 1.0 {
            return Reason::Priority;
        }
        if candidate.reposted_by > 0 && self.engagement <= self.affinity.max(self.rarity) {
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
            None if candidate.reposted_by > 0 => Reason::RepostedBy,
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
#[derive(Clone, Copy)]
struct Author {
    met: u32,
    level: i8,
    posted: u32,
}

/// Each author's [`Author`], looked up once per author rather than once
/// per candidate.
fn authors<'a>(candidates: &'a [Candidate], signals: &Signals) -> FxHashMap<&'a UserId, Author> {
    let mut out: FxHashMap<&UserId, Author> = FxHashMap::default();
    for c in candidates {
        out.entry(&c.author)
            .or_insert(Author {
                met: 0,
                level: 0,
                posted: 0,
            })
            .posted += 1;
    }
    for (who, a) in out.iter_mut() {
        a.met = signals.interactions.get(*who).copied().unwrap_or(0);
        a.level = signals.priorities.get(*who).copied().unwrap_or(0);
        a.posted = signals
            .posted
            .get(*who)
            .map_or(a.posted, |n| (*n).max(a.posted));
    }
    out
}

/// How many candidates each author has.
fn per_author(candidates: &[Candidate]) -> FxHashMap<&UserId, u32> {
    let mut n = FxHashMap::default();
    for c in candidates {
        *n.entry(&c.author).or_insert(0) += 1;
    }
    n
}

/// The score before diversity.
fn base(c: &Candidate, a: Author, w: &Weights, now_ms: u64, recent: bool) -> Parts {
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
    let of = authors(candidates, signals);
    let bases: Vec<Parts> = candidates
        .iter()
        .map(|c| base(c, of[&c.author], w, now_ms, true))
        .collect();
    diversify(candidates, &bases, w, page.max(1))
}

/// The diversity factor of an author's entry with `placed` entries of
/// theirs before it in the page.
fn diversity(w: &Weights, placed: u32) -> f64 {
    w.diversity_decay
        .powi(placed as i32)
        .max(w.diversity_floor)
        .min(1.0)
}

/// Each page takes the best remaining score. Within one author the
/// diversity factor is the same for every entry, so an author's best
/// weighed entry is among those of their best base score: a queue per
/// author in base order, and a heap of the authors by their next entry's
/// weighed score. Where weighing makes entries of one author equal (a
/// factor of 0, or rounding), the newest of them is next, as the rule
/// says. O(n log n) for the whole order, the page resets included (a
/// reset reckons the authors again, not the entries).
fn diversify(candidates: &[Candidate], bases: &[Parts], w: &Weights, page: usize) -> Vec<Ranked> {
    let better = |a: usize, b: usize| {
        bases[a]
            .score
            .total_cmp(&bases[b].score)
            .then(candidates[a].position.cmp(&candidates[b].position))
    };
    let mut slot: FxHashMap<&UserId, usize> = FxHashMap::default();
    let mut queues: Vec<Vec<usize>> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let s = *slot.entry(&c.author).or_insert_with(|| {
            queues.push(Vec::new());
            queues.len() - 1
        });
        queues[s].push(i);
    }
    // Worst first, so that the best is popped from the end.
    for q in &mut queues {
        q.sort_unstable_by(|&a, &b| better(a, b));
    }
    let mut placed = vec![0u32; queues.len()];
    let head = |queues: &[Vec<usize>], placed: &[u32], s: usize| {
        let factor = diversity(w, placed[s]);
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
    let mut heap: BinaryHeap<Scored> = (0..queues.len())
        .filter_map(|s| head(&queues, &placed, s))
        .collect();
    let mut out = Vec::with_capacity(candidates.len());
    while let Some(top) = heap.pop() {
        let s = top.queue;
        let at = queues[s].iter().rposition(|&i| i == top.index);
        queues[s].remove(at.expect("the head is in its queue"));
        let mut parts = bases[top.index];
        parts.diversity = diversity(w, placed[s]);
        parts.score *= parts.diversity;
        out.push(Ranked {
            index: top.index,
            parts,
            reason: parts.reason(&candidates[top.index]),
            more: 0,
        });
        placed[s] += 1;
        if out.len() % page == 0 {
            // A new page: every author starts afresh.
            placed.iter_mut().for_each(|p| *p = 0);
            heap = (0..queues.len())
                .filter_map(|s| head(&queues, &placed, s))
                .collect();
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
    let of = authors(candidates, signals);
    let counts = per_author(candidates);
    let mut best: FxHashMap<&UserId, (usize, Parts)> = FxHashMap::default();
    for (i, c) in candidates.iter().enumerate() {
        let parts = base(c, of[&c.author], w, 0, false);
        let better = |held: &(usize, Parts)| {
            parts
                .score
                .total_cmp(&held.1.score)
                .then(c.position.cmp(&candidates[held.0].position))
                == Ordering::Greater
        };
        match best.get(&c.author) {
            Some(held) if !better(held) => {}
            _ => {
                best.insert(&c.author, (i, parts));
            }
        }
    }
    let mut out: Vec<Ranked> = best
        .into_iter()
        .map(|(author, (index, parts))| Ranked {
            index,
            parts,
            reason: parts.reason(&candidates[index]),
            more: u64::from(counts[author]) - 1,
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
