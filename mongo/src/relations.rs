//! Mutes and blocks on MongoDB: one document per relation in `relations`,
//! `{u, k, t}` (the user who keeps it, the relation's code, its target),
//! with a unique `{u, k, t}` index for a user's relations in id order and a
//! `{t, k, u}` index for who keeps one to a user. Written in one
//! transaction with the unfollows and the event the rule decides
//! (`socialite_domain::graph::relations`).

use crate::db::{db_err, TxnError, IN_CHUNK};
use crate::store::{get_i64, get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_domain::graph::relations::{FollowOption, Relation, Relations};
use std::collections::HashMap;

/// A relation's kind as stored.
pub(crate) fn code(r: Relation) -> i32 {
    i32::from(r.code())
}

impl MongoStore {
    /// Up to `limit` of the relations the user keeps.
    pub(crate) async fn relations_kept(
        &self,
        s: &mut ClientSession,
        user: &str,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>, TxnError> {
        let mut cursor = self
            .db
            .relations
            .find(doc! { "u": user })
            .projection(doc! { "_id": 0, "k": 1, "t": 1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            let d = d?;
            if let Some(r) = Relation::from_code(get_i64(&d, "k") as u8) {
                out.push((r, UserId::from_stored(get_str(&d, "t")?.to_owned())));
            }
        }
        Ok(out)
    }

    /// Whether either user blocks the other, in the transaction.
    pub(crate) async fn blocked_either_way(
        &self,
        s: &mut ClientSession,
        a: &str,
        b: &str,
    ) -> Result<bool, TxnError> {
        let k = code(Relation::Block);
        let filter = doc! { "k": k, "$or": [ { "u": a, "t": b }, { "u": b, "t": a } ] };
        let found = self
            .db
            .relations
            .find_one(filter)
            .projection(doc! { "_id": 1 })
            .session(&mut *s)
            .await?;
        Ok(found.is_some())
    }

    /// One page of `by`'s relations of a kind, in id order of `other`'s
    /// field: (`u`, `t`) for the relations a user keeps, (`t`, `u`) for
    /// those kept to them.
    pub(crate) async fn relation_page(
        &self,
        (by, other): (&str, &str),
        user: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let mut filter = doc! { by: user.as_str(), "k": code(relation) };
        if let Some(a) = after {
            filter.insert(other, doc! { "$gt": a.as_str() });
        }
        let docs: Vec<Document> = self
            .db
            .relations
            .find(filter)
            .projection(doc! { "_id": 0, other: 1 })
            .sort(doc! { by: 1, "k": 1, other: 1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err("reading relations"))?
            .try_collect()
            .await
            .map_err(db_err("reading relations"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, other)?.to_owned())))
            .collect()
    }

    /// Whom the user mutes and blocks, who blocks them, and the follow
    /// options that change what they read: one query.
    pub(crate) async fn relations_touching(&self, user: &UserId) -> Result<Relations> {
        let (v, block) = (user.as_str(), code(Relation::Block));
        let filter = doc! { "$or": [ { "u": v }, { "t": v, "k": block } ] };
        let docs: Vec<Document> = self
            .db
            .relations
            .find(filter)
            .projection(doc! { "_id": 0 })
            .await
            .map_err(db_err("reading relations"))?
            .try_collect()
            .await
            .map_err(db_err("reading relations"))?;
        let mut out = Relations::default();
        for d in &docs {
            let (u, t) = (get_str(d, "u")?, get_str(d, "t")?);
            let relation = Relation::from_code(get_i64(d, "k") as u8);
            match (u == v, relation) {
                (true, Some(Relation::Mute)) => out.muted.push(UserId::from_stored(t.to_owned())),
                (true, Some(Relation::Block)) => {
                    out.blocked.push(UserId::from_stored(t.to_owned()))
                }
                (false, Some(Relation::Block)) => {
                    out.blocked_by.push(UserId::from_stored(u.to_owned()))
                }
                (true, Some(Relation::Option(FollowOption::HideReposts))) => {
                    out.reposts_off.push(UserId::from_stored(t.to_owned()))
                }
                (true, Some(Relation::Option(FollowOption::AllReplies))) => {
                    out.replies_on.push(UserId::from_stored(t.to_owned()))
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// For each of `users`, who keeps `relation` to them, chunked `$in`
    /// queries.
    pub(crate) async fn related_of_each(
        &self,
        users: &[UserId],
        relation: Relation,
    ) -> Result<Vec<Vec<UserId>>> {
        let mut by_user: HashMap<&str, Vec<UserId>> =
            users.iter().map(|u| (u.as_str(), Vec::new())).collect();
        for chunk in users.chunks(IN_CHUNK) {
            let ids: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let filter = doc! { "t": { "$in": ids }, "k": code(relation) };
            let mut cursor = self
                .db
                .relations
                .find(filter)
                .projection(doc! { "_id": 0, "t": 1, "u": 1 })
                .await
                .map_err(db_err("reading relations"))?;
            while let Some(d) = cursor
                .try_next()
                .await
                .map_err(db_err("reading relations"))?
            {
                if let Some(list) = by_user.get_mut(get_str(&d, "t")?) {
                    list.push(UserId::from_stored(get_str(&d, "u")?.to_owned()));
                }
            }
        }
        Ok(users
            .iter()
            .map(|u| by_user.remove(u.as_str()).unwrap_or_default())
            .collect())
    }
}
