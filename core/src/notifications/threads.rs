//! Muted threads as the APIs act on them: muted and unmuted, listed, and
//! told to the live streams (the rules are
//! `socialite_domain::notifications::thread_mutes`').

use crate::budgets::Cost;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::ingest::Ingest;
use crate::model::{page_size, Page};
use crate::ports::ContentStore;
use crate::reads::Reads;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::notifications::thread_mutes::Answered;

impl Ingest {
    /// Mutes (`make`) or unmutes the thread of `post` for the user's
    /// notifications: whether it changed, and the thread's first post.
    pub async fn mute_thread(
        &self,
        caller: &Caller,
        user: &str,
        post: &str,
        make: bool,
    ) -> Result<(bool, PostId)> {
        let user = UserId::parse(user)?;
        let post = PostId::parse(post)?;
        self.acting_as(caller, &user).await?;
        let _write = self.enter_changing_for(caller, Cost::making(make), vec![user.clone()])?;
        self.content.mute_thread(&user, post, make).await
    }
}

impl Reads {
    /// The threads the user muted (their first posts), in id order, paged
    /// by `limit` and `cursor` (the last id of the page before).
    pub async fn muted_threads(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<PostId, String>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(PostId::parse).transpose()?;
        let content = &self.stores.content;
        let mut items = content.muted_threads(&user.id, after, limit + 1).await?;
        let next_cursor = match items.len() > limit {
            true => {
                items.truncate(limit);
                items.last().map(|p| p.to_string())
            }
            false => None,
        };
        Ok(Page { items, next_cursor })
    }
}

/// A content store, as a thread walk reads it (the live streams' check of
/// a notice against the recipient's muted threads).
pub struct InStore<'a>(pub &'a dyn ContentStore);

impl Answered for InStore<'_> {
    type Error = crate::error::Error;
    async fn answered(&mut self, post: PostId) -> Result<Option<Option<PostId>>> {
        let found = self.0.get_posts(&[post]).await?;
        Ok(found.into_iter().next().map(|p| p.reply_to.map(|r| r.id)))
    }
}
