//! A user's alerts, read: the posts of the accounts they follow with the
//! `notify` option on, made since they turned it on, as notification
//! entries (`socialite_domain::notifications::alerts` decides which). Read
//! from the authors' posts in one merge, never written at fanout.

use super::threads::InStore;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::Post;
use crate::ports::IdRange;
use crate::reads::Reads;
use rustc_hash::{FxHashMap, FxHashSet};
use socialite_domain::graph::relations::Hidden;
use socialite_domain::notifications::alerts::{alert_group, alerts, before_option, first_alert};
use socialite_domain::notifications::notified::NoticeGroup;
use socialite_domain::notifications::thread_mutes::{in_one_of, MAX_THREAD_MUTES};

impl Reads {
    /// Up to `want` of `user`'s alerts below `before` (and above `above`,
    /// when only those count), newest first: of the authors `hidden` does
    /// not hide, outside the threads they muted.
    pub(super) async fn alerts(
        &self,
        user: &UserId,
        hidden: &Hidden,
        (before, above): (Option<PostId>, Option<PostId>),
        want: usize,
    ) -> Result<Vec<NoticeGroup>> {
        let subscribed = self.stores.graph.subscriptions(user).await?;
        let mut since: FxHashMap<UserId, u64> = subscribed
            .into_iter()
            .filter(|(author, _)| !hidden.hides(author))
            .collect();
        let Some(floor) = since.values().min().copied() else {
            return Ok(Vec::new());
        };
        let content = &self.stores.content;
        let muted: FxHashSet<PostId> = content
            .muted_threads(user, None, MAX_THREAD_MUTES)
            .await?
            .into_iter()
            .collect();
        let from = match above {
            Some(a) => first_alert(floor).max(PostId(a.0.saturating_add(1))),
            None => first_alert(floor),
        };
        let mut out = Vec::new();
        let mut below = before;
        while !since.is_empty() && out.len() < want {
            let authors: Vec<UserId> = since.keys().cloned().collect();
            let range = IdRange {
                below,
                from: Some(from),
            };
            let page = content.newest_by(&authors, range, want).await?;
            let ended = page.len() < want;
            below = page.last().map(|e| e.post);
            let ids: Vec<PostId> = page.iter().map(|e| e.post).collect();
            let posts: FxHashMap<PostId, Post> = content
                .get_posts(&ids)
                .await?
                .into_iter()
                .map(|p| (p.id, p))
                .collect();
            for entry in &page {
                if out.len() == want {
                    break;
                }
                let Some(&at) = since.get(&entry.author) else {
                    continue;
                };
                if before_option(entry.post, at) {
                    // Newest first: the author's posts from here on came
                    // before the option too.
                    since.remove(&entry.author);
                    continue;
                }
                let Some(post) = posts.get(&entry.post) else {
                    continue; // deleted since the page was read
                };
                if !alerts(post, user, at) {
                    continue;
                }
                let walk = &mut InStore(&**content);
                if !muted.is_empty() && in_one_of(walk, |p| muted.contains(p), post.id).await? {
                    continue;
                }
                out.push(alert_group(post.id, &post.author));
            }
            if ended {
                break;
            }
        }
        out.truncate(want);
        Ok(out)
    }
}
