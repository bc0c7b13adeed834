//! Follower counts without a hot spot. Every follow of a popular account
//! incremented one field of its `users` document in a transaction, so
//! concurrent follows conflicted there and retried. The count now lives in
//! [`SHARDS`] documents of `counts`, `{_id: "USER#k", n}`, and a follow moves
//! the shard its follower hashes to: follows by different followers seldom
//! touch the same document, and every change is still in the transaction
//! that adds or removes the edge, so the sum is exact. A read sums the
//! shards (one `_id $in` query on the primary index) and adds the `users`
//! document's own `followers`, which edges made before the shards count.

use crate::db::{db_err, TxnError};
use crate::store::{get_i64, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::{ClientSession, Collection};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::ports::Users;

/// Counter documents per account.
pub(crate) const SHARDS: u64 = 16;

/// The shard a follower's follows count in (FNV-1a of the id).
fn shard_of(follower: &str) -> u64 {
    socialite_core::ids::spread(follower, SHARDS)
}

fn shard_id(user: &str, follower: &str) -> String {
    format!("{user}#{}", shard_of(follower))
}

/// Every shard of `user`'s count.
fn shard_ids(user: &str) -> Vec<String> {
    (0..SHARDS).map(|k| format!("{user}#{k}")).collect()
}

impl MongoStore {
    /// How many accounts `user` follows, as their record counts them.
    pub(crate) async fn following_count(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<u64, TxnError> {
        let found = self
            .db
            .users
            .find_one(doc! { "_id": user })
            .projection(doc! { "_id": 0, "following": 1 })
            .session(&mut *s)
            .await?;
        Ok(found.map_or(0, |d| get_i64(&d, "following")).max(0) as u64)
    }

    /// Moves the counts of these edges `(follower, followee, step)`:
    /// each follower's `following` on their record, each followee's
    /// follower count in the shard of the follower; one command for each
    /// side, however many edges (a deletion's page). A shard may go below
    /// zero where the edge was counted on the `users` document before the
    /// shards: the sum stays exact.
    pub(crate) async fn move_follow_counts(
        &self,
        s: &mut ClientSession,
        edges: &[(&str, &str, i64)],
    ) -> Result<(), TxnError> {
        use std::collections::BTreeMap;
        if edges.is_empty() {
            return Ok(());
        }
        let (mut following, mut shards) = (BTreeMap::new(), BTreeMap::new());
        for &(follower, followee, step) in edges {
            *following.entry(follower).or_insert(0_i64) += step;
            *shards.entry(shard_id(followee, follower)).or_insert(0_i64) += step;
        }
        let records: Vec<Document> = following
            .into_iter()
            .map(|(u, n)| doc! { "q": { "_id": u }, "u": { "$inc": { "following": n } } })
            .collect();
        let counts: Vec<Document> = shards
            .into_iter()
            .map(|(id, n)| doc! { "q": { "_id": id }, "u": { "$inc": { "n": n } }, "upsert": true })
            .collect();
        for (collection, updates) in [(crate::db::USERS, records), (crate::db::COUNTS, counts)] {
            let command = doc! { "update": collection, "updates": updates, "ordered": true };
            let run = self.db.database.run_command(command);
            run.session(&mut *s).await?;
        }
        Ok(())
    }

    /// Forgets a deleted user's count.
    pub(crate) async fn delete_follower_count(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        self.db
            .counts
            .delete_many(doc! { "_id": { "$in": shard_ids(user) } })
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// A follower count: the `users` document's and the shards'.
    pub(crate) async fn with_shards(&self, base: u64, id: &UserId) -> Result<u64> {
        let shards = self.follower_shards(id.as_str()).await?;
        Ok((base as i64 + shards).max(0) as u64)
    }

    /// The accounts with at least `at_least` followers, most followed
    /// first. A count is the sum of [`SHARDS`] + 1 terms (the `users`
    /// document's own and the shards), so one of them is at least that
    /// share of it: the accounts with such a term, found on the `n` and
    /// `followers` indexes, are the candidates, and their counts are
    /// summed exactly.
    pub(crate) async fn most_followed_among_counts(
        &self,
        at_least: u64,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        let floor = at_least.max(1).div_ceil(SHARDS + 1) as i64;
        let shards = string_ids(&self.db.counts, doc! { "n": { "$gte": floor } }).await?;
        let mut candidates: Vec<String> = shards
            .iter()
            .filter_map(|id| id.rsplit_once('#').map(|(user, _)| user.to_owned()))
            .collect();
        let own = doc! { "followers": { "$gte": floor }, "deleting": { "$ne": true } };
        candidates.extend(string_ids(&self.db.users, own).await?);
        candidates.sort_unstable();
        candidates.dedup();
        let mut found = Vec::new();
        for id in candidates {
            let Ok(id) = UserId::parse(&id) else { continue };
            let Some(user) = Users::get_user(self, &id).await? else {
                continue; // gone, or being deleted
            };
            if user.followers >= at_least {
                found.push((id, user.followers));
            }
        }
        found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found.truncate(limit);
        Ok(found)
    }

    /// What `user`'s shards add to the count on their `users` document.
    pub(crate) async fn follower_shards(&self, user: &str) -> Result<i64> {
        let docs: Vec<Document> = self
            .db
            .counts
            .find(doc! { "_id": { "$in": shard_ids(user) } })
            .await
            .map_err(db_err("reading a follower count"))?
            .try_collect()
            .await
            .map_err(db_err("reading a follower count"))?;
        Ok(docs.iter().map(|d| get_i64(d, "n")).sum())
    }
}

/// The `_id`s of the documents of `collection` that match `filter`.
async fn string_ids(collection: &Collection<Document>, filter: Document) -> Result<Vec<String>> {
    let what = "finding the most followed accounts";
    let found: Vec<Document> = collection
        .find(filter)
        .projection(doc! { "_id": 1 })
        .await
        .map_err(db_err(what))?
        .try_collect()
        .await
        .map_err(db_err(what))?;
    Ok(found
        .iter()
        .filter_map(|d| d.get_str("_id").ok())
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn followers_spread_over_the_shards() {
        let mut used = std::collections::HashSet::new();
        for i in 0..200 {
            used.insert(shard_of(&format!("u{i}")));
        }
        assert_eq!(used.len() as u64, SHARDS);
        assert_eq!(shard_id("star", "fan"), shard_id("star", "fan"));
    }
}
