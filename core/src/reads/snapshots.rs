//! Ranked orders page over a snapshot: the order as the first page ranked
//! it, kept for [`Ranking::snapshot_ttl`](super::ranked::Ranking) so that
//! page two neither repeats an entry of page one nor skips one while
//! posts arrive and counts move. A snapshot holds each entry's post, the
//! item that placed it and why it is there (not the post: each page loads
//! its posts, so a post deleted or an author muted since is left out).
//!
//! Snapshots live in the process that ranked them: a deployment with
//! several timeline APIs routes a reader's requests to one of them (by
//! user), or a page past the first may find its snapshot missing and is
//! refused with `cursor_expired` (start again from the first page).
//! Bounded: each reader holds at most [`PER_READER`] snapshots (their
//! newest), and all together at most [`MAX_ENTRIES`] entries (the oldest
//! go first).

use crate::feed::stamp::Stamp;
use crate::feed::Feed;
use crate::ids::{PostId, UserId};
use socialite_domain::feed::rank::{Parts, Reason};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Snapshots one reader holds at once, over their home and lists together.
pub const PER_READER: usize = 8;
/// Entries all snapshots hold together.
pub const MAX_ENTRIES: usize = 1_000_000;

/// One entry of a ranked order: the post, and the item of the timeline's
/// stream that placed it (the post itself, or the newest repost of it by
/// the timeline's accounts) with that item's author, which is what a
/// page's read pass is given to show the post as the timeline does.
#[derive(Debug, Clone)]
pub struct Placed {
    pub post: PostId,
    pub item: PostId,
    pub author: UserId,
    pub reason: Reason,
    pub parts: Parts,
    /// In catch-up: the author's further posts since the marker.
    pub more: u64,
}

struct Snapshot {
    /// The timeline ranked (a reader's home or one of their lists).
    feed: Feed,
    made: Instant,
    entries: Vec<Placed>,
    /// What its first page answered, and the stamp the reader's timeline
    /// had when it was ranked: while both hold, the same first page asked
    /// again is this one ([`Snapshots::reusable`]).
    reuse: Option<(u64, Stamp)>,
}

#[derive(Default)]
struct Held {
    next_id: u64,
    by_id: HashMap<u64, Snapshot>,
    /// Each reader's snapshot ids, oldest first (at most [`PER_READER`]).
    by_reader: HashMap<UserId, Vec<u64>>,
    /// Ids, oldest first; some may be gone already (a reader's newer
    /// snapshots replaced them), and are skipped when met.
    order: VecDeque<u64>,
    entries: usize,
}

/// The snapshots of one process.
pub struct Snapshots {
    ttl: Duration,
    held: Mutex<Held>,
}

impl Snapshots {
    pub fn new(ttl: Duration) -> Snapshots {
        Snapshots {
            ttl,
            held: Mutex::default(),
        }
    }

    /// Keeps `entries` as the order of `feed` (a reader's home or list),
    /// ranked for the request `asked` at `stamp` (if its timeline has
    /// one); the snapshot's id.
    pub fn keep(&self, feed: &Feed, entries: Vec<Placed>, reuse: Option<(u64, Stamp)>) -> u64 {
        let reader = feed.owner().expect("a reader's timeline").clone();
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.next_id += 1;
        // Ids are not guessable from one another, though a snapshot is
        // served only to its reader anyway.
        let id = mix(h.next_id);
        let mine = h.by_reader.get(&reader).cloned().unwrap_or_default();
        for old in mine
            .iter()
            .take((mine.len() + 1).saturating_sub(PER_READER))
        {
            h.remove(*old);
        }
        h.by_reader.entry(reader).or_default().push(id);
        h.entries += entries.len();
        h.by_id.insert(
            id,
            Snapshot {
                feed: feed.clone(),
                made: Instant::now(),
                entries,
                reuse,
            },
        );
        h.order.push_back(id);
        let now = Instant::now();
        while let Some(&oldest) = h.order.front() {
            let stale = h
                .by_id
                .get(&oldest)
                .is_none_or(|s| now.duration_since(s.made) > self.ttl);
            if !stale && h.entries <= MAX_ENTRIES {
                break;
            }
            h.order.pop_front();
            h.remove(oldest);
        }
        if h.order.len() > 2 * h.by_id.len() + 1024 {
            // Mostly ids already gone: keep the queue to what is held.
            let Held { order, by_id, .. } = &mut *h;
            order.retain(|i| by_id.contains_key(i));
        }
        id
    }

    /// The entries of `feed`'s snapshot `id` from `offset`, at most
    /// `limit`, and whether more follow; `None` if it expired or is not
    /// that timeline's.
    pub fn page(
        &self,
        feed: &Feed,
        id: u64,
        offset: usize,
        limit: usize,
    ) -> Option<(Vec<Placed>, bool)> {
        let h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let s = h.by_id.get(&id)?;
        if &s.feed != feed || s.made.elapsed() > self.ttl {
            return None;
        }
        let from = offset.min(s.entries.len());
        let to = (from + limit).min(s.entries.len());
        Some((s.entries[from..to].to_vec(), to < s.entries.len()))
    }
}

impl Snapshots {
    /// The newest of `feed`'s snapshots ranked for `asked` at `stamp`,
    /// if it is younger than `within`: nothing its order depends on has
    /// changed since but the posts' counts and the clock, which move a
    /// ranked order little in that time.
    pub fn reusable(&self, feed: &Feed, asked: u64, stamp: Stamp, within: Duration) -> Option<u64> {
        let h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mine = h.by_reader.get(feed.owner()?)?;
        mine.iter().rev().copied().find(|id| {
            h.by_id.get(id).is_some_and(|s| {
                &s.feed == feed
                    && s.reuse == Some((asked, stamp))
                    && s.made.elapsed() < within.min(self.ttl)
            })
        })
    }
}

impl Held {
    /// Forgets snapshot `id` (its id stays in `order` until met there).
    fn remove(&mut self, id: u64) {
        let Some(s) = self.by_id.remove(&id) else {
            return;
        };
        self.entries -= s.entries.len();
        if let Some(reader) = s.feed.owner() {
            if let Some(ids) = self.by_reader.get_mut(reader) {
                ids.retain(|i| *i != id);
                if ids.is_empty() {
                    self.by_reader.remove(reader);
                }
            }
        }
    }
}

/// A 64-bit mixer (SplitMix64's finaliser): distinct inputs, distinct ids.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use socialite_domain::feed::rank::Parts;

    fn home(name: &str) -> Feed {
        Feed::Home(UserId::parse(name).unwrap())
    }

    fn placed(n: u64) -> Placed {
        Placed {
            post: PostId(n),
            item: PostId(n),
            author: UserId::parse("a").unwrap(),
            reason: Reason::Followed,
            parts: Parts::unranked(),
            more: 0,
        }
    }

    #[test]
    fn a_snapshot_pages_for_its_reader_only_and_a_reader_holds_a_few() {
        let s = Snapshots::new(Duration::from_secs(60));
        let (alice, bob) = (home("alice"), home("bob"));
        let list = Feed::List(
            UserId::parse("alice").unwrap(),
            socialite_domain::ids::ListName::parse("close").unwrap(),
        );
        let id = s.keep(&alice, (0..5).map(placed).collect(), None);
        let (page, more) = s.page(&alice, id, 0, 3).unwrap();
        assert_eq!((page.len(), more), (3, true));
        let (page, more) = s.page(&alice, id, 3, 3).unwrap();
        assert_eq!((page[0].post, page.len(), more), (PostId(3), 2, false));
        assert!(s.page(&bob, id, 0, 3).is_none(), "another reader's");
        assert!(s.page(&list, id, 0, 3).is_none(), "another timeline's");
        let newer: Vec<u64> = (0..PER_READER)
            .map(|_| s.keep(&alice, vec![placed(1)], None))
            .collect();
        assert!(s.page(&alice, id, 0, 1).is_none(), "the oldest went");
        assert!(newer.iter().all(|n| s.page(&alice, *n, 0, 1).is_some()));
        let gone = Snapshots::new(Duration::ZERO);
        let id = gone.keep(&alice, vec![placed(1)], None);
        std::thread::sleep(Duration::from_millis(2));
        assert!(gone.page(&alice, id, 0, 1).is_none(), "expired");
    }

    #[test]
    fn a_first_page_is_reused_while_its_stamp_holds() {
        let s = Snapshots::new(Duration::from_secs(60));
        let alice = home("alice");
        let at = |epoch| Stamp { epoch, timeline: 7 };
        let id = s.keep(&alice, vec![placed(1)], Some((3, at(1))));
        let within = Duration::from_secs(30);
        assert_eq!(s.reusable(&alice, 3, at(1), within), Some(id));
        assert_eq!(s.reusable(&alice, 3, at(2), within), None, "a write since");
        assert_eq!(
            s.reusable(&alice, 4, at(1), within),
            None,
            "asked otherwise"
        );
        assert_eq!(
            s.reusable(&alice, 3, at(1), Duration::ZERO),
            None,
            "too old"
        );
    }

    #[test]
    fn what_a_reader_replaced_is_forgotten_whatever_the_churn() {
        let s = Snapshots::new(Duration::from_secs(60));
        let alice = home("alice");
        let ids: Vec<u64> = (0..10_000)
            .map(|_| s.keep(&alice, vec![placed(1)], None))
            .collect();
        let h = s.held.lock().unwrap();
        assert_eq!(h.by_id.len(), PER_READER);
        assert_eq!(h.by_reader.len(), 1);
        assert_eq!(h.entries, PER_READER);
        assert!(h.order.len() <= 2 * PER_READER + 1025, "{}", h.order.len());
        drop(h);
        assert!(ids[..ids.len() - PER_READER]
            .iter()
            .all(|id| s.page(&alice, *id, 0, 1).is_none()));
        assert!(ids[ids.len() - PER_READER..]
            .iter()
            .all(|id| s.page(&alice, *id, 0, 1).is_some()));
    }
}
