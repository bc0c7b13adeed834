//! When a page read from a stored timeline is still exact: what it was read
//! at ([`Stamp`]), for a transport that keeps whole answers. A page depends
//! on its stored timeline, which the timeline store versions itself
//! ([`crate::ports::TimelineStore::version`]), and on what the read pass
//! looks up beside it (the reader's follows, mutes and blocks, reposts,
//! deleted posts and users, suspensions, the hybrid marks and the marked
//! authors' posts), which the process's [`WriteEpoch`] counts. A stamp
//! taken before a page is read and still equal later means nothing the page
//! depends on changed in between.
//!
//! The epoch counts this process's writes only: a transport keeps pages
//! only where the timeline store versions timelines, which a store does
//! only when every write reaches it through this process (the embedded
//! default).

use crate::ids::{TimelineId, UserId};
use std::sync::atomic::{AtomicU64, Ordering};

/// The count of this process's writes that may change what a page shows
/// other than through its stored timeline; and, for what a reader's ranked
/// order keeps between first pages, which readers each write concerns
/// ([`WriteEpoch::of_reader`]).
#[derive(Default)]
pub struct WriteEpoch {
    count: AtomicU64,
    /// When each reader's own writes (a follow, a mute...) last ended.
    readers: UserClock,
    /// When the last write that may concern any reader ended.
    everyone: AtomicU64,
}

impl std::fmt::Debug for WriteEpoch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WriteEpoch").field(&self.now()).finish()
    }
}

impl WriteEpoch {
    pub fn now(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// Called once the write is visible to readers everywhere in this
    /// process (the store and every cache in front of it): a page read
    /// from a stamp taken before then is stale from now on, whoever reads
    /// it.
    pub fn advance(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
        self.everyone
            .fetch_max(self.readers.tick(), Ordering::AcqRel);
    }

    /// Advances the epoch when dropped: held across a write, on every path
    /// out of it. The write may concern any reader.
    pub fn advancing(&self) -> Advance<'_> {
        Advance(self, Vec::new())
    }

    /// [`Self::advancing`] for a write whose effect beyond every page's
    /// stamp is on `readers`' own timelines only (their follows, mutes,
    /// priorities...).
    pub fn advancing_for(&self, readers: Vec<UserId>) -> Advance<'_> {
        Advance(self, readers)
    }

    /// Where the writes that may concern `reader` stand: it moves when one
    /// of theirs ends, or one that may concern any reader. Readers share
    /// slots by hash: a shared slot moves it with no need, never the other
    /// way.
    pub fn of_reader(&self, reader: &UserId) -> u64 {
        let own = self.readers.newest(std::slice::from_ref(reader));
        own.max(self.everyone.load(Ordering::Acquire))
    }
}

/// Advances its epoch when dropped ([`WriteEpoch::advancing`]), for the
/// readers named (none: any reader).
pub struct Advance<'a>(&'a WriteEpoch, Vec<UserId>);

impl Drop for Advance<'_> {
    fn drop(&mut self) {
        let epoch = self.0;
        if self.1.is_empty() {
            return epoch.advance();
        }
        epoch.count.fetch_add(1, Ordering::AcqRel);
        for reader in &self.1 {
            epoch.readers.posted(reader);
        }
    }
}

/// When each user last did something, on a clock of those acts: for the
/// authors marked for hybrid fanout, their posts; for readers, their own
/// writes that change their ranked orders ([`WriteEpoch::of_reader`]).
/// A marked author's post reaches pages at read time, but only the pages
/// of their followers, so it stales those (through
/// [`Stamp::marked`]) rather than every page (through the epoch). A
/// marked author posting five times a second otherwise left no page kept
/// anywhere. Authors share slots by hash: a shared slot makes a page
/// stale with no need, never the other way.
pub struct UserClock {
    clock: AtomicU64,
    slots: Box<[AtomicU64]>,
}

impl Default for UserClock {
    fn default() -> Self {
        UserClock {
            clock: AtomicU64::new(0),
            slots: (0..AUTHOR_SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

const AUTHOR_SLOTS: usize = 4096;

impl UserClock {
    /// Called once the author's post is visible to readers in this process
    /// (or the user's act, once it is).
    pub fn posted(&self, author: &UserId) {
        let at = self.tick();
        self.slot(author).fetch_max(at, Ordering::AcqRel);
    }

    /// Moves the clock: its new time.
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// The clock at the newest post of any of `authors`: it moves when one
    /// of them posts.
    pub fn newest(&self, authors: &[UserId]) -> u64 {
        authors
            .iter()
            .map(|a| self.slot(a).load(Ordering::Acquire))
            .max()
            .unwrap_or(0)
    }

    /// The clock itself: it moves when any marked author posts.
    pub fn now(&self) -> u64 {
        self.clock.load(Ordering::Acquire)
    }

    fn slot(&self, author: &UserId) -> &AtomicU64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        author.hash(&mut h);
        let i = (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % AUTHOR_SLOTS;
        &self.slots[i]
    }
}

/// What a page of a stored timeline was read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub epoch: u64,
    pub timeline: u64,
    /// The [`UserClock`] for the marked authors whose posts the page
    /// merges (0 for a page that merges none).
    pub marked: u64,
}

/// Which page, read at what: a timeline's first page as `viewer` sees it
/// (`None`: its owner, or a whole group timeline read with a server key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAt {
    pub timeline: TimelineId,
    pub viewer: Option<UserId>,
    pub stamp: Stamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_advances_on_every_path_out_of_a_write() {
        let epoch = WriteEpoch::default();
        let start = epoch.now();
        let failing = || -> Result<(), ()> {
            let _write = epoch.advancing();
            Err(())
        };
        assert!(failing().is_err());
        assert_eq!(epoch.now(), start + 1);
        epoch.advance();
        assert_eq!(epoch.now(), start + 2);
    }

    #[test]
    fn a_readers_own_write_moves_their_clock_only_and_any_write_moves_all() {
        let epoch = WriteEpoch::default();
        let (a, b) = (UserId::parse("ann").unwrap(), UserId::parse("bob").unwrap());
        let (of_a, of_b, count) = (epoch.of_reader(&a), epoch.of_reader(&b), epoch.now());
        drop(epoch.advancing_for(vec![a.clone()]));
        assert_eq!(epoch.now(), count + 1, "every page's stamp moves");
        assert!(epoch.of_reader(&a) > of_a);
        assert_eq!(epoch.of_reader(&b), of_b, "another reader's write");
        drop(epoch.advancing());
        assert!(epoch.of_reader(&b) > of_b, "a write for any reader");
    }

    #[test]
    fn an_authors_post_moves_only_the_stamps_of_pages_that_merge_them() {
        let clock = UserClock::default();
        let (a, b) = (UserId::parse("a").unwrap(), UserId::parse("b").unwrap());
        let one = std::slice::from_ref;
        let (of_a, of_b) = (clock.newest(one(&a)), clock.newest(one(&b)));
        clock.posted(&a);
        assert!(clock.newest(one(&a)) > of_a);
        assert_eq!(clock.newest(one(&b)), of_b);
        assert_eq!(clock.newest(&[]), 0);
        let both = clock.newest(&[a.clone(), b.clone()]);
        clock.posted(&b);
        assert!(clock.newest(&[a, b]) > both);
    }
}
