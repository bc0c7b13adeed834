//! Notices applied to their recipients' notifications
//! ([`crate::notifications::notified`]): each notice's row, once, and its
//! entry's count, newest notice and newest actors moved with it. A batch of
//! changes is one transaction; a user's notices are forgotten a page at a
//! time ([`forget_page`]).

use crate::ids::{PostId, UserId};
use crate::notifications::notified::{
    GroupKey, Notice, NoticeChange, NoticeGroup, NoticeKey, ACTORS_SHOWN,
};
use crate::notifications::thread_mutes::in_muted_thread;
use crate::plan::{Step, Txn};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};

/// Applies `changes` (no `Forget` among them) in order; how many changed
/// anything. A notice held already, or an undoing of one not held,
/// changes nothing, so a replayed batch counts nothing twice; a notice
/// between users either of whom is gone is not made. A run of notices
/// made is applied at once ([`make_all`]).
pub async fn apply_notices<T: Txn>(
    txn: &mut T,
    changes: &[NoticeChange],
) -> Result<usize, T::Error> {
    let mut changed = 0;
    let mut rest = changes;
    while let Some(first) = rest.first() {
        let made: Vec<&Notice> = rest
            .iter()
            .map_while(|c| match c {
                NoticeChange::Made(n) => Some(n),
                _ => None,
            })
            .collect();
        if made.is_empty() {
            changed += match first {
                NoticeChange::Undone(key) => usize::from(undo(txn, key).await?),
                _ => unreachable!("forgotten a page at a time"),
            };
            rest = &rest[1..];
        } else {
            rest = &rest[made.len()..];
            changed += make_all(txn, &made).await?;
        }
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

/// Makes `made` as one after another would (a notice held already, or
/// made earlier in the run, changes nothing); how many were made. Who
/// exists is read once, and each entry once, its count, newest notice
/// and newest actors moved by all of the run's notices and written once.
async fn make_all<T: Txn>(txn: &mut T, made: &[&Notice]) -> Result<usize, T::Error> {
    let mut names: Vec<&UserId> = made
        .iter()
        .flat_map(|n| [&n.key.recipient, &n.key.actor])
        .collect();
    names.sort_unstable();
    names.dedup();
    let found: HashSet<UserId> = txn.existing_users(&names).await?.into_iter().collect();
    if made.len() > 1 {
        let keys: Vec<&NoticeKey> = made.iter().map(|n| &n.key).collect();
        let mut groups: Vec<(&UserId, GroupKey)> =
            made.iter().map(|n| (&n.key.recipient, n.group())).collect();
        groups.sort_unstable();
        groups.dedup();
        txn.read_ahead_notices(&keys, &groups).await?;
    }
    let mut seen = HashSet::with_capacity(made.len());
    let mut steps = Vec::with_capacity(made.len() + 1);
    let mut entries: BTreeMap<(&UserId, GroupKey), (Option<PostId>, NoticeGroup)> = BTreeMap::new();
    for n in made {
        let (recipient, actor) = (&n.key.recipient, &n.key.actor);
        if !seen.insert(&n.key)
            || txn.notice(&n.key).await?.is_some()
            || !found.contains(recipient)
            || !found.contains(actor)
        {
            continue;
        }
        if let Some(about) = n.key.post {
            if in_muted_thread(txn, recipient, about).await? {
                continue;
            }
        }
        let key = n.group();
        let (_, group) = match entries.entry((recipient, key)) {
            Entry::Occupied(held) => held.into_mut(),
            Entry::Vacant(first) => {
                let held = txn.notice_group(recipient, key).await?;
                let was = held.as_ref().map(|g| g.latest);
                let group = held.unwrap_or(NoticeGroup {
                    group: key,
                    count: 0,
                    latest: n.id,
                    actors: Vec::new(),
                });
                first.insert((was, group))
            }
        };
        group.count += 1;
        group.latest = group.latest.max(n.id);
        group.actors.push((n.id, actor.clone()));
        group.actors.sort_unstable_by(|a, b| b.cmp(a));
        group.actors.truncate(ACTORS_SHOWN);
        steps.push(Step::PutNotice((*n).clone()));
    }
    let made = steps.len();
    for ((recipient, _), (was, group)) in entries {
        steps.push(Step::PutNoticeGroup {
            recipient: recipient.clone(),
            group,
            was,
        });
    }
    if made > 0 {
        txn.apply(&steps).await?;
    }
    Ok(made)
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
