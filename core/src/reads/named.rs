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
use crate::model::filter::FilterContext;
use socialite_domain::interactions::reposts::shown_by_id;
use std::sync::Arc;

/// Who a read by name is made for ([`viewing_as`]: `None` reads what
/// every reader sees), with the suspended accounts.
pub(crate) struct Viewing {
    pub(crate) viewer: Option<UserId>,
    pub(crate) suspended: Arc<HashSet<UserId>>,
}

impl Reads {
    /// The user, as `viewer` sees them: 404 `user_not_found` when there
    /// is none, or it is hidden from the viewer.
    pub async fn user(&self, caller: &Caller, id: &str, viewer: Option<&str>) -> Result<User> {
        Ok(self.user_as(caller, id, viewer).await?.0)
    }

    /// The user `id` as `viewer` sees them, and who views.
    pub(crate) async fn user_as(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
    ) -> Result<(User, Viewing)> {
        let id = UserId::parse(id)?;
        let viewer = viewer.map(UserId::parse).transpose()?;
        check(caller, Act::ReadPublic)?;
        let viewing = self.viewing(caller, viewer).await?;
        let user = self.existing(&id).await?;
        if self.hides(&viewing, &user.id).await? {
            return Err(user_not_found(&id));
        }
        Ok((user, viewing))
    }

    /// Who a read by name is made for. The viewer need not exist (a
    /// token's user not created yet blocks nobody).
    pub(crate) async fn viewing(&self, caller: &Caller, viewer: Option<UserId>) -> Result<Viewing> {
        Ok(Viewing {
            viewer: viewing_as(caller, viewer)?,
            suspended: self.stores.accounts.suspended_ids().await?,
        })
    }

    /// Whether a read by name hides `author` from `viewing`: suspended, or
    /// on the other side of a block ([`Hidden::named`]), told by two
    /// indexed reads.
    pub(crate) async fn hides(&self, viewing: &Viewing, author: &UserId) -> Result<bool> {
        let graph = &self.stores.graph;
        let (blocked, blocked_by) = match viewing.viewer.as_ref().filter(|v| *v != author) {
            None => (false, false),
            Some(v) => tokio::try_join!(
                graph.has_relation(v, Relation::Block, author),
                graph.has_relation(author, Relation::Block, v)
            )?,
        };
        let only = |on: bool| on.then(|| author.clone()).into_iter().collect();
        let hidden = Hidden::named(only(blocked), only(blocked_by));
        Ok(hidden
            .and_suspended(viewing.suspended.clone())
            .hides(author))
    }

    /// Every account a read by name hides from `viewing`, for a page of
    /// many authors' items, and what the viewer's keyword filters do in
    /// `context` (`None`: the read applies none).
    pub(crate) async fn hidden_for(
        &self,
        viewing: &Viewing,
        context: Option<FilterContext>,
    ) -> Result<Hidden> {
        let suspended = viewing.suspended.clone();
        let Some(viewer) = &viewing.viewer else {
            return Ok(Hidden::default().and_suspended(suspended));
        };
        let graph = &self.stores.graph;
        let sift = async {
            match context {
                Some(c) => self.sift(viewer, c).await,
                None => Ok(None),
            }
        };
        let (blocked, blocked_by, sift) = tokio::try_join!(
            graph.all_relations(viewer, Relation::Block),
            graph.all_related(viewer, Relation::Block),
            sift
        )?;
        Ok(Hidden::named(blocked, blocked_by)
            .and_suspended(suspended)
            .and_filtered(sift))
    }

    /// One post, as `viewer` sees it: 404 `post_not_found` when it is not
    /// stored, or hidden from the viewer (see the module's comment).
    pub async fn post(&self, caller: &Caller, id: &str, viewer: Option<&str>) -> Result<Post> {
        let id = PostId::parse(id)?;
        let viewer = viewer.map(UserId::parse).transpose()?;
        check(caller, Act::ReadPublic)?;
        let viewing = self.viewing(caller, viewer).await?;
        self.post_as(id, &viewing).await
    }

    /// The post `id` unless it is not stored or hidden from `viewing`.
    pub(crate) async fn post_as(&self, id: PostId, viewing: &Viewing) -> Result<Post> {
        let content = &self.stores.content;
        let post = content.get_posts(&[id]).await?.pop();
        let post = post.ok_or_else(|| post_not_found(id))?;
        let original = match &post.repost_of {
            Some(carried) => content.get_posts(&[carried.id]).await?.pop(),
            None => None,
        };
        let Some(authors) = shown_by_id(&post, original.as_ref()) else {
            return Err(post_not_found(id));
        };
        for author in authors {
            if self.hides(viewing, author).await? {
                return Err(post_not_found(id));
            }
        }
        Ok(post)
    }
}
