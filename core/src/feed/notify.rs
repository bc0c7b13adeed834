//! Notices from applied events to their recipients' notifications
//! ([`socialite_domain::notifications::notified`]): the fanout worker applies a batch's
//! notices in one write, and a deleted user's a page at a time.

use crate::error::Result;
use crate::event::Event;
use crate::metrics::metrics;
use crate::ports::ContentStore;
use socialite_domain::deletion::cascade::DELETION_STEP;
use socialite_domain::notifications::notified::{changes_of, NoticeChange};

/// Applies what `events` tell, in their order; how many notices changed.
pub async fn apply(content: &dyn ContentStore, events: &[Event]) -> Result<usize> {
    let mut changed = 0;
    let mut batch = Vec::new();
    for change in events.iter().flat_map(changes_of) {
        match change {
            NoticeChange::Forget(user) => {
                changed += flush(content, &mut batch).await?;
                while content.forget_notices(&user, DELETION_STEP).await? {}
            }
            made_or_undone => batch.push(made_or_undone),
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
