//! One stored timeline of the toy: a map of entries by post id, capped at
//! the store's capacity, kept by the rules of `socialite_domain::feed::accept`
//! (which entries it takes, what it covers, what a warming cache leaves out
//! of its merge, what a page serves). The toy decides none of them.

use socialite_core::ids::{PostId, UserId};
use socialite_core::model::Entry;
use socialite_domain::feed::accept::{
    capped_coverage, fill_entries, lacking, takes, Coverage, PageWindow, WarmingMemory,
};
use std::collections::BTreeMap;

pub(super) struct Cache {
    /// Entries by post id: the map keeps them in order and each post once,
    /// and the oldest is the first to go when the cap is passed.
    entries: BTreeMap<PostId, Entry>,
    /// The floor that removals and raises set. The cap sets one of its own
    /// while the map is full ([`capped_coverage`]).
    sealed: Coverage,
    /// Present until the activating merge fills the cache.
    warming: Option<WarmingMemory>,
    /// When the cache was last read (ms), for expiry.
    pub(super) read_at: u64,
    /// The store's clock at the last change: versions are never repeated.
    pub(super) version: u64,
}

impl Cache {
    /// A cache waiting for its merge. It covers everything meanwhile, so
    /// that deliveries racing the merge are kept.
    pub(super) fn warming(now_ms: u64) -> Cache {
        Cache {
            entries: BTreeMap::new(),
            sealed: Coverage::All,
            warming: Some(WarmingMemory::default()),
            read_at: now_ms,
            version: 0,
        }
    }

    pub(super) fn is_ready(&self) -> bool {
        self.warming.is_none()
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub(super) fn coverage(&self, cap: usize) -> Coverage {
        let oldest = self.entries.keys().next().copied();
        capped_coverage(self.sealed, self.entries.len(), oldest, cap)
    }

    /// Stores the entry unless it is held or below the floor; past the cap
    /// the oldest goes (the full map then covers from its new oldest).
    pub(super) fn insert(&mut self, entry: Entry, cap: usize) -> bool {
        if !takes(self.coverage(cap), entry.post) || self.entries.contains_key(&entry.post) {
            return false;
        }
        self.entries.insert(entry.post, entry);
        if self.entries.len() > cap {
            self.entries.pop_first();
        }
        true
    }

    /// Removes the entries `keep` refuses. The floor the cap implied is
    /// sealed first: a map no longer full would otherwise claim the posts
    /// the cap dropped.
    fn remove(&mut self, cap: usize, keep: impl Fn(&Entry) -> bool) {
        self.sealed = self.coverage(cap);
        self.entries.retain(|_, e| keep(e));
    }

    /// Narrows the coverage to `to`, dropping what falls below it.
    fn raise(&mut self, to: Coverage, cap: usize) {
        let floor = self.coverage(cap).narrowed_to(to);
        self.remove(cap, |e| floor.covers(e.post));
        self.sealed = floor;
    }

    /// Completes a warming cache with a merge exact over `coverage`; a
    /// ready cache ignores it.
    pub(super) fn fill(&mut self, merged: Vec<Entry>, coverage: Coverage, cap: usize) {
        let Some(memory) = self.warming.take() else {
            return;
        };
        self.raise(coverage, cap);
        for e in fill_entries(merged, &memory, |p| self.entries.contains_key(&p)) {
            self.insert(e, cap);
        }
    }

    /// A followed author's posts, exact over `coverage`.
    pub(super) fn backfill(
        &mut self,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
        cap: usize,
    ) {
        if let Some(w) = self.warming.as_mut() {
            w.restore(author);
        }
        self.raise(coverage, cap);
        for e in lacking(entries, |p| self.entries.contains_key(&p)) {
            self.insert(e, cap);
        }
    }

    pub(super) fn purge(&mut self, author: &UserId, cap: usize) {
        if let Some(w) = self.warming.as_mut() {
            w.purge(author);
        }
        self.remove(cap, |e| e.author != *author);
    }

    pub(super) fn retract(&mut self, post: PostId, cap: usize) {
        if let Some(w) = self.warming.as_mut() {
            w.retract(post);
        }
        self.remove(cap, |e| e.post != post);
    }

    /// The entries a page serves: below `before`, newest first.
    pub(super) fn page(&self, before: Option<PostId>, limit: usize, cap: usize) -> Vec<Entry> {
        let mut window = PageWindow::new(self.coverage(cap), before, limit);
        self.entries
            .values()
            .rev()
            .filter(|e| window.admit(e.post))
            .cloned()
            .collect()
    }
}
