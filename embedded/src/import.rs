//! Bulk import into the embedded store, for loading or migrating a network
//! into a data directory that no server is using (the file lock ensures it):
//! large transactions, each record planned by the same planners as any
//! write (`socialite_core::plan`; a batch of follows as many at once,
//! `socialite_domain::graph::edges`), and no events (a quiet [`Ledger`]), because every
//! user of an imported network is dormant and builds their timeline on
//! first read.

use crate::store::Ctx;
use socialite_core::checks::{EdgeChange, EdgeOp, Membership};
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, ListName, UserId};
use socialite_core::model::filter::Filter;
use socialite_core::model::Post;
use socialite_core::plan::Ledger;
use socialite_core::plan::{run_ready, Txn};
use socialite_domain::accounts::user;
use socialite_domain::filters::plan::restore_filters;
use socialite_domain::graph::relations::FollowOption;
use socialite_domain::graph::{edges, membership, relate};
use socialite_domain::posts::post;

use crate::store::EmbeddedStore;

/// Whether `user` exists, in the write.
fn exists(ctx: &mut Ctx<'_>, user: &UserId) -> Result<bool> {
    Ok(!run_ready(ctx.existing_users(&[user]))?.is_empty())
}

impl EmbeddedStore {
    /// Creates the users that do not exist; returns how many were created.
    pub async fn import_users(&self, ids: Vec<UserId>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                ctx.ledger = Ledger::quiet();
                let mut created = 0;
                for id in &ids {
                    let (new, _) = run_ready(user::put_user(ctx, id, None))?;
                    created += usize::from(new);
                }
                Ok(created)
            })
            .await
    }

    /// Adds `(follower, followee, lists)` edges, creating users they name,
    /// each filed under its lists (none given: an edge that exists keeps
    /// its own); skips self-follows, and refuses the batch on an edge a
    /// follow would be refused (a block, the follow cap). Returns how many
    /// edges were added or refiled.
    pub async fn import_edges(&self, edges: Vec<(UserId, UserId, Vec<ListName>)>) -> Result<usize> {
        let mut names: Vec<UserId> = edges
            .iter()
            .flat_map(|(a, b, _)| [a.clone(), b.clone()])
            .collect();
        names.sort();
        names.dedup();
        self.import_users(names).await?;
        let at_ms = socialite_core::ids::now_ms();
        let follows: Vec<(EdgeChange, u64)> = edges
            .into_iter()
            .filter_map(|(f, t, lists)| {
                let change = EdgeChange::new(f, t, EdgeOp::Follow).ok()?;
                match lists.is_empty() {
                    true => Some((change, at_ms)),
                    false => Some((change.with_lists(lists), at_ms)),
                }
            })
            .collect();
        self.writer
            .write(move |ctx| {
                ctx.ledger = Ledger::quiet();
                run_ready(edges::change_edges(ctx, &follows))
            })
            .await
    }

    /// Turns follow options on for existing follows (a follow that is not
    /// there is skipped); returns how many follows changed.
    pub async fn import_follow_options(
        &self,
        set: Vec<(UserId, UserId)>,
        options: Vec<FollowOption>,
    ) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                ctx.ledger = Ledger::quiet();
                let on: Vec<(FollowOption, bool)> = options.iter().map(|o| (*o, true)).collect();
                let at_ms = socialite_core::ids::now_ms();
                let mut done = 0;
                for (f, t) in set {
                    if run_ready(ctx.edge_lists(&f, &t))?.is_none() {
                        continue;
                    }
                    let set = relate::set_follow_options(ctx, &f, &t, &on, at_ms);
                    done += usize::from(run_ready(set)?);
                }
                Ok(done)
            })
            .await
    }

    /// Gives existing users keyword filters (a user not there is skipped),
    /// each set written once; returns how many users' filters changed.
    pub async fn import_filters(&self, sets: Vec<(UserId, Vec<Filter>)>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                ctx.ledger = Ledger::quiet();
                let mut done = 0;
                for (user, filters) in sets {
                    if !exists(ctx, &user)? {
                        continue;
                    }
                    done += usize::from(run_ready(restore_filters(ctx, &user, &filters, 0))?);
                }
                Ok(done)
            })
            .await
    }

    /// Puts existing users in groups; returns how many memberships are new.
    pub async fn import_memberships(&self, members: Vec<(GroupName, UserId)>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                ctx.ledger = Ledger::quiet();
                let mut done = 0;
                for (group, user) in members {
                    if !exists(ctx, &user)? {
                        continue;
                    }
                    let join = Membership {
                        group,
                        user,
                        join: true,
                    };
                    done += usize::from(run_ready(membership::change_membership(ctx, &join))?);
                }
                Ok(done)
            })
            .await
    }

    /// Stores posts of existing users (others are skipped); returns how many.
    pub async fn import_posts(&self, posts: Vec<Post>) -> Result<usize> {
        self.writer
            .write(move |ctx| {
                ctx.ledger = Ledger::quiet();
                let mut stored = 0;
                for p in posts {
                    if !exists(ctx, &p.author)? {
                        continue;
                    }
                    run_ready(post::create_post(ctx, p))?;
                    stored += 1;
                }
                Ok(stored)
            })
            .await
    }
}
