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
/// other than through its stored timeline.
#[derive(Debug, Default)]
pub struct WriteEpoch(AtomicU64);

impl WriteEpoch {
    pub fn now(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Called once the write is visible to readers everywhere in this
    /// process (the store and every cache in front of it): a page read
    /// from a stamp taken before then is stale from now on.
    pub fn advance(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// Advances the epoch when dropped: held across a write, on every path
    /// out of it.
    pub fn advancing(&self) -> Advance<'_> {
        Advance(self)
    }
}

/// Advances its epoch when dropped ([`WriteEpoch::advancing`]).
pub struct Advance<'a>(&'a WriteEpoch);

impl Drop for Advance<'_> {
    fn drop(&mut self) {
        self.0.advance();
    }
}

/// What a page of a stored timeline was read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub epoch: u64,
    pub timeline: u64,
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
}
