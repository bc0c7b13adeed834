use crate::budgets::Cost;
use crate::checks::post_not_found;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::ingest::Ingest;
use crate::metrics::metrics;
use crate::model::{json_object, validate_message, Post, PostRef};
use serde_json::Value;
use socialite_domain::accounts::access::{authenticated, check, Act, Caller};
use socialite_domain::feed::hybrid::Hybrid;
use socialite_domain::posts::mentions::candidates;
use tracing::Instrument;

impl Ingest {
    pub async fn create_post(
        &self,
        caller: &Caller,
        author: &str,
        message: String,
        data: Option<Value>,
    ) -> Result<Post> {
        self.create_reply(caller, author, message, data, None).await
    }

    /// Posts as `author`; with `in_reply_to`, a reply to that post (the
    /// post a repost carries, for a repost): refused while either author
    /// blocks the other, and absent (`post_not_found`) when the post is
    /// not stored or its author is suspended.
    pub async fn create_reply(
        &self,
        caller: &Caller,
        author: &str,
        message: String,
        data: Option<Value>,
        in_reply_to: Option<&str>,
    ) -> Result<Post> {
        let author = UserId::parse(author)?;
        let in_reply_to = in_reply_to.map(PostId::parse).transpose()?;
        self.acting_as(caller, &author).await?;
        validate_message(&message)?;
        let mentions = candidates(&message)?;
        let data = data.map(|d| json_object("data", d)).transpose()?;
        let reply_to = match in_reply_to {
            None => None,
            Some(id) => Some(self.answerable(id).await?),
        };
        let _write = self.enter(caller, Cost::Create)?;
        if let Some(answered) = &reply_to {
            // Newer than the post it answers, whichever producer made that.
            self.ids.advance_past(answered.id);
        }
        let mut post = Post::written(PostId(0), author, message, data, mentions);
        post.reply_to = reply_to;
        let post = self
            .with_new_id(|id| {
                // The post's span: its event carries this trace to the workers.
                let span = tracing::info_span!("post.create", post = %id, author = %post.author);
                let post = Post { id, ..post.clone() };
                self.content.create_post(post).instrument(span)
            })
            .await?;
        metrics().posts_ingested.inc();
        // A post reaches pages through its timelines, unless its author's
        // posts are merged at read time: then the pages of their followers.
        if self.hybrid != Hybrid::Off && self.marks.may_hold(&post.author) {
            self.marks.posted.posted(&post.author);
        }
        Ok(post)
    }

    /// The post a reply to `id` answers, as readers see it: stored, and
    /// its author not suspended (the store checks it again as it writes).
    pub(crate) async fn answerable(&self, id: PostId) -> Result<PostRef> {
        let stored = self.content.get_posts(&[id]).await?.pop();
        let answered = stored.ok_or_else(|| post_not_found(id))?.shown();
        if self.accounts.is_suspended(&answered.author).await? {
            return Err(post_not_found(id));
        }
        Ok(answered)
    }

    /// Who may delete a post depends on its author, so the post is read
    /// first (once the caller is known at all).
    pub async fn delete_post(&self, caller: &Caller, id: &str) -> Result<Post> {
        let id = PostId::parse(id)?;
        authenticated(caller)?;
        let post = self.content.get_posts(&[id]).await?.pop();
        let post = post.ok_or_else(|| post_not_found(id))?;
        check(caller, Act::DeletePostOf(&post.author))?;
        let _write = self.enter_changing(caller, Cost::Delete)?;
        self.content
            .delete_post(id)
            .await?
            .ok_or_else(|| post_not_found(id))
    }
}
