//! A user's deletion on the embedded store, in bounded steps (see
//! `socialite_core::rules::cascade::DeletionStage`): the first write puts
//! the user in `DELETING` (with their lists, which the last step's event
//! names), which every existence check reads as absent and which
//! `pending_deletions` finds after a crash; each step is one transaction
//! over at most a step's records, with the events they queue.

use crate::store::{add_counts, edges_of, emit, to_user_ids, user_exists, Ctx, EmbeddedStore};
use crate::tables::*;
use crate::{edge_times, groups, lists, relations};
use redb::ReadableTable;
use socialite_core::error::Result;
use socialite_core::ids::{ListName, PostId, UserId};
use socialite_core::rules::cascade::{timeline_dropped, DeletionStage, UserDeletion};
use socialite_core::rules::checks::{EdgeChange, EdgeOp, Membership};

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
        let (more, evicted) = self
            .writer
            .write(move |ctx| {
                let id = user;
                if ctx
                    .txn
                    .open_table(DELETING)
                    .store()?
                    .get(id.as_str())
                    .store()?
                    .is_none()
                {
                    return Ok((false, Vec::new())); // finished already
                }
                step(ctx, &id, stage, limit)
            })
            .await?;
        // Posts removed or rewritten leave the post cache.
        if stage == DeletionStage::Posts {
            self.recent.forget(id);
        }
        for p in evicted {
            self.posts.remove(PostId(p));
        }
        Ok(more)
    }
}

/// One step; whether the stage has more, and the posts it changed.
fn step(
    ctx: &mut Ctx<'_>,
    id: &UserId,
    stage: DeletionStage,
    limit: usize,
) -> Result<(bool, Vec<u64>)> {
    let u = id.as_str();
    match stage {
        DeletionStage::Followers => {
            let followers = to_user_ids(edges_of(
                &ctx.txn.open_table(FOLLOWERS).store()?,
                u,
                None,
                limit,
            )?)?;
            let mut listed = Vec::new();
            for f in &followers {
                let filed =
                    lists::edge_lists(&ctx.txn.open_table(EDGE_LISTS).store()?, f.as_str(), u)?;
                unfile(ctx, f, id, &filed)?;
                listed.extend(filed.into_iter().map(|l| (f.clone(), l)));
                cut(ctx, f.as_str(), u)?;
                add_counts(ctx.txn, f.as_str(), 0, -1)?;
            }
            for e in UserDeletion::of_followers(id, &followers, &listed).events() {
                emit(ctx, &e)?;
            }
            Ok((followers.len() == limit, Vec::new()))
        }
        DeletionStage::Following => {
            let followees = to_user_ids(edges_of(
                &ctx.txn.open_table(FOLLOWING).store()?,
                u,
                None,
                limit,
            )?)?;
            let mut following = Vec::new();
            for t in followees {
                let filed =
                    lists::edge_lists(&ctx.txn.open_table(EDGE_LISTS).store()?, u, t.as_str())?;
                unfile(ctx, id, &t, &filed)?;
                cut(ctx, u, t.as_str())?;
                add_counts(ctx.txn, t.as_str(), -1, 0)?;
                following.push((t, filed));
            }
            for e in UserDeletion::of_following(id, &following).events() {
                emit(ctx, &e)?;
            }
            Ok((following.len() == limit, Vec::new()))
        }
        DeletionStage::Groups => {
            // At most `MAX_GROUPS_PER_USER`: one step.
            let groups = groups::groups_of(&ctx.txn.open_table(USER_GROUPS).store()?, u)?;
            for group in &groups {
                let leave = Membership {
                    group: group.clone(),
                    user: id.clone(),
                    join: false,
                };
                groups::apply(ctx.txn, &leave)?;
            }
            for e in UserDeletion::of_groups(id, &groups).events() {
                emit(ctx, &e)?;
            }
            Ok((false, Vec::new()))
        }
        DeletionStage::Relations => {
            let (muted, more) = relations::remove_some(ctx, u, limit)?;
            for e in UserDeletion::of_relations(id, &muted).events() {
                emit(ctx, &e)?;
            }
            Ok((more, Vec::new()))
        }
        DeletionStage::Posts => {
            let mut by_author = ctx.txn.open_table(AUTHOR_POSTS).store()?;
            let mut posts = ctx.txn.open_table(POSTS).store()?;
            let mut mentions = ctx.txn.open_table(MENTIONS).store()?;
            let ids = first_ids(&by_author, u, limit)?;
            for &p in &ids {
                if let Some(bytes) = posts.remove(p).store()? {
                    for m in decode::<PostRecord>(bytes.value())?.mentions {
                        mentions.remove((m.as_str(), p)).store()?;
                    }
                }
                by_author.remove((u, p)).store()?;
            }
            Ok((ids.len() == limit, ids))
        }
        DeletionStage::Mentions => {
            // Others' posts no longer mention a user who is gone (so a user
            // created again under the id inherits none).
            let mut mentions = ctx.txn.open_table(MENTIONS).store()?;
            let mut posts = ctx.txn.open_table(POSTS).store()?;
            let ids = first_ids(&mentions, u, limit)?;
            for &p in &ids {
                mentions.remove((u, p)).store()?;
                let record = posts.get(p).store()?.map(|b| b.value().to_vec());
                if let Some(bytes) = record {
                    let mut r: PostRecord = decode(&bytes)?;
                    r.mentions.retain(|m| m != u);
                    posts.insert(p, encode(&r).as_slice()).store()?;
                }
            }
            Ok((ids.len() == limit, ids))
        }
        DeletionStage::Finish => {
            let own = ctx
                .txn
                .open_table(DELETING)
                .store()?
                .remove(u)
                .store()?
                .map(|g| lists::decode_lists(g.value()));
            ctx.txn.open_table(USERS).store()?.remove(u).store()?;
            ctx.txn.open_table(COUNTS).store()?.remove(u).store()?;
            emit(ctx, &timeline_dropped(id, own.unwrap_or_default()))?;
            Ok((false, Vec::new()))
        }
    }
}

/// Both directions of the edge `follower → followee`, and its follow times.
fn cut(ctx: &mut Ctx<'_>, follower: &str, followee: &str) -> Result<()> {
    edge_times::remove(ctx.txn, follower, followee)?;
    ctx.txn
        .open_table(FOLLOWING)
        .store()?
        .remove((follower, followee))
        .store()?;
    ctx.txn
        .open_table(FOLLOWERS)
        .store()?
        .remove((followee, follower))
        .store()?;
    Ok(())
}

/// Takes the edge out of its lists, as its unfollow would.
fn unfile(
    ctx: &mut Ctx<'_>,
    follower: &UserId,
    followee: &UserId,
    filed: &[ListName],
) -> Result<()> {
    if filed.is_empty() {
        return Ok(());
    }
    let unfollow = EdgeChange::new(follower.clone(), followee.clone(), EdgeOp::Unfollow)?;
    let transition = unfollow.transition(Some(filed.to_vec()));
    lists::apply(ctx.txn, follower.as_str(), followee.as_str(), &transition)
}

/// The first `limit` post ids under `user` in a (user, post id) table.
fn first_ids<T: ReadableTable<(&'static str, u64), ()>>(
    table: &T,
    user: &str,
    limit: usize,
) -> Result<Vec<u64>> {
    table
        .range((user, 0)..=(user, u64::MAX))
        .store()?
        .take(limit)
        .map(|r| r.map(|(k, _)| k.value().1).store())
        .collect()
}
