//! The follow graph of the embedded store: edge tables in both directions and
//! maintained counts, written through the same group-commit writer as the
//! content, with `Followed`/`Unfollowed` queued in the outbox; mutes and
//! blocks are in [`crate::relations`].

use crate::store::{edges_of, stored_ids, EmbeddedStore};
use crate::tables::*;
use crate::{edge_times, exclusive, groups, lists, mute_ends, notify_since, relations};
use async_trait::async_trait;
use redb::ReadableTable;
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, ListName, UserId};
use socialite_core::ports::{Edges, Groups, HybridMarks, Lists, Mutes};
use socialite_domain::graph::relations::{FollowOption, Relation, Relations};

type EdgeTable = redb::TableDefinition<'static, (&'static str, &'static str), ()>;

impl EmbeddedStore {
    /// One page of a pair table's second ids (users) for the key `first`
    /// (a user, or a group), after `after`.
    async fn edge_page(
        &self,
        table: EdgeTable,
        first: &str,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let (first, after) = (first.to_owned(), after.cloned());
        let ids = self
            .read_blocking(move |txn| {
                let t = txn.open_table(table).store()?;
                edges_of(&t, &first, after.as_ref().map(|a| a.as_str()), limit)
            })
            .await?;
        Ok(stored_ids(ids))
    }
}

#[async_trait]
impl Edges for EmbeddedStore {
    /// Point reads for a few candidates; past that, one scan of the user's
    /// followees (a user follows far fewer accounts than there may be
    /// candidates) filtered by them.
    async fn following_among(&self, user: &UserId, candidates: &[UserId]) -> Result<Vec<UserId>> {
        const POINT_READS: usize = 32;
        self.read(|txn| {
            let table = txn.open_table(FOLLOWING).store()?;
            if candidates.len() <= POINT_READS {
                let mut out = Vec::new();
                for c in candidates {
                    if table.get((user.as_str(), c.as_str())).store()?.is_some() {
                        out.push(c.clone());
                    }
                }
                return Ok(out);
            }
            let wanted: std::collections::HashSet<&str> =
                candidates.iter().map(UserId::as_str).collect();
            let followees = edges_of(&table, user.as_str(), None, usize::MAX)?;
            Ok(followees
                .into_iter()
                .filter(|f| wanted.contains(f.as_str()))
                .map(UserId::from_stored)
                .collect())
        })
    }

    async fn followers(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page(FOLLOWERS, user.as_str(), after, limit).await
    }

    async fn following(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page(FOLLOWING, user.as_str(), after, limit).await
    }

    async fn followers_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        self.read(|txn| {
            let t = txn.open_table(FOLLOWERS_BY_TIME).store()?;
            edge_times::page(&t, user.as_str(), after, limit)
        })
    }

    async fn following_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        self.read(|txn| {
            let t = txn.open_table(FOLLOWING_BY_TIME).store()?;
            edge_times::page(&t, user.as_str(), after, limit)
        })
    }

    async fn edge(&self, user: &UserId, target: &UserId) -> Result<Option<Vec<ListName>>> {
        let (u, t) = (user.as_str(), target.as_str());
        self.read(|txn| {
            let table = txn.open_table(FOLLOWING).store()?;
            if table.get((u, t)).store()?.is_none() {
                return Ok(None);
            }
            let lists = txn.open_table(EDGE_LISTS).store()?;
            Ok(Some(lists::edge_lists(&lists, u, t)?))
        })
    }

    async fn followers_of(&self, users: &[UserId]) -> Result<Vec<Vec<UserId>>> {
        let users = users.to_vec();
        self.read_blocking(move |txn| {
            let table = txn.open_table(FOLLOWERS).store()?;
            users
                .iter()
                .map(|u| edges_of(&table, u.as_str(), None, usize::MAX).map(stored_ids))
                .collect()
        })
        .await
    }
}

#[async_trait]
impl Lists for EmbeddedStore {
    async fn exclusive_lists(&self, user: &UserId) -> Result<Vec<ListName>> {
        self.read(|txn| exclusive::of(&txn.open_table(EXCLUSIVE_LISTS).store()?, user.as_str()))
    }

    async fn lists(&self, user: &UserId) -> Result<Vec<(ListName, u64)>> {
        self.read(|txn| lists::user_lists(&txn.open_table(USER_LISTS).store()?, user.as_str()))
    }

    async fn list_members(
        &self,
        user: &UserId,
        list: &ListName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let (u, l, after) = (user.clone(), list.clone(), after.cloned());
        self.read_blocking(move |txn| {
            let table = txn.open_table(LIST_MEMBERS).store()?;
            let (u, l) = (u.as_str(), l.as_str());
            let from = after.as_ref().map_or("", |a| a.as_str());
            let mut out = Vec::new();
            for item in table.range((u, l, from)..).store()? {
                let (k, _) = item.store()?;
                let (ku, kl, member) = k.value();
                if ku != u || kl != l || out.len() >= limit {
                    break;
                }
                if after.as_ref().is_some_and(|a| a.as_str() == member) {
                    continue;
                }
                out.push(UserId::from_stored(member.to_owned()));
            }
            Ok(out)
        })
        .await
    }

    async fn listed_by(&self, users: &[UserId]) -> Result<Vec<Vec<(UserId, ListName)>>> {
        let users = users.to_vec();
        self.read_blocking(move |txn| {
            let table = txn.open_table(LISTED).store()?;
            users
                .iter()
                .map(|u| lists::listed_by(&table, u.as_str()))
                .collect()
        })
        .await
    }
}

#[async_trait]
impl Groups for EmbeddedStore {
    async fn group_size(&self, group: &GroupName) -> Result<u64> {
        self.read(|txn| {
            let sizes = txn.open_table(GROUP_SIZES).store()?;
            Ok(sizes.get(group.as_str()).store()?.map_or(0, |v| v.value()))
        })
    }

    async fn group_members(
        &self,
        group: &GroupName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page(GROUP_MEMBERS, group.as_str(), after, limit)
            .await
    }

    async fn groups_of(&self, users: &[UserId]) -> Result<Vec<Vec<GroupName>>> {
        self.read(|txn| {
            let table = txn.open_table(USER_GROUPS).store()?;
            users
                .iter()
                .map(|u| groups::groups_of(&table, u.as_str()))
                .collect()
        })
    }
}

#[async_trait]
impl Mutes for EmbeddedStore {
    async fn relations(
        &self,
        user: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let t = txn.open_table(RELATIONS).store()?;
            relations::page(&t, user.as_str(), relation, after, limit)
        })
    }

    async fn related(
        &self,
        target: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let t = txn.open_table(RELATED).store()?;
            relations::page(&t, target.as_str(), relation, after, limit)
        })
    }

    /// One read transaction for the three lists (read with every timeline
    /// page).
    async fn relations_of(&self, user: &UserId) -> Result<Relations> {
        self.read(|txn| {
            let (kept, kept_to) = (
                txn.open_table(RELATIONS).store()?,
                txn.open_table(RELATED).store()?,
            );
            let all = usize::MAX;
            let u = user.as_str();
            Ok(Relations {
                muted: relations::page(&kept, u, Relation::Mute, None, all)?,
                blocked: relations::page(&kept, u, Relation::Block, None, all)?,
                blocked_by: relations::page(&kept_to, u, Relation::Block, None, all)?,
                reposts_off: relations::page(
                    &kept,
                    u,
                    Relation::Option(FollowOption::HideReposts),
                    None,
                    all,
                )?,
                replies_on: relations::page(
                    &kept,
                    u,
                    Relation::Option(FollowOption::AllReplies),
                    None,
                    all,
                )?,
            })
        })
    }

    async fn related_to_each(
        &self,
        users: &[UserId],
        relation: Relation,
    ) -> Result<Vec<Vec<UserId>>> {
        let users = users.to_vec();
        self.read_blocking(move |txn| {
            let table = txn.open_table(RELATED).store()?;
            users
                .iter()
                .map(|u| relations::page(&table, u.as_str(), relation, None, usize::MAX))
                .collect()
        })
        .await
    }

    async fn subscriptions(&self, user: &UserId) -> Result<Vec<(UserId, u64)>> {
        self.read(|txn| notify_since::subscriptions(txn, user.as_str()))
    }

    async fn mute_end(&self, user: &UserId, target: &UserId) -> Result<Option<u64>> {
        self.read(|txn| {
            let t = txn.open_table(MUTE_ENDS).store()?;
            time_of_pair(&t, user.as_str(), target.as_str())
        })
    }

    async fn mutes_due(&self, now_ms: u64, limit: usize) -> Result<Vec<(UserId, UserId)>> {
        self.read(|txn| mute_ends::due(&txn.open_table(MUTES_DUE).store()?, now_ms, limit))
    }

    async fn has_relation(
        &self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool> {
        self.read(|txn| {
            let t = txn.open_table(RELATIONS).store()?;
            let key = (user.as_str(), relation.code(), target.as_str());
            Ok(t.get(key).store()?.is_some())
        })
    }
}

#[async_trait]
impl HybridMarks for EmbeddedStore {
    async fn hybrid_authors(&self) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let table = txn.open_table(HYBRID).store()?;
            let mut out = Vec::new();
            for item in table.iter().store()? {
                let (k, _) = item.store()?;
                out.push(UserId::from_stored(k.value().to_owned()));
            }
            Ok(out)
        })
    }

    async fn set_hybrid(&self, author: &UserId, on: bool) -> Result<()> {
        let author = author.clone();
        self.writer
            .write(move |ctx| {
                let mut table = ctx.txn.open_table(HYBRID).store()?;
                match on {
                    true => table.insert(author.as_str(), ()).store()?,
                    false => table.remove(author.as_str()).store()?,
                };
                Ok(())
            })
            .await
    }
}
