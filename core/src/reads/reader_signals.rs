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

/// Of each post a reader's acts were read from (their own posts and those
/// they liked, at most twice [`OWN_POSTS`]): its author, and whom it
/// replied to or reposted. Neither ever changes, so a basis keeps them
/// ([`super::rank_bases::Basis`]) and its refreshes load only the posts
/// acted on since: a deletion, the one write that could change what they
/// read, ends the basis.
pub(super) type Acts = HashMap<PostId, (UserId, Option<UserId>)>;

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
    /// their priorities; and the posts that told.
    pub(super) async fn signals(&self, user: &UserId, floor: PostId) -> Result<(Signals, Acts)> {
        let known = Acts::new();
        let interactions = self.interactions(user, floor, &known);
        let ((mut signals, acts), priorities) =
            tokio::try_join!(interactions, self.priorities(user))?;
        signals.priorities = priorities;
        Ok((signals, acts))
    }

    /// Whom the reader replied to, reposted and liked in the window: their
    /// newest [`OWN_POSTS`] posts and as many likes, then those posts not
    /// `known` already, in one read; and the posts that told.
    pub(super) async fn interactions(
        &self,
        user: &UserId,
        floor: PostId,
        known: &Acts,
    ) -> Result<(Signals, Acts)> {
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
        ids.sort_unstable();
        ids.dedup();
        let mut acts: Acts = ids
            .iter()
            .filter_map(|id| known.get(id).map(|a| (*id, a.clone())))
            .collect();
        let unknown: Vec<PostId> = ids
            .into_iter()
            .filter(|id| !acts.contains_key(id))
            .collect();
        if !unknown.is_empty() {
            for post in content.get_posts(&unknown).await? {
                let answered = post.reply_to.as_ref().or(post.repost_of.as_ref());
                let answered = answered.map(|t| t.author.clone());
                acts.insert(post.id, (post.author, answered));
            }
        }
        for (id, (author, answered)) in &acts {
            let to = match liked.contains(id) && author != user {
                // A like of the reader's, of this author.
                true => Some(author),
                false => answered.as_ref(),
            };
            if let Some(to) = to.filter(|a| *a != user) {
                *signals.interactions.entry(to.clone()).or_insert(0) += 1;
            }
        }
        Ok((signals, acts))
    }
}
