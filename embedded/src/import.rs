//! Bulk import into the embedded store, for loading or migrating a network
//! into a data directory that no server is using (the file lock ensures it):
//! large transactions, counts maintained, and no events, because every user of
//! an imported network is dormant and builds their timeline on first read.

use crate::store::user_exists;
use crate::store::{add_counts, EmbeddedStore};
use crate::tables::*;
use crate::{edge_times, groups, lists};
use redb::ReadableTable;
use socialite_core::error::Result;
use socialite_core::ids::{now_ms, GroupName, ListName, UserId};
use socialite_core::model::Post;
use socialite_core::rules::checks::{EdgeChange, EdgeOp, Membership};
use socialite_core::rules::mentions::kept;
use std::collections::HashMap;

impl EmbeddedStore {
    /// Creates the users that do not exist; returns how many were created.
    pub async fn import_users(&self, ids: Vec<UserId>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                let mut users = ctx.txn.open_table(USERS).store()?;
                let mut counts = ctx.txn.open_table(COUNTS).store()?;
                let mut created = 0;
                for id in &ids {
                    if users.get(id.as_str()).store()?.is_none() {
                        users.insert(id.as_str(), [].as_slice()).store()?;
                        counts.insert(id.as_str(), (0, 0)).store()?;
                        created += 1;
                    }
                }
                Ok(created)
            })
            .await
    }

    /// Adds `(follower, followee)` edges, creating users they name; skips
    /// self-follows and edges that exist. Returns how many edges were added.
    pub async fn import_edges(&self, edges: Vec<(UserId, UserId)>) -> Result<usize> {
        let mut names: Vec<UserId> = edges
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        names.sort();
        names.dedup();
        self.import_users(names).await?;
        self.writer
            .write(move |ctx| {
                let mut delta: HashMap<&str, (i64, i64)> = HashMap::new();
                let mut added_edges: Vec<(&str, &str)> = Vec::new();
                {
                    let mut following = ctx.txn.open_table(FOLLOWING).store()?;
                    let mut followers = ctx.txn.open_table(FOLLOWERS).store()?;
                    for (f, t) in &edges {
                        let admitted =
                            EdgeChange::new(f.clone(), t.clone(), EdgeOp::Follow).is_ok();
                        if !admitted
                            || following
                                .insert((f.as_str(), t.as_str()), ())
                                .store()?
                                .is_some()
                        {
                            continue;
                        }
                        followers.insert((t.as_str(), f.as_str()), ()).store()?;
                        added_edges.push((f.as_str(), t.as_str()));
                        delta.entry(f.as_str()).or_default().1 += 1;
                        delta.entry(t.as_str()).or_default().0 += 1;
                    }
                }
                // The follow time of an imported edge is the import's.
                edge_times::add(ctx.txn, &added_edges, now_ms())?;
                let added = delta.values().map(|d| d.1).sum::<i64>() as usize;
                for (id, (followers, following)) in delta {
                    add_counts(ctx.txn, id, followers, following)?;
                }
                Ok(added)
            })
            .await
    }

    /// Files existing edges under lists: `(follower, followee, list)`;
    /// edges that do not exist are skipped. Returns how many were filed.
    pub async fn import_lists(&self, filed: Vec<(UserId, UserId, ListName)>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                let mut done = 0;
                for (f, t, list) in filed {
                    let edge = ctx.txn.open_table(FOLLOWING).store()?;
                    if edge.get((f.as_str(), t.as_str())).store()?.is_none() {
                        continue;
                    }
                    drop(edge);
                    let held = lists::edge_lists(
                        &ctx.txn.open_table(EDGE_LISTS).store()?,
                        f.as_str(),
                        t.as_str(),
                    )?;
                    let mut wanted = held.clone();
                    wanted.push(list);
                    let change = EdgeChange::new(f.clone(), t.clone(), EdgeOp::Follow)?
                        .with_lists(wanted)
                        .transition(Some(held));
                    lists::apply(ctx.txn, f.as_str(), t.as_str(), &change)?;
                    done += 1;
                }
                Ok(done)
            })
            .await
    }

    /// Puts existing users in groups; returns how many memberships are new.
    pub async fn import_memberships(&self, members: Vec<(GroupName, UserId)>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                let mut done = 0;
                for (group, user) in members {
                    if !user_exists(ctx.txn, user.as_str())? {
                        continue;
                    }
                    let join = Membership {
                        group,
                        user,
                        join: true,
                    };
                    done += usize::from(groups::apply(ctx.txn, &join)?);
                }
                Ok(done)
            })
            .await
    }

    /// Stores posts of existing users (others are skipped); returns how many.
    pub async fn import_posts(&self, posts: Vec<Post>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                let users = ctx.txn.open_table(USERS).store()?;
                let mut table = ctx.txn.open_table(POSTS).store()?;
                let mut by_author = ctx.txn.open_table(AUTHOR_POSTS).store()?;
                let mut mentioned = ctx.txn.open_table(MENTIONS).store()?;
                let mut stored = 0;
                for p in posts {
                    if users.get(p.author.as_str()).store()?.is_none() {
                        continue;
                    }
                    let mentions = kept(&p.mentions, |u| {
                        Ok(users.get(u.as_str()).store()?.is_some())
                    })?;
                    for m in &mentions {
                        mentioned.insert((m.as_str(), p.id.0), ()).store()?;
                    }
                    let record = PostRecord {
                        author: p.author.to_string(),
                        message: p.message,
                        data: p.data,
                        mentions: mentions.iter().map(|m| m.to_string()).collect(),
                    };
                    table.insert(p.id.0, encode(&record).as_slice()).store()?;
                    by_author.insert((p.author.as_str(), p.id.0), ()).store()?;
                    stored += 1;
                }
                Ok(stored)
            })
            .await
    }
}
