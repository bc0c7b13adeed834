//! What a reader sees of a timeline's raw stream of items (its accounts'
//! posts and reposts, newest first): each post once, where its newest
//! arrival put it, with the accounts that reposted it
//! ([`socialite_domain::interactions::reposts`]); reposts of deleted posts, and of authors the
//! reader does not see, left out; groups show posts only; in home and list
//! timelines, a reply only where it reaches the reader
//! ([`socialite_domain::posts::replies::reaches`]).
//!
//! The stream is what every store keeps exactly (fanout, merges and
//! caches deal in items only), so this pass is the one place the rule is
//! applied, the same for stored and merged pages. It costs nothing beyond
//! loading the page's posts unless the page holds a reposted post: then
//! the reposts of it that the timeline's accounts made are looked up
//! ([`FEW_REPOSTS`] decides from which side).

use super::{Feed, Stores};
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::{Entry, FeedItem, Post};
use socialite_domain::graph::relations::Hidden;
use socialite_domain::interactions::reposts::{place, FEW_REPOSTS};
use socialite_domain::posts::replies::reaches;
use std::collections::{HashMap, HashSet};

/// Whose items a stream holds.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// A timeline's accounts ([`Stores::authors`]).
    Feed(&'a Feed),
    /// These authors' own items (a profile, or several).
    Authors(&'a [UserId]),
}

/// The posts of `entries`, in their order: embedded entries carry theirs,
/// linked ones are loaded in one batched read; deleted ones are left out.
pub async fn load_posts(stores: &Stores, entries: &[Entry]) -> Result<Vec<Post>> {
    let linked: Vec<PostId> = entries
        .iter()
        .filter(|e| e.body.is_none())
        .map(|e| e.post)
        .collect();
    let mut loaded: HashMap<PostId, Post> = if linked.is_empty() {
        HashMap::new()
    } else {
        let found = stores.content.get_posts(&linked).await?;
        found.into_iter().map(|p| (p.id, p)).collect()
    };
    Ok(entries
        .iter()
        .filter_map(|e| e.to_post().or_else(|| loaded.remove(&e.post)))
        .collect())
}

/// The items of `raw` (newest first) that the reader sees, as entries of
/// the timeline, in the same order; the reader's keyword filters applied
/// last (to each entry's post: a repost's original).
pub async fn visible(
    stores: &Stores,
    scope: Scope<'_>,
    hidden: &Hidden,
    raw: &[Entry],
) -> Result<Vec<FeedItem>> {
    let mut items = placed(stores, scope, hidden, raw).await?;
    hidden.sift(&mut items);
    Ok(items)
}

/// [`visible`] before the keyword filters.
async fn placed(
    stores: &Stores,
    scope: Scope<'_>,
    hidden: &Hidden,
    raw: &[Entry],
) -> Result<Vec<FeedItem>> {
    let mut reader = Reader {
        stores,
        scope,
        hidden,
        members: None,
        follows: HashMap::new(),
    };
    let mut items = load_posts(stores, raw).await?;
    if reader.owner().is_some() {
        // A reply by one of the timeline's accounts, answering another.
        let answered: Vec<UserId> = items
            .iter()
            .filter(|p| p.repost_of.is_none())
            .filter_map(|p| p.reply_to.as_ref().map(|a| a.author.clone()))
            .collect();
        if !answered.is_empty() {
            reader.learn_follows(&answered).await?;
            items.retain(|p| p.repost_of.is_some() || reader.reaches(p));
        }
    }
    let groups = matches!(scope, Scope::Feed(Feed::Group(_)));
    let mut reposted = None;
    if !groups && items.iter().all(|p| p.repost_of.is_none()) {
        // No repost on the page: only a post reposted elsewhere can move.
        let ids: Vec<PostId> = items.iter().map(|p| p.id).collect();
        let found = stores.content.reposted_among(&ids).await?;
        if found.is_empty() {
            return Ok(items.into_iter().map(FeedItem::plain).collect());
        }
        reposted = Some(found.into_iter().collect());
    }
    reader.place_all(items, reposted).await
}

/// One pass over a page, with what it read once.
struct Reader<'a> {
    stores: &'a Stores,
    scope: Scope<'a>,
    hidden: &'a Hidden,
    /// The accounts whose items the stream holds, read when first needed.
    members: Option<HashSet<UserId>>,
    /// Whether the timeline's owner follows each account answered by a
    /// reply met so far.
    follows: HashMap<UserId, bool>,
}

impl Reader<'_> {
    /// `reposted`: which of the items' posts may have reposts, when known.
    async fn place_all(
        &mut self,
        items: Vec<Post>,
        reposted: Option<HashSet<PostId>>,
    ) -> Result<Vec<FeedItem>> {
        let groups = matches!(self.scope, Scope::Feed(Feed::Group(_)));
        // The originals the reposts carry, each read once.
        let wanted: Vec<PostId> = items
            .iter()
            .filter_map(|p| p.repost_of.as_ref().map(|o| o.id))
            .collect();
        let originals: HashMap<PostId, Post> = match (groups, wanted.is_empty()) {
            (false, false) => {
                let found = self.stores.content.get_posts(&wanted).await?;
                found.into_iter().map(|p| (p.id, p)).collect()
            }
            _ => HashMap::new(),
        };
        let shown: Vec<(PostId, Post)> = items
            .into_iter()
            .filter_map(|item| match &item.repost_of {
                None => Some((item.id, item)),
                Some(_) if groups => None,
                // A follow option may turn the reposter's reposts off.
                Some(_) if !self.hidden.shows_reposts_of(&item.author) => None,
                Some(o) => originals
                    .get(&o.id)
                    .filter(|p| !self.hidden.hides(&p.author))
                    .map(|p| (item.id, p.clone())),
            })
            .collect();
        if groups {
            return Ok(shown.into_iter().map(|(_, p)| FeedItem::plain(p)).collect());
        }
        let reposted: HashSet<PostId> = match reposted {
            Some(known) => known,
            None => {
                let targets: Vec<PostId> = shown.iter().map(|(_, p)| p.id).collect();
                let found = self.stores.content.reposted_among(&targets).await?;
                found.into_iter().collect()
            }
        };
        let mut placed = HashMap::new();
        let mut out = Vec::with_capacity(shown.len());
        for (at, post) in shown {
            if !reposted.contains(&post.id) {
                out.push(FeedItem::plain(post));
                continue;
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = placed.entry(post.id) {
                let own = self.shows_itself(&post).await?.then_some(post.id);
                let reposts = self.reposts_seen(post.id).await?;
                slot.insert(place(own, reposts));
            }
            // Shown where its newest arrival puts it, and only there.
            if let Some(Some(p)) = placed
                .get(&post.id)
                .filter(|p| p.as_ref().is_some_and(|p| p.position == at))
            {
                out.push(FeedItem {
                    position: at,
                    post,
                    reposted_by: p.reposted_by.clone(),
                    reposts_seen: p.reposts_seen,
                    filtered: Vec::new(),
                });
            }
        }
        Ok(out)
    }

    /// Whose home or list timeline this is (where replies are sifted).
    fn owner(&self) -> Option<&UserId> {
        match self.scope {
            Scope::Feed(Feed::Home(u) | Feed::List(u, _)) => Some(u),
            _ => None,
        }
    }

    /// Learns whether the owner follows each of `authors` (one read for
    /// those not known yet).
    async fn learn_follows(&mut self, authors: &[UserId]) -> Result<()> {
        let Some(owner) = self.owner().cloned() else {
            return Ok(());
        };
        let mut unknown: Vec<UserId> = authors
            .iter()
            .filter(|a| !self.follows.contains_key(*a))
            .cloned()
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        if unknown.is_empty() {
            return Ok(());
        }
        let followed = self.stores.graph.following_among(&owner, &unknown).await?;
        for a in unknown {
            let f = followed.contains(&a);
            self.follows.insert(a, f);
        }
        Ok(())
    }

    /// Whether the post reaches the owner as its author's item: any post
    /// but a reply, and a reply by [`reaches`] (whose follows are learnt).
    fn reaches(&self, post: &Post) -> bool {
        if self.hidden.shows_all_replies_of(&post.author) {
            // A follow option: every reply of theirs.
            return true;
        }
        match (self.owner(), &post.reply_to) {
            (Some(owner), Some(answered)) => {
                let follows = self.follows.get(&answered.author).copied();
                reaches(
                    owner,
                    &post.author,
                    &answered.author,
                    follows.unwrap_or(false),
                )
            }
            _ => true,
        }
    }

    /// Whether the stream holds the post itself: its author is one of the
    /// stream's accounts, the reader sees them, and a reply reaches them.
    async fn shows_itself(&mut self, post: &Post) -> Result<bool> {
        if self.hidden.hides(&post.author) || !self.members().await?.contains(&post.author) {
            return Ok(false);
        }
        if let Some(answered) = &post.reply_to {
            self.learn_follows(std::slice::from_ref(&answered.author))
                .await?;
        }
        Ok(self.reaches(post))
    }

    /// The reposts of `post` in the stream that the reader sees:
    /// (reposter, item).
    async fn reposts_seen(&mut self, post: PostId) -> Result<Vec<(UserId, PostId)>> {
        let content = &self.stores.content;
        let mut found = content.reposters(post, FEW_REPOSTS + 1).await?;
        if found.len() > FEW_REPOSTS {
            // Many reposts: look the stream's accounts up among them.
            let members: Vec<UserId> = self.members().await?.iter().cloned().collect();
            found = content.reposts_among(post, &members).await?;
        }
        let members = self.members().await?;
        found.retain(|(user, _)| members.contains(user));
        found.retain(|(user, _)| !self.hidden.hides(user) && self.hidden.shows_reposts_of(user));
        Ok(found)
    }

    /// The accounts whose items the stream holds, read once.
    async fn members(&mut self) -> Result<&HashSet<UserId>> {
        if self.members.is_none() {
            let members = match self.scope {
                Scope::Authors(authors) => authors.to_vec(),
                Scope::Feed(feed) => self.stores.authors(feed).await?,
            };
            self.members = Some(members.into_iter().collect());
        }
        Ok(self.members.as_ref().expect("set above"))
    }
}
