//! A user's deletion on the embedded store, in bounded steps planned by
//! `socialite_core::plan::deletion`: the first write puts the user in
//! `DELETING` (with their lists, which the last step's event names), which
//! every existence check reads as absent and which `pending_deletions`
//! finds after a crash. Here are the deletion's facts and steps only.

use crate::lists;
use crate::store::{edges_of, to_user_ids, user_exists, EmbeddedStore};
use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::{ListName, PostId, UserId};
use socialite_core::plan::deletion::{deletion_step, Side};
use socialite_core::plan::run_ready;
use socialite_core::rules::cascade::DeletionStage;

impl EmbeddedStore {
    pub(crate) async fn begin_deletion_of(&self, id: &UserId) -> Result<bool> {
        let id = id.clone();
        self.writer
            .write(move |ctx| {
                let u = id.as_str();
                if !user_exists(ctx.txn, u)? {
                    return Ok(false);
                }
                let own = lists::user_lists(&ctx.txn.open_table(USER_LISTS).store()?, u)?;
                let own: Vec<ListName> = own.into_iter().map(|(l, _)| l).collect();
                ctx.txn
                    .open_table(DELETING)
                    .store()?
                    .insert(u, lists::encode_lists(&own).as_str())
                    .store()?;
                Ok(true)
            })
            .await
    }

    pub(crate) fn pending_deletion_list(&self) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let table = txn.open_table(DELETING).store()?;
            let mut out = Vec::new();
            for item in table.iter().store()? {
                let (k, _) = item.store()?;
                out.push(UserId::from_stored(k.value().to_owned()));
            }
            Ok(out)
        })
    }

    pub(crate) async fn deletion_step_of(
        &self,
        id: &UserId,
        stage: DeletionStage,
        limit: usize,
    ) -> Result<bool> {
        let user = id.clone();
        let done = self
            .writer
            .write(move |ctx| run_ready(deletion_step(ctx, &user, stage, limit)))
            .await?;
        // Posts removed or rewritten leave the post cache.
        if stage == DeletionStage::Posts {
            self.recent.forget(id);
        }
        for p in done.posts {
            self.posts.remove(p);
        }
        Ok(done.more)
    }
}

/// The lists the user had when their deletion began; `None` if none runs.
pub(crate) fn deleting(txn: &WriteTransaction, user: &str) -> Result<Option<Vec<ListName>>> {
    let table = txn.open_table(DELETING).store()?;
    let found = table.get(user).store()?;
    Ok(found.map(|g| lists::decode_lists(g.value())))
}

/// Up to `limit` of the user's edges on `side`, with their lists.
pub(crate) fn edge_page(
    txn: &WriteTransaction,
    user: &str,
    side: Side,
    limit: usize,
) -> Result<Vec<(UserId, Vec<ListName>)>> {
    let table = match side {
        Side::Followers => FOLLOWERS,
        Side::Following => FOLLOWING,
    };
    let others = to_user_ids(edges_of(
        &txn.open_table(table).store()?,
        user,
        None,
        limit,
    )?)?;
    let filed = txn.open_table(EDGE_LISTS).store()?;
    others
        .into_iter()
        .map(|o| {
            let (f, t) = match side {
                Side::Followers => (o.as_str(), user),
                Side::Following => (user, o.as_str()),
            };
            let lists = lists::edge_lists(&filed, f, t)?;
            Ok((o, lists))
        })
        .collect()
}

/// The first `limit` post ids under `user` in a (user, post id) table:
/// their posts (`AUTHOR_POSTS`) or those mentioning them (`MENTIONS`).
pub(crate) fn first_posts(
    txn: &WriteTransaction,
    table: redb::TableDefinition<'static, (&'static str, u64), ()>,
    user: &str,
    limit: usize,
) -> Result<Vec<PostId>> {
    let table = txn.open_table(table).store()?;
    table
        .range((user, 0)..=(user, u64::MAX))
        .store()?
        .take(limit)
        .map(|r| r.map(|(k, _)| PostId(k.value().1)).store())
        .collect()
}

/// Removes posts of `author`, with their mentions of others.
pub(crate) fn remove_posts(txn: &WriteTransaction, author: &str, ids: &[PostId]) -> Result<()> {
    let mut by_author = txn.open_table(AUTHOR_POSTS).store()?;
    let mut posts = txn.open_table(POSTS).store()?;
    let mut mentions = txn.open_table(MENTIONS).store()?;
    for &PostId(p) in ids {
        by_author.remove((author, p)).store()?;
        let Some(bytes) = posts.remove(p).store()? else {
            continue;
        };
        let record: PostRecord = decode(bytes.value())?;
        drop(bytes);
        for m in &record.mentions {
            mentions.remove((m.as_str(), p)).store()?;
        }
    }
    Ok(())
}

/// These posts no longer mention `user`.
pub(crate) fn unmention(txn: &WriteTransaction, user: &str, ids: &[PostId]) -> Result<()> {
    let mut mentions = txn.open_table(MENTIONS).store()?;
    let mut posts = txn.open_table(POSTS).store()?;
    for &PostId(p) in ids {
        mentions.remove((user, p)).store()?;
        let record = posts.get(p).store()?.map(|b| b.value().to_vec());
        if let Some(bytes) = record {
            let mut r: PostRecord = decode(&bytes)?;
            r.mentions.retain(|m| m != user);
            posts.insert(p, encode(&r).as_slice()).store()?;
        }
    }
    Ok(())
}

/// The user's record, counts and deletion mark.
pub(crate) fn remove_user(txn: &WriteTransaction, user: &str) -> Result<()> {
    txn.open_table(DELETING).store()?.remove(user).store()?;
    txn.open_table(USERS).store()?.remove(user).store()?;
    txn.open_table(COUNTS).store()?.remove(user).store()?;
    Ok(())
}
