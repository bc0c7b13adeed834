//! Author ids interned as 4-byte numbers, so that a stored timeline entry is
//! a post id and a number (16 bytes) rather than a post id and a shared
//! string. Names are never forgotten: the table grows with the number of
//! distinct authors ever stored, which the user count bounds.

use rustc_hash::FxHashMap;
use socialite_core::ids::UserId;
use std::sync::RwLock;

#[derive(Default)]
pub struct Authors {
    table: RwLock<(FxHashMap<UserId, u32>, Vec<UserId>)>,
}

impl Authors {
    pub fn new() -> Authors {
        Authors::default()
    }

    /// The number of `author`, assigning one on first sight.
    pub fn intern(&self, author: &UserId) -> u32 {
        if let Some(n) = self.lookup(author) {
            return n;
        }
        let mut t = self.table.write().unwrap_or_else(|p| p.into_inner());
        if let Some(&n) = t.0.get(author) {
            return n;
        }
        let n = u32::try_from(t.1.len()).expect("fewer than 2^32 authors");
        t.1.push(author.clone());
        t.0.insert(author.clone(), n);
        n
    }

    /// The number of `author`, if it has one.
    pub fn lookup(&self, author: &UserId) -> Option<u32> {
        self.table
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .get(author)
            .copied()
    }

    /// The names of several numbers under one lock (a page's authors).
    pub fn names(&self, ns: impl Iterator<Item = u32>) -> Vec<UserId> {
        let t = self.table.read().unwrap_or_else(|p| p.into_inner());
        ns.map(|n| t.1[n as usize].clone()).collect()
    }

    pub fn name(&self, n: u32) -> UserId {
        self.table.read().unwrap_or_else(|p| p.into_inner()).1[n as usize].clone()
    }
}
