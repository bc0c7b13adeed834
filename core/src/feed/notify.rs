//! Notices from applied events to their recipients' notifications
//! ([`socialite_domain::notifications::notified`]): the fanout worker applies a batch's
//! notices in one write, and a deleted user's a page at a time. A post's
//! subscribers (those following its author with the `notify` option) are
//! read here, once per author a batch.

use crate::error::Result;
use crate::event::Event;
use crate::feed::Stores;
use crate::ids::UserId;
use crate::metrics::metrics;
use crate::ports::ContentStore;
use rustc_hash::FxHashMap;
use socialite_domain::deletion::cascade::DELETION_STEP;
use socialite_domain::graph::relations::{FollowOption, Relation};
use socialite_domain::notifications::notified::{
    changes_of, subscribers_told, subscribers_untold, NoticeChange,
};

/// Applies what `events` tell, in their order; how many notices changed.
pub async fn apply(stores: &Stores, events: &[Event]) -> Result<usize> {
    let subscribers = subscribers(stores, events).await?;
    let of = |author: &UserId| subscribers.get(author).map_or(&[][..], Vec::as_slice);
    let content = &*stores.content;
    let mut changed = 0;
    let mut batch = Vec::new();
    for event in events {
        let mut changes = changes_of(event);
        match event {
            Event::PostCreated { post, .. } => {
                changes.extend(subscribers_told(post, of(&post.author)))
            }
            Event::PostDeleted { post, author, .. } => {
                changes.extend(subscribers_untold(*post, author, of(author)))
            }
            _ => {}
        }
        for change in changes {
            match change {
                NoticeChange::Forget(user) => {
                    changed += flush(content, &mut batch).await?;
                    while content.forget_notices(&user, DELETION_STEP).await? {}
                }
                made_or_undone => batch.push(made_or_undone),
            }
        }
    }
    changed += flush(content, &mut batch).await?;
    Ok(changed)
}

/// Who subscribes to each author that posted (not reposted) or deleted a
/// post in `events`: one read for the batch.
async fn subscribers(stores: &Stores, events: &[Event]) -> Result<FxHashMap<UserId, Vec<UserId>>> {
    let mut authors: Vec<UserId> = events
        .iter()
        .filter_map(|event| match event {
            Event::PostCreated { post, .. } if post.repost_of.is_none() => Some(&post.author),
            Event::PostDeleted { author, .. } => Some(author),
            _ => None,
        })
        .cloned()
        .collect();
    authors.sort_unstable();
    authors.dedup();
    if authors.is_empty() {
        return Ok(FxHashMap::default());
    }
    let notify = Relation::Option(FollowOption::Notify);
    let subs = stores.graph.related_to_each(&authors, notify).await?;
    Ok(authors.into_iter().zip(subs).collect())
}

async fn flush(content: &dyn ContentStore, batch: &mut Vec<NoticeChange>) -> Result<usize> {
    if batch.is_empty() {
        return Ok(0);
    }
    let changed = content.apply_notices(batch).await?;
    metrics().notices_applied.inc_by(changed as u64);
    batch.clear();
    Ok(changed)
}
