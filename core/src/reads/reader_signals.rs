//! What a reader brings to their ranked orders
//! ([`super::ranked`]): whom they like, reply to and repost, their
//! priorities for accounts, and the posts they asked to see less like.

use super::Reads;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::ingest::Ingest;
use crate::model::collection::Collection;
use crate::ports::IdRange;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::feed::rank::Signals;
use socialite_domain::graph::relations::{Priority, Relation};
use std::collections::{HashMap, HashSet};

/// The posts a reader asked to see less like: left out of their ranked
/// orders, each lowering its author there by one step of priority (to
/// -2 at most). A collection of the reader's (`crate::bookmarks` shows
/// how every collection is kept, exported and removed).
pub const SHOWN_LESS: Collection = Collection::named("shown_less");

/// Most of a reader's "show less" posts a ranking reads.
const SHOWN_LESS_READ: usize = 500;

/// Most of the reader's own posts, and of their likes, read for whom they
/// interact with.
const OWN_POSTS: usize = 200;

impl Ingest {
    /// "Show less like this" on a post (`on`), or taken back (idempotent);
    /// whether it changed. Refused as a bookmark is: a post the user may
    /// not see is `post_not_found`.
    pub async fn show_less(
        &self,
        caller: &Caller,
        user: &str,
        post: &str,
        on: bool,
    ) -> Result<bool> {
        self.keep_for(caller, user, post, on, SHOWN_LESS).await
    }
}

impl Reads {
    /// The user's priorities for accounts, in id order (at most 1,000 of
    /// each level).
    pub async fn feed_preferences(&self, caller: &Caller, id: &str) -> Result<Vec<(UserId, i8)>> {
        let user = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&user))?;
        let user = self.existing(&user).await?.id;
        let mut all: Vec<(UserId, i8)> = self.priorities(&user).await?.into_iter().collect();
        all.sort();
        Ok(all)
    }

    /// The posts the reader asked to see less like (their newest
    /// [`SHOWN_LESS_READ`]).
    pub(super) async fn shown_less(&self, user: &UserId) -> Result<HashSet<PostId>> {
        let kept = self
            .stores
            .content
            .kept(&SHOWN_LESS, user, None, SHOWN_LESS_READ)
            .await?;
        Ok(kept.into_iter().map(|k| k.post).collect())
    }

    /// The reader's priorities: one read of each level's accounts, side
    /// by side.
    async fn priorities(&self, user: &UserId) -> Result<HashMap<UserId, i8>> {
        let graph = &self.stores.graph;
        let [a, b, c, d] = Priority::ALL.map(|p| graph.all_relations(user, Relation::Priority(p)));
        let levels = tokio::try_join!(a, b, c, d)?;
        let mut out = HashMap::new();
        for (p, accounts) in Priority::ALL
            .into_iter()
            .zip([levels.0, levels.1, levels.2, levels.3])
        {
            out.extend(accounts.into_iter().map(|a| (a, p.level())));
        }
        Ok(out)
    }

    /// Whom the reader replied to, reposted and liked since `floor`, and
    /// their priorities.
    pub(super) async fn signals(&self, user: &UserId, floor: PostId) -> Result<Signals> {
        let (mut signals, priorities) =
            tokio::try_join!(self.interactions(user, floor), self.priorities(user))?;
        signals.priorities = priorities;
        Ok(signals)
    }

    /// Whom the reader replied to, reposted and liked in the window: their
    /// newest [`OWN_POSTS`] posts and as many likes, then those posts, in
    /// one read.
    pub(super) async fn interactions(&self, user: &UserId, floor: PostId) -> Result<Signals> {
        let range = IdRange {
            below: None,
            from: Some(floor),
        };
        let content = &self.stores.content;
        let (own, liked) = tokio::try_join!(
            content.post_ids_by(std::slice::from_ref(user), range, OWN_POSTS),
            content.liked_since(user, floor, OWN_POSTS)
        )?;
        let mut signals = Signals::default();
        let mut ids: Vec<PostId> = own.iter().map(|e| e.post).collect();
        let liked: HashSet<PostId> = liked.into_iter().collect();
        ids.extend(liked.iter().copied());
        if ids.is_empty() {
            return Ok(signals);
        }
        for post in content.get_posts(&ids).await? {
            let to = match liked.contains(&post.id) && &post.author != user {
                // A like of the reader's, of this author.
                true => Some(&post.author),
                false => post
                    .reply_to
                    .as_ref()
                    .or(post.repost_of.as_ref())
                    .map(|t| &t.author),
            };
            if let Some(to) = to.filter(|a| *a != user) {
                *signals.interactions.entry(to.clone()).or_insert(0) += 1;
            }
        }
        Ok(signals)
    }
}
