//! Bookmarks: posts a user saves for later, private to them. A user (or a
//! server key acting for them) bookmarks a post they may see, removes the
//! bookmark, and pages through them, newest bookmarked first. They are the
//! collection `bookmarks` of the posts users keep
//! (`socialite_domain::collections`): stored by every backend, taken out
//! when their post is deleted, gone with their user, exported, imported
//! and replayed as every collection is.

use crate::budgets::Cost;
use crate::checks::post_not_found;
use crate::error::{Error, Result};
use crate::ids::{PostId, UserId};
use crate::ingest::Ingest;
use crate::model::collection::{Collection, Kept};
use crate::model::{page_size, Page, Post};
use crate::reads::Reads;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::collections::KeepChange;
use socialite_domain::graph::relations::Relation;
use std::collections::HashMap;

/// The collection bookmarks are kept in.
pub const BOOKMARKS: Collection = Collection::named("bookmarks");

impl Ingest {
    /// Bookmarks the post for the user (`on`), or removes the bookmark
    /// (idempotent); whether it changed. A repost's item stands for the
    /// post it carries, as everywhere a reader acts on a post. A post the
    /// user may not see (not stored, its author suspended, a block either
    /// way) is `post_not_found`.
    pub async fn bookmark(
        &self,
        caller: &Caller,
        user: &str,
        post: &str,
        on: bool,
    ) -> Result<bool> {
        self.keep_for(caller, user, post, on, BOOKMARKS).await
    }

    /// Puts the post in the user's `collection` (`on`) or takes it out, as
    /// [`Self::bookmark`] does. A collection the ranked orders read
    /// (`crate::reads::ranked`) changes what a page shows: its writes
    /// advance the write epoch.
    pub(crate) async fn keep_for(
        &self,
        caller: &Caller,
        user: &str,
        post: &str,
        on: bool,
        collection: Collection,
    ) -> Result<bool> {
        let (user, id) = (UserId::parse(user)?, PostId::parse(post)?);
        self.acting_as(caller, &user).await?;
        let stored = self.content.get_posts(&[id]).await?.pop();
        let post = match (stored, on) {
            (Some(stored), _) => stored.shown(),
            // Gone: its deletion took it out of every collection already.
            (None, false) => return Ok(false),
            (None, true) => return Err(post_not_found(id)),
        };
        if on && self.hidden_from(&user, &post.author).await? {
            return Err(post_not_found(id));
        }
        let _write = self.enter(caller, Cost::making(on))?;
        let _changing =
            (collection != BOOKMARKS).then(|| self.epoch.advancing_for(vec![user.clone()]));
        let change = KeepChange {
            collection,
            user,
            post: post.id,
            keep: on,
        };
        self.content.change_kept(&change).await
    }

    /// Whether `author`'s posts are hidden from `user`: suspended, or a
    /// block stands between them.
    async fn hidden_from(&self, user: &UserId, author: &UserId) -> Result<bool> {
        if self.accounts.is_suspended(author).await? {
            return Ok(true);
        }
        let (blocks, blocked) = tokio::try_join!(
            self.graph.has_relation(user, Relation::Block, author),
            self.graph.has_relation(author, Relation::Block, user)
        )?;
        Ok(blocks || blocked)
    }
}

impl Reads {
    /// The user's bookmarks, newest bookmarked first, each with when it was
    /// bookmarked: only the user reads them (or a server key, for them). A
    /// post hidden from the user since (its author suspended, a block)
    /// leaves a page shorter; the cursor is the page's last bookmark, so
    /// paging stays stable under new bookmarks.
    pub async fn bookmarks(
        &self,
        caller: &Caller,
        user: &str,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<(Post, u64), String>> {
        let user = UserId::parse(user)?;
        check(caller, Act::ReadOwn(&user))?;
        let limit = page_size(limit)?;
        let before = cursor.map(decode_cursor).transpose()?;
        self.existing(&user).await?;
        let content = &self.stores.content;
        let mut kept = content.kept(&BOOKMARKS, &user, before, limit + 1).await?;
        let next_cursor = (kept.len() > limit).then(|| encode_cursor(&kept[limit - 1]));
        kept.truncate(limit);
        let ids: Vec<PostId> = kept.iter().map(|k| k.post).collect();
        let mut posts: HashMap<PostId, Post> = content
            .get_posts(&ids)
            .await?
            .into_iter()
            .map(|p| (p.id, p))
            .collect();
        let viewing = self.viewing(caller, Some(user)).await?;
        let hidden = self.hidden_for(&viewing, None).await?;
        let items = kept
            .iter()
            .filter_map(|k| posts.remove(&k.post).map(|p| (p, k.at_ms)))
            .filter(|(p, _)| !hidden.hides(&p.author))
            .collect();
        Ok(Page { items, next_cursor })
    }
}

/// A page's cursor: its last bookmark's time and post, as hex text.
fn encode_cursor(last: &Kept) -> String {
    let text = format!("{}:{}", last.at_ms, last.post);
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_cursor(cursor: &str) -> Result<(u64, PostId)> {
    let bad = || Error::invalid("invalid_cursor", "cursor is not one this API issued");
    let bytes = (0..cursor.len())
        .step_by(2)
        .map(|i| {
            cursor
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (at, post) = text.split_once(':').ok_or_else(bad)?;
    let at = at.parse().map_err(|_| bad())?;
    Ok((at, PostId::parse(post).map_err(|_| bad())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_what_was_not_issued() {
        let last = Kept {
            post: PostId(0x0550_f1a2_b3c4_0000),
            at_ms: 1_700_000_000_123,
        };
        let cursor = encode_cursor(&last);
        assert_eq!(decode_cursor(&cursor).unwrap(), (last.at_ms, last.post));
        for bad in ["", "x", "zz", "2f2f", "ff", "313a"] {
            assert_eq!(
                decode_cursor(bad).unwrap_err().code(),
                "invalid_cursor",
                "{bad}"
            );
        }
    }
}
