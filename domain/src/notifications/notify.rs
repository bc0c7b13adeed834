//! Notices applied to their recipients' notifications
//! ([`crate::notifications::notified`]): each notice's row, once, and its
//! entry's count, newest notice and newest actors moved with it. A batch of
//! changes is one transaction; a user's notices are forgotten a page at a
//! time ([`forget_page`]).

use crate::ids::UserId;
use crate::notifications::notified::{Notice, NoticeChange, NoticeGroup, NoticeKey, ACTORS_SHOWN};
use crate::notifications::thread_mutes::in_muted_thread;
use crate::plan::{Step, Txn};

/// Applies `changes` (no `Forget` among them) in order; how many changed
/// anything. A notice held already, or an undoing of one not held,
/// changes nothing, so a replayed batch counts nothing twice; a notice
/// between users either of whom is gone is not made.
pub async fn apply_notices<T: Txn>(
    txn: &mut T,
    changes: &[NoticeChange],
) -> Result<usize, T::Error> {
    let mut changed = 0;
    for change in changes {
        let done = match change {
            NoticeChange::Made(n) => make(txn, n).await?,
            NoticeChange::Undone(key) => undo(txn, key).await?,
            NoticeChange::Forget(_) => unreachable!("forgotten a page at a time"),
        };
        changed += usize::from(done);
    }
    Ok(changed)
}

/// Forgets up to `limit` of the notices to or by `user`; whether more
/// remain.
pub async fn forget_page<T: Txn>(
    txn: &mut T,
    user: &UserId,
    limit: usize,
) -> Result<bool, T::Error> {
    let page = txn.notices_of(user, limit).await?;
    for n in &page {
        undo(txn, &n.key).await?;
    }
    Ok(page.len() == limit)
}

async fn make<T: Txn>(txn: &mut T, n: &Notice) -> Result<bool, T::Error> {
    if txn.notice(&n.key).await?.is_some() {
        return Ok(false);
    }
    let (recipient, actor) = (&n.key.recipient, &n.key.actor);
    if txn.existing_users(&[recipient, actor]).await?.len() < 2 {
        return Ok(false);
    }
    if let Some(about) = n.key.post {
        if in_muted_thread(txn, recipient, about).await? {
            return Ok(false);
        }
    }
    let key = n.group();
    let held = txn.notice_group(recipient, key).await?;
    let was = held.as_ref().map(|g| g.latest);
    let mut group = held.unwrap_or(NoticeGroup {
        group: key,
        count: 0,
        latest: n.id,
        actors: Vec::new(),
    });
    group.count += 1;
    group.latest = group.latest.max(n.id);
    group.actors.push((n.id, actor.clone()));
    group.actors.sort_unstable_by(|a, b| b.cmp(a));
    group.actors.truncate(ACTORS_SHOWN);
    let steps = [
        Step::PutNotice(n.clone()),
        Step::PutNoticeGroup {
            recipient: recipient.clone(),
            group,
            was,
        },
    ];
    txn.apply(&steps).await?;
    Ok(true)
}

async fn undo<T: Txn>(txn: &mut T, key: &NoticeKey) -> Result<bool, T::Error> {
    let Some(id) = txn.notice(key).await? else {
        return Ok(false);
    };
    let notice = Notice {
        key: key.clone(),
        id,
    };
    let recipient = &key.recipient;
    let group_key = notice.group();
    txn.apply(&[Step::RemoveNotice(notice)]).await?;
    let Some(mut group) = txn.notice_group(recipient, group_key).await? else {
        return Ok(true);
    };
    let was = Some(group.latest);
    group.count = group.count.saturating_sub(1);
    let step = if group.count == 0 {
        Step::RemoveNoticeGroup {
            recipient: recipient.clone(),
            group: group_key,
            latest: group.latest,
        }
    } else {
        refill(txn, recipient, &mut group).await?;
        Step::PutNoticeGroup {
            recipient: recipient.clone(),
            group,
            was,
        }
    };
    txn.apply(&[step]).await?;
    Ok(true)
}

/// The group's newest notice and actors, read again after a removal.
async fn refill<T: Txn>(
    txn: &mut T,
    recipient: &UserId,
    group: &mut NoticeGroup,
) -> Result<(), T::Error> {
    let newest = txn
        .group_notices(recipient, group.group, ACTORS_SHOWN)
        .await?;
    if let Some((latest, _)) = newest.first() {
        group.latest = *latest;
    }
    group.actors = newest;
    Ok(())
}
