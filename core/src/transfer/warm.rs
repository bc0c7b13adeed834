//! Warming the timelines of the recently active after an import or a
//! move. Timelines are not exported: each user's is built on their first
//! read. For the users most likely to read first, those who posted last,
//! `--warm` builds it ahead, as that read would
//! ([`crate::feed::timeline::activate`]); fanout keeps it from then on.

use crate::error::Result;
use crate::feed::timeline::activate;
use crate::feed::{Feed, Stores};
use crate::ids::{PostId, UserId};
use std::collections::HashMap;

/// Each author's newest post, as records go by.
#[derive(Debug, Default, Clone)]
pub struct Posters(HashMap<UserId, PostId>);

impl Posters {
    pub fn note(&mut self, author: &UserId, post: PostId) {
        let newest = self.0.entry(author.clone()).or_insert(post);
        *newest = (*newest).max(post);
    }

    /// Notes every post of `other` too.
    pub fn merge(&mut self, other: &Posters) {
        for (author, post) in &other.0 {
            self.note(author, *post);
        }
    }

    /// The `n` authors whose newest posts are the newest, newest first.
    pub fn recent(&self, n: usize) -> Vec<UserId> {
        let mut by_time: Vec<(&PostId, &UserId)> = self.0.iter().map(|(u, p)| (p, u)).collect();
        by_time.sort_unstable_by(|a, b| b.cmp(a));
        by_time
            .into_iter()
            .take(n)
            .map(|(_, u)| u.clone())
            .collect()
    }
}

/// Builds the home timelines of `users` where timelines are stored (every
/// model but fanout on read); returns the users whose timelines were
/// built: not those deleted since they posted, whose timelines are not
/// kept.
pub async fn warm(stores: &Stores, users: &[UserId]) -> Result<Vec<UserId>> {
    if !stores.stores_timelines() {
        return Ok(Vec::new());
    }
    let mut built = Vec::with_capacity(users.len());
    for user in users {
        activate(stores, &Feed::Home(user.clone())).await?;
        if stores.content.get_user(user).await?.is_some() {
            built.push(user.clone());
        }
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recent_are_those_who_posted_last() {
        let u = |s: &str| UserId::parse(s).unwrap();
        let mut p = Posters::default();
        p.note(&u("a"), PostId(5));
        p.note(&u("b"), PostId(7));
        p.note(&u("a"), PostId(9));
        p.note(&u("c"), PostId(1));
        assert_eq!(p.recent(2), vec![u("a"), u("b")]);
        assert_eq!(p.recent(10).len(), 3);
    }
}
