//! Groups on MongoDB: one `group_members` document per membership,
//! `{group, user}`, unique on `{group, user}` (a group's members in id
//! order, covered) and on `{user, group}` (a user's groups), and each
//! group's size on a `groups` document, `{_id: group, members}`, kept in the
//! transaction that changes a membership with its event.

use crate::db::{db_err, TxnError, IN_CHUNK};
use crate::store::{get_i64, get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::checks::Membership;
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, UserId};
use std::collections::HashMap;

impl MongoStore {
    /// Writes a join or a leave that changes the membership, inside a
    /// transaction: the member document and the group's size (a group left
    /// with no member is gone).
    pub(crate) async fn put_membership(
        &self,
        s: &mut ClientSession,
        change: &Membership,
    ) -> Result<(), TxnError> {
        let (g, u) = (change.group.as_str(), change.user.as_str());
        let member = doc! { "group": g, "user": u };
        let members = &self.db.group_members;
        match change.join {
            true => members
                .insert_one(member)
                .session(&mut *s)
                .await
                .map(drop)?,
            false => members
                .delete_one(member)
                .session(&mut *s)
                .await
                .map(drop)?,
        }
        let step: i64 = if change.join { 1 } else { -1 };
        self.db
            .groups
            .update_one(doc! { "_id": g }, doc! { "$inc": { "members": step } })
            .upsert(true)
            .session(&mut *s)
            .await?;
        self.db
            .groups
            .delete_one(doc! { "_id": g, "members": { "$lte": 0_i64 } })
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// The groups `user` is in, inside a transaction.
    pub(crate) async fn groups_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<Vec<GroupName>, TxnError> {
        let mut cursor = self
            .db
            .group_members
            .find(doc! { "user": user })
            .projection(doc! { "_id": 0, "group": 1 })
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            out.push(GroupName::from_stored(get_str(&d?, "group")?));
        }
        Ok(out)
    }

    pub(crate) async fn group_size_of(&self, group: &GroupName) -> Result<u64> {
        let found = self
            .db
            .groups
            .find_one(doc! { "_id": group.as_str() })
            .await
            .map_err(db_err("reading a group"))?;
        Ok(found.map_or(0, |d| get_i64(&d, "members").max(0) as u64))
    }

    pub(crate) async fn group_page(
        &self,
        group: &GroupName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let mut filter = doc! { "group": group.as_str() };
        if let Some(a) = after {
            filter.insert("user", doc! { "$gt": a.as_str() });
        }
        let docs: Vec<Document> = self
            .db
            .group_members
            .find(filter)
            .projection(doc! { "_id": 0, "user": 1 })
            .sort(doc! { "group": 1, "user": 1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err("reading group members"))?
            .try_collect()
            .await
            .map_err(db_err("reading group members"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "user")?.to_owned())))
            .collect()
    }

    pub(crate) async fn groups_of_users(&self, users: &[UserId]) -> Result<Vec<Vec<GroupName>>> {
        let mut by_user: HashMap<&str, Vec<GroupName>> =
            users.iter().map(|u| (u.as_str(), Vec::new())).collect();
        for chunk in users.chunks(IN_CHUNK) {
            let ids: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let mut cursor = self
                .db
                .group_members
                .find(doc! { "user": { "$in": ids } })
                .projection(doc! { "_id": 0, "user": 1, "group": 1 })
                .await
                .map_err(db_err("reading groups"))?;
            while let Some(d) = cursor.try_next().await.map_err(db_err("reading groups"))? {
                if let Some(list) = by_user.get_mut(get_str(&d, "user")?) {
                    list.push(GroupName::from_stored(get_str(&d, "group")?));
                }
            }
        }
        Ok(users
            .iter()
            .map(|u| by_user.remove(u.as_str()).unwrap_or_default())
            .collect())
    }
}
