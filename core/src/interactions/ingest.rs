use crate::budgets::Cost;
use crate::checks::post_not_found;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::ingest::Ingest;
use crate::metrics::metrics;
use socialite_domain::accounts::access::Caller;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::repost::Reposted;
use socialite_domain::interactions::reposts::RepostChange;
use tracing::Instrument;

impl Ingest {
    /// Likes (`like`) the post as the user, or undoes the like
    /// (idempotent); returns whether it changed. A post of a suspended
    /// author is absent, as to every reader.
    pub async fn like(&self, caller: &Caller, user: &str, post: &str, like: bool) -> Result<bool> {
        let (user, post) = (UserId::parse(user)?, PostId::parse(post)?);
        self.acting_as(caller, &user).await?;
        if like {
            let stored = self.content.get_posts(&[post]).await?.pop();
            let stored = stored.ok_or_else(|| post_not_found(post))?;
            if self.accounts.is_suspended(&stored.author).await? {
                return Err(post_not_found(post));
            }
        }
        let _write = self.enter(caller, Cost::making(like))?;
        let change = LikeChange { user, post, like };
        self.content.change_like(&change).await
    }

    /// Reposts (`repost`) the post as the user, or undoes the repost
    /// (idempotent): the reposter's item standing afterwards (none once
    /// undone) and whether it changed. A post of a suspended author is
    /// absent, as to every reader.
    pub async fn repost(
        &self,
        caller: &Caller,
        user: &str,
        post: &str,
        repost: bool,
    ) -> Result<Reposted> {
        let (user, post) = (UserId::parse(user)?, PostId::parse(post)?);
        self.acting_as(caller, &user).await?;
        if repost {
            let stored = self.content.get_posts(&[post]).await?.pop();
            let stored = stored.ok_or_else(|| post_not_found(post))?;
            if self.accounts.is_suspended(&stored.shown().author).await? {
                return Err(post_not_found(post));
            }
            // The item is newer than the post it carries.
            self.ids.advance_past(stored.shown().id);
        }
        let _write = self.enter_changing(caller, Cost::making(repost))?;
        let change = RepostChange { user, post, repost };
        let done = self
            .with_new_id(|id| {
                let span =
                    tracing::info_span!("post.repost", post = %change.post, user = %change.user);
                self.content.change_repost(&change, id).instrument(span)
            })
            .await?;
        if done.changed && repost {
            metrics().posts_ingested.inc();
        }
        Ok(done)
    }
}
