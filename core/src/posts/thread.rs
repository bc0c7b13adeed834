//! A post's thread: the posts it answers, root first, and its direct
//! replies, oldest first, a page at a time ([`socialite_domain::posts::replies`]),
//! without what the viewer's mutes and blocks hide. The post itself is
//! read as a read of it by id is (`super::named`): 404 across a block.

use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::filter::FilterContext;
use crate::model::filter::FilterHit;
use crate::model::PostCounts;
use crate::model::{page_size, Page, Post};
use crate::reads::Reads;
use socialite_domain::accounts::access::{check, viewing_as, Act, Caller};
use socialite_domain::filters::matcher::Verdict;
use socialite_domain::graph::relations::Hidden;
use socialite_domain::posts::replies::MAX_ANCESTORS;
use std::collections::HashMap;

/// A post with the conversation around it, and every shown post's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// The posts the post answers, the root first: at most
    /// [`MAX_ANCESTORS`], the nearest; a post deleted since ends the chain.
    pub ancestors: Vec<Post>,
    pub post: Post,
    /// Its direct replies, oldest first; the cursor is the last one's id.
    pub replies: Page<Post, PostId>,
    /// The counts of each post shown.
    pub counts: HashMap<PostId, PostCounts>,
    /// The viewer's warning filters that match each post around the one
    /// asked for (those that match none are not named).
    pub filtered: HashMap<PostId, Vec<FilterHit>>,
}

impl Reads {
    /// The thread of the post `id` (a repost's id stands for its post), as
    /// `viewer` sees it: a user token always views as its user, a server
    /// key names the viewer or sees what every reader sees.
    pub async fn thread(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Thread> {
        let viewer = viewer.map(UserId::parse).transpose()?;
        let limit = page_size(limit)?;
        let after = cursor.map(PostId::parse).transpose()?;
        let id = PostId::parse(id)?;
        check(caller, Act::ReadPublic)?;
        // The post itself as every read of it by id shows it (a mute hides
        // only what is around it).
        let named = self.viewing(caller, viewer.clone()).await?;
        let mut post = self.post_as(id, &named).await?;
        let hidden = match viewing_as(caller, viewer)? {
            Some(v) => {
                let v = self.existing(&v).await?.id;
                self.hidden_from(&v, FilterContext::Threads).await?
            }
            None => self.hidden_from_all().await?,
        };
        if let Some(original) = post.repost_of.take() {
            post = self.post_as(original.id, &named).await?;
        }
        let ancestors = self.ancestors(&post, &hidden).await?;
        let replies = self.replies(post.id, &hidden, after, limit).await?;
        let shown: Vec<PostId> = ancestors
            .iter()
            .chain([&post])
            .chain(&replies.items)
            .map(|p| p.id)
            .collect();
        let counts = self.stores.content.post_counts(&shown).await?;
        let filtered = ancestors
            .iter()
            .chain(&replies.items)
            .filter_map(|p| match hidden.verdict(p) {
                Verdict::Warn(hits) => Some((p.id, hits)),
                _ => None,
            })
            .collect();
        Ok(Thread {
            filtered,
            ancestors,
            post,
            replies,
            counts: shown.into_iter().zip(counts).collect(),
        })
    }

    /// The posts `post` answers, root first, but those `hidden` (the walk
    /// goes on above them).
    async fn ancestors(&self, post: &Post, hidden: &Hidden) -> Result<Vec<Post>> {
        let mut chain = Vec::new();
        let mut next = post.reply_to.as_ref().map(|a| a.id);
        for _ in 0..MAX_ANCESTORS {
            let Some(id) = next else { break };
            let Some(p) = self.stores.content.get_posts(&[id]).await?.pop() else {
                break;
            };
            next = p.reply_to.as_ref().map(|a| a.id);
            if hidden.shows(&p) {
                chain.push(p);
            }
        }
        chain.reverse();
        Ok(chain)
    }

    /// A page of the direct replies to `post` after `after`, oldest first,
    /// read on past those `hidden` until the page is full.
    async fn replies(
        &self,
        post: PostId,
        hidden: &Hidden,
        mut after: Option<PostId>,
        limit: usize,
    ) -> Result<Page<Post, PostId>> {
        let (content, want) = (&self.stores.content, limit + 1);
        let mut shown = Vec::new();
        loop {
            let ids = content.replies_of(post, after, want).await?;
            let ended = ids.len() < want;
            after = ids.last().copied();
            let found = content.get_posts(&ids).await?;
            shown.extend(found.into_iter().filter(|p| hidden.shows(p)));
            if ended || shown.len() >= want {
                break;
            }
        }
        let next_cursor = (shown.len() > limit).then(|| shown[limit - 1].id);
        shown.truncate(limit);
        Ok(Page {
            items: shown,
            next_cursor,
        })
    }
}
