//! What each reader's balanced order was last ranked from
//! ([`RankInputs`]), so that their next first page reads only what arrived
//! since ([`super::ranked`]). Kept where the timeline store versions
//! timelines (the embedded default), where the process sees every write
//! that changes a page: a basis serves only while no write that concerns
//! its reader ended since it was read
//! ([`crate::feed::stamp::WriteEpoch::of_reader`]). Bounded: at most [`MAX_CANDIDATES`] candidates over all
//! readers (the oldest go first).

use super::reader_signals::Acts;
use crate::ids::{PostId, TimelineId};
use socialite_domain::feed::rank_inputs::RankInputs;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Candidates all bases hold together: 5,000 readers of 1,200, about
/// 45 bytes each (240 MB at most).
pub const MAX_CANDIDATES: usize = 6_000_000;

/// One reader's basis.
#[derive(Clone)]
pub(super) struct Basis {
    pub inputs: Arc<RankInputs>,
    /// The posts its reader's signals were read from.
    pub acts: Arc<Acts>,
    /// Where the writes that concern its reader stood when its candidates
    /// were read.
    pub writes: u64,
    /// When the counts and the reader's signals were read.
    pub counted: Instant,
    /// When its candidates were all read (since then, only those that
    /// arrived were, and the counts of all).
    pub read_in_full: Instant,
    /// The clock when its newest entries were read (the full read, or an
    /// extension since).
    pub read_ms: u64,
    /// When a refresh of its counts began, if one is under way.
    pub refreshing: Option<Instant>,
}

impl Basis {
    /// A basis whose candidates were all read at `now_ms`, the read
    /// having begun at `started`.
    pub fn read_in_full(
        inputs: Arc<RankInputs>,
        acts: Arc<Acts>,
        writes: u64,
        started: Instant,
        now_ms: u64,
    ) -> Basis {
        Basis {
            inputs,
            acts,
            writes,
            counted: started,
            read_in_full: started,
            read_ms: now_ms,
            refreshing: None,
        }
    }
}

#[derive(Default)]
struct Held {
    by_feed: HashMap<TimelineId, (u64, Basis)>,
    /// (timeline, stamp) oldest first; a stamp no longer the timeline's
    /// is skipped when met.
    order: VecDeque<(TimelineId, u64)>,
    candidates: usize,
    next: u64,
}

pub(super) struct Bases {
    /// Most candidates held over all readers.
    max: usize,
    held: Mutex<Held>,
}

impl Default for Bases {
    fn default() -> Bases {
        Bases::new(MAX_CANDIDATES)
    }
}

/// How long a refresh may run before another may start.
const REFRESH_RUNS: Duration = Duration::from_secs(10);

impl Bases {
    pub fn new(max: usize) -> Bases {
        Bases {
            max,
            held: Mutex::default(),
        }
    }

    pub fn get(&self, timeline: &TimelineId) -> Option<Basis> {
        let h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.by_feed.get(timeline).map(|(_, b)| b.clone())
    }

    /// Whether a refresh of `timeline`'s basis may start now; if so, marks
    /// it under way.
    pub fn start_refresh(&self, timeline: &TimelineId) -> bool {
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let Some((_, b)) = h.by_feed.get_mut(timeline) else {
            return false;
        };
        if b.refreshing.is_some_and(|at| at.elapsed() < REFRESH_RUNS) {
            return false;
        }
        b.refreshing = Some(Instant::now());
        true
    }

    /// Keeps `basis` as `timeline`'s, in place of what it had.
    pub fn put(&self, timeline: TimelineId, basis: Basis) {
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.next += 1;
        let stamp = h.next;
        h.candidates += basis.inputs.len();
        if let Some((_, old)) = h.by_feed.insert(timeline.clone(), (stamp, basis)) {
            h.candidates -= old.inputs.len();
        }
        h.order.push_back((timeline, stamp));
        while h.candidates > self.max {
            let Some((oldest, at)) = h.order.pop_front() else {
                break;
            };
            if h.by_feed.get(&oldest).is_some_and(|(s, _)| *s == at) {
                let (_, gone) = h.by_feed.remove(&oldest).expect("held");
                h.candidates -= gone.inputs.len();
            }
        }
        if h.order.len() > 2 * h.by_feed.len() + 1024 {
            let Held { order, by_feed, .. } = &mut *h;
            order.retain(|(t, s)| by_feed.get(t).is_some_and(|(at, _)| at == s));
        }
    }
}

/// Where an extension reads again from: a little before its basis's newest
/// read, so that an entry delivered late (made before that read, stored
/// after it) is still found.
pub(super) fn read_again_from(basis: &Basis, floor: PostId) -> PostId {
    PostId::first_at(basis.read_ms.saturating_sub(LATE.as_millis() as u64)).max(floor)
}

/// How late an entry may be stored after it was made and still join an
/// extended order; later ones join at the next refresh.
pub(super) const LATE: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;
    use socialite_domain::feed::rank::Signals;
    use socialite_domain::feed::rank_inputs::Fresh;

    fn basis(n: usize) -> Basis {
        let a = UserId::parse("a").unwrap();
        let fresh: Vec<Fresh> = (0..n as u64)
            .map(|i| Fresh {
                position: PostId(i),
                post: PostId(i),
                author: a.clone(),
                placer: a.clone(),
                reposted_by: 0,
                counts: Default::default(),
            })
            .collect();
        Basis {
            inputs: Arc::new(RankInputs::new(
                &fresh,
                Signals::default(),
                Default::default(),
            )),
            acts: Default::default(),
            writes: 0,
            counted: Instant::now(),
            read_in_full: Instant::now(),
            read_ms: 0,
            refreshing: None,
        }
    }

    #[test]
    fn bases_are_bounded_and_one_refresh_runs_at_a_time() {
        let b = Bases::new(1_000);
        let home = |i: usize| TimelineId::home(&UserId::parse(&format!("u{i}")).unwrap());
        for i in 0..4 {
            b.put(home(i), basis(300));
        }
        assert!(b.get(&home(0)).is_none(), "the oldest went past the bound");
        assert!((1..4).all(|i| b.get(&home(i)).is_some()));
        // Put again: replaced, not added.
        b.put(home(1), basis(10));
        b.put(home(4), basis(300));
        assert!(
            b.get(&home(2)).is_some(),
            "room was made by the smaller basis"
        );
        assert!(b.start_refresh(&home(1)));
        assert!(!b.start_refresh(&home(1)), "one under way");
        assert!(!b.start_refresh(&home(99)), "none held");
        let held = b.held.lock().unwrap();
        let sum: usize = held.by_feed.values().map(|(_, b)| b.inputs.len()).sum();
        assert_eq!(held.candidates, sum);
        assert!(held.candidates <= 1_000);
        // Many puts of one reader leave the queue bounded.
        drop(held);
        for _ in 0..5_000 {
            b.put(home(1), basis(1));
        }
        assert!(b.held.lock().unwrap().order.len() <= 2 * 5 + 1025);
    }
}
