//! Reads of likes: a post with its counts, and who likes it.

use crate::error::Result;
use crate::ids::{decode_edge_cursor, UserId};
use crate::model::PostCounts;
use crate::model::{page_size, Page, Post};
use crate::reads::{time_page, Reads};
use socialite_domain::accounts::access::Caller;

impl Reads {
    /// The post with its counts, as `viewer` sees it ([`Reads::post`]).
    pub async fn post_with_counts(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
    ) -> Result<(Post, PostCounts)> {
        let post = self.post(caller, id, viewer).await?;
        let counts = self.stores.content.post_counts(&[post.id]).await?;
        Ok((post, counts.first().copied().unwrap_or_default()))
    }

    /// Who likes the post, newest like first, each with when they liked
    /// it; the post as `viewer` sees it ([`Reads::post`]).
    pub async fn likers(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<(UserId, u64), String>> {
        let post = self.post(caller, id, viewer).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(decode_edge_cursor).transpose()?;
        let likers = self
            .stores
            .content
            .likers(post.id, after.as_ref(), limit + 1)
            .await?;
        Ok(time_page(likers, limit))
    }
}
