//! Reads of one account or one post asked for by name: a profile and its
//! counts, its follower, followee and list pages and its posts, a post by
//! id, the likers of a post, the post a thread is about. Each is read as
//! its viewer sees it (a user token views as its user; a server key names
//! the viewer, or reads what every reader sees), and what is hidden is
//! decided here once for every transport and backend:
//!
//! - a suspended account is hidden from everyone, and an account on the
//!   other side of a block (either way) from the viewer
//!   ([`Hidden::named`]): it and its posts answer 404, as the thread of one
//!   of its posts does;
//! - a repost's item answers only while the post it carries is stored and
//!   its author shown too ([`shown_by_id`]): a repost of a deleted post
//!   answers 404 as it shows in no timeline.

use super::*;
use crate::rules::reposts::shown_by_id;

impl Reads {
    /// The user, as `viewer` sees them: 404 `user_not_found` when there
    /// is none, or it is hidden from the viewer.
    pub async fn user(&self, caller: &Caller, id: &str, viewer: Option<&str>) -> Result<User> {
        Ok(self.user_as(caller, id, viewer).await?.0)
    }

    /// The user `id` as `viewer` sees them, and what a read by name hides
    /// from the viewer.
    pub(super) async fn user_as(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
    ) -> Result<(User, Hidden)> {
        let id = UserId::parse(id)?;
        let viewer = viewer.map(UserId::parse).transpose()?;
        check(caller, Act::ReadPublic)?;
        let hidden = self.hidden_by_name(caller, viewer).await?;
        let user = self.existing(&id).await?;
        if hidden.hides(&user.id) {
            return Err(user_not_found(&id));
        }
        Ok((user, hidden))
    }

    /// What a read by name hides from its viewer ([`viewing_as`]): the
    /// suspended accounts, and those on the other side of a block with the
    /// viewer. The viewer need not exist (a token's user not created yet
    /// blocks nobody).
    pub(super) async fn hidden_by_name(
        &self,
        caller: &Caller,
        viewer: Option<UserId>,
    ) -> Result<Hidden> {
        let viewer = viewing_as(caller, viewer)?;
        let suspended = self.stores.accounts.suspended_ids().await?;
        let Some(viewer) = viewer else {
            return Ok(Hidden::default().and_suspended(suspended));
        };
        let graph = &self.stores.graph;
        let (blocked, blocked_by) = tokio::try_join!(
            graph.all_relations(&viewer, Relation::Block),
            graph.all_related(&viewer, Relation::Block)
        )?;
        Ok(Hidden::named(blocked, blocked_by).and_suspended(suspended))
    }

    /// One post, as `viewer` sees it: 404 `post_not_found` when it is not
    /// stored, or hidden from the viewer (see the module's comment).
    pub async fn post(&self, caller: &Caller, id: &str, viewer: Option<&str>) -> Result<Post> {
        let id = PostId::parse(id)?;
        let viewer = viewer.map(UserId::parse).transpose()?;
        check(caller, Act::ReadPublic)?;
        let hidden = self.hidden_by_name(caller, viewer).await?;
        self.post_as(id, &hidden).await
    }

    /// The post `id` unless it is not stored or `hidden` hides it.
    pub(super) async fn post_as(&self, id: PostId, hidden: &Hidden) -> Result<Post> {
        let content = &self.stores.content;
        let post = content.get_posts(&[id]).await?.pop();
        let post = post.ok_or_else(|| post_not_found(id))?;
        let original = match &post.repost_of {
            Some(carried) => content.get_posts(&[carried.id]).await?.pop(),
            None => None,
        };
        match shown_by_id(&post, original.as_ref()) {
            Some(authors) if !authors.iter().any(|a| hidden.hides(a)) => Ok(post),
            _ => Err(post_not_found(id)),
        }
    }
}
