//! Notices from applied events to their recipients' notifications
//! ([`socialite_domain::notifications::notified`]): the fanout worker applies a batch's
//! notices in one write, and a deleted user's a page at a time. The alerts
//! of `notify` are not among them: they are derived when notifications are
//! read ([`socialite_domain::notifications::alerts`]).

use crate::error::Result;
use crate::event::Event;
use crate::feed::Stores;
use crate::metrics::metrics;
use crate::ports::ContentStore;
use socialite_domain::deletion::cascade::DELETION_STEP;
use socialite_domain::notifications::notified::{changes_of, NoticeChange};

/// Applies what `events` tell, in their order; how many notices changed.
pub async fn apply(stores: &Stores, events: &[Event]) -> Result<usize> {
    let content = &*stores.content;
    let mut changed = 0;
    let mut batch = Vec::new();
    for event in events {
        for change in changes_of(event) {
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

async fn flush(content: &dyn ContentStore, batch: &mut Vec<NoticeChange>) -> Result<usize> {
    if batch.is_empty() {
        return Ok(0);
    }
    let changed = content.apply_notices(batch).await?;
    metrics().notices_applied.inc_by(changed as u64);
    batch.clear();
    Ok(changed)
}
