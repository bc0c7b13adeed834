//! What the follower index holds, bounded by the targets it keeps. A network
//! of a million users posting by popularity made the worker hold the lists of
//! every author it had delivered, about a gigabyte after 34,000 posts. The
//! index keeps two generations instead: authors found or loaded go into the
//! young one, an author found in the old one moves to the young one, and when
//! the young one holds half the budget it becomes the old one and the old
//! one is dropped. So the lists of authors who posted recently stay, and at
//! most the budget (and one list more) is held.
//!
//! Dropping an author is always safe: the index only spares a scan of the
//! graph store, and the next post of a dropped author loads their list again
//! as the first one did.

use super::Known;
use crate::ids::UserId;
use crate::metrics::metrics;
use rustc_hash::FxHashMap;

type Index = FxHashMap<UserId, Known>;

/// The targets an author's entry counts for: their timelines, their muters,
/// and one for the entry itself.
fn weight(k: &Known) -> usize {
    k.timelines.len() + k.muters.len() + 1
}

pub(super) struct Held {
    young: Index,
    old: Index,
    /// Targets in each generation, by [`weight`].
    young_weight: usize,
    old_weight: usize,
    /// At most this many targets in both generations (and one author's more).
    budget: usize,
    /// Targets and authors as last added to the process's gauges: each
    /// index moves them by its own changes.
    published: (i64, i64),
}

impl Held {
    pub(super) fn new(budget: usize) -> Held {
        Held {
            young: Index::default(),
            old: Index::default(),
            young_weight: 0,
            old_weight: 0,
            budget: budget.max(2),
            published: (0, 0),
        }
    }

    /// The author's entry, kept young by being asked for.
    pub(super) fn get(&mut self, author: &UserId) -> Option<&Known> {
        self.promote(author);
        self.young.get(author)
    }

    pub(super) fn contains(&self, author: &UserId) -> bool {
        self.young.contains_key(author) || self.old.contains_key(author)
    }

    /// Changes the author's entry, if it is held, and counts its new weight.
    pub(super) fn change<R>(
        &mut self,
        author: &UserId,
        f: impl FnOnce(&mut Known) -> R,
    ) -> Option<R> {
        self.promote(author);
        let known = self.young.get_mut(author)?;
        let before = weight(known);
        let out = f(known);
        self.young_weight = self.young_weight + weight(known) - before;
        self.publish();
        Some(out)
    }

    /// Holds `loaded` for the author unless a whole list is held already
    /// (which follow events kept in step since); returns what is held.
    pub(super) fn put(&mut self, author: UserId, loaded: Known) -> &Known {
        // Rotated first, so that the author's entry, if held, is in the
        // young generation that `loaded` replaces it in.
        self.rotate_if_full();
        self.promote(&author);
        if !self.young.get(&author).is_some_and(|held| held.whole) {
            self.young_weight += weight(&loaded);
            if let Some(gone) = self.young.insert(author.clone(), loaded) {
                self.young_weight -= weight(&gone);
            }
            self.publish();
        }
        &self.young[&author]
    }

    /// Holds `loaded` for the author if nothing is held for them.
    pub(super) fn put_absent(&mut self, author: UserId, loaded: Known) {
        if !self.contains(&author) {
            self.rotate_if_full();
            self.young_weight += weight(&loaded);
            self.young.insert(author, loaded);
            self.publish();
        }
    }

    pub(super) fn remove(&mut self, author: &UserId) {
        if let Some(k) = self.young.remove(author) {
            self.young_weight -= weight(&k);
        }
        if let Some(k) = self.old.remove(author) {
            self.old_weight -= weight(&k);
        }
        self.publish();
    }

    pub(super) fn clear(&mut self) {
        (self.young, self.old) = Default::default();
        (self.young_weight, self.old_weight) = (0, 0);
        self.publish();
    }

    /// Moves the author's entry from the old generation to the young one.
    fn promote(&mut self, author: &UserId) {
        if self.old.is_empty() || self.young.contains_key(author) {
            return;
        }
        if let Some(known) = self.old.remove(author) {
            let w = weight(&known);
            self.old_weight -= w;
            self.rotate_if_full();
            self.young_weight += w;
            self.young.insert(author.clone(), known);
        }
    }

    /// Before an entry goes into a young generation holding half the budget:
    /// that generation becomes the old one, and the old one is dropped.
    fn rotate_if_full(&mut self) {
        if self.young_weight < self.budget / 2 {
            return;
        }
        let dropped = std::mem::take(&mut self.old);
        self.old = std::mem::take(&mut self.young);
        self.old_weight = std::mem::replace(&mut self.young_weight, 0);
        metrics()
            .follower_index
            .evicted
            .inc_by(dropped.len() as u64);
    }

    fn publish(&mut self) {
        let now = (
            (self.young_weight + self.old_weight) as i64,
            (self.young.len() + self.old.len()) as i64,
        );
        let m = &metrics().follower_index;
        m.targets.inc_by(now.0 - self.published.0);
        m.authors.inc_by(now.1 - self.published.1);
        self.published = now;
    }

    #[cfg(test)]
    pub(super) fn weight(&self) -> usize {
        self.young_weight + self.old_weight
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let m = &metrics().follower_index;
        m.targets.dec_by(self.published.0);
        m.authors.dec_by(self.published.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    /// An author with `n` followers: a weight of `n + 1`.
    fn followed_by(n: usize) -> Known {
        let followers = (0..n).map(|i| user(&format!("f{i}"))).collect();
        super::super::known(followers, Vec::new(), Vec::new(), Vec::new())
    }

    #[test]
    fn stays_within_its_budget_and_keeps_who_was_asked_for() {
        let mut held = Held::new(40);
        held.put(user("kept"), followed_by(4));
        for i in 0..100 {
            held.put_absent(user(&format!("a{i}")), followed_by(4));
            // Asked for with every other post: never dropped.
            assert!(held.get(&user("kept")).is_some(), "after {i}");
            assert!(held.weight() <= 40 + 5, "{} after {i}", held.weight());
        }
        assert!(
            !held.contains(&user("a0")),
            "the first authors were dropped"
        );
        assert!(held.contains(&user("a99")));
        // A change counts the entry's new weight.
        let before = held.weight();
        held.change(&user("a99"), |k| k.muters.insert(user("m")));
        assert_eq!(held.weight(), before + 1);
        held.remove(&user("a99"));
        assert_eq!(held.weight(), before - 5);
        held.clear();
        assert_eq!((held.weight(), held.contains(&user("kept"))), (0, false));
    }

    #[test]
    fn a_whole_list_is_kept_over_a_count_and_a_count_is_replaced() {
        let mut held = Held::new(1_000);
        let mut counted = followed_by(0);
        counted.whole = false;
        held.put_absent(user("a"), counted);
        let whole = held.put(user("a"), followed_by(3));
        assert!(whole.whole);
        // Loaded again while whole: what is held stays.
        assert_eq!(held.put(user("a"), followed_by(7)).timelines.len(), 3);
        assert_eq!(held.weight(), 4);
    }
}
