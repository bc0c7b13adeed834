//! Notifications in `content.redb`: each notice by its key, by its entry
//! (in time order) and by its actor, and each entry of a user's
//! notifications with its place in their order, as
//! `socialite_domain::notifications::notify` reads and writes them.

use crate::tables::*;
use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, UserId};
use socialite_core::plan::Step;
use socialite_domain::notifications::notified::{
    GroupKey, Notice, NoticeGroup, NoticeKey, NoticeKind, WINDOW_MS,
};

fn raw(id: Option<PostId>) -> u64 {
    id.map_or(0, |p| p.0)
}

fn unraw(id: u64) -> Option<PostId> {
    (id != 0).then_some(PostId(id))
}

fn kind_of(code: u8) -> Result<NoticeKind> {
    NoticeKind::from_code(code).ok_or_else(|| Error::internal(format!("stored notice kind {code}")))
}

/// The id of the notice `key`, if it is kept.
pub(crate) fn get(txn: &WriteTransaction, key: &NoticeKey) -> Result<Option<PostId>> {
    let table = txn.open_table(NOTICES).store()?;
    let k = (
        key.recipient.as_str(),
        key.kind.code(),
        raw(key.post),
        key.actor.as_str(),
        raw(key.source),
    );
    let found = table.get(k).store()?.map(|g| PostId(g.value()));
    Ok(found)
}

/// Keeps (`active`) or removes the notice's rows.
pub(crate) fn put(txn: &WriteTransaction, n: &Notice, active: bool) -> Result<()> {
    let k = &n.key;
    let (r, a, kind) = (k.recipient.as_str(), k.actor.as_str(), k.kind.code());
    let (post, source, id) = (raw(k.post), raw(k.source), n.id.0);
    let window = n.group().window;
    let mut by_key = txn.open_table(NOTICES).store()?;
    let mut by_actor = txn.open_table(NOTICES_BY_ACTOR).store()?;
    let mut by_entry = txn.open_table(ENTRY_NOTICES).store()?;
    if active {
        by_key.insert((r, kind, post, a, source), id).store()?;
        by_actor.insert((a, r, kind, post, source), id).store()?;
        by_entry
            .insert((r, kind, post, window, id, a), source)
            .store()?;
    } else {
        by_key.remove((r, kind, post, a, source)).store()?;
        by_actor.remove((a, r, kind, post, source)).store()?;
        by_entry.remove((r, kind, post, window, id, a)).store()?;
    }
    Ok(())
}

/// Keeps the notices of a run of `Step::PutNotice` (a batch's, as
/// `notify` makes a run at once): each table's rows inserted in its key
/// order, which touches each page once where random order reads one per
/// row.
pub(crate) fn put_run(txn: &WriteTransaction, run: &[Step]) -> Result<()> {
    let mut rows: Vec<(&str, u8, u64, &str, u64, u64, u64)> = run
        .iter()
        .filter_map(|s| match s {
            Step::PutNotice(n) => {
                let k = &n.key;
                let (post, source) = (raw(k.post), raw(k.source));
                let window = n.group().window;
                let (r, a) = (k.recipient.as_str(), k.actor.as_str());
                Some((r, k.kind.code(), post, a, source, window, n.id.0))
            }
            _ => None,
        })
        .collect();
    rows.sort_unstable();
    let mut by_key = txn.open_table(NOTICES).store()?;
    for &(r, kind, post, a, source, _, id) in &rows {
        by_key.insert((r, kind, post, a, source), id).store()?;
    }
    let mut by_entry = txn.open_table(ENTRY_NOTICES).store()?;
    for &(r, kind, post, a, source, window, id) in &rows {
        by_entry
            .insert((r, kind, post, window, id, a), source)
            .store()?;
    }
    rows.sort_unstable_by(|x, y| (x.3, x.0, x.1, x.2, x.4).cmp(&(y.3, y.0, y.1, y.2, y.4)));
    let mut by_actor = txn.open_table(NOTICES_BY_ACTOR).store()?;
    for &(r, kind, post, a, source, _, id) in &rows {
        by_actor.insert((a, r, kind, post, source), id).store()?;
    }
    Ok(())
}

/// The recipient's entry `group`, if it has notices.
pub(crate) fn group<T: ReadableTable<(&'static str, u8, u64, u64), &'static [u8]>>(
    table: &T,
    recipient: &str,
    group: GroupKey,
) -> Result<Option<NoticeGroup>> {
    let k = (recipient, group.kind.code(), raw(group.post), group.window);
    let Some(bytes) = table.get(k).store()? else {
        return Ok(None);
    };
    let r: GroupRecord = decode(bytes.value())?;
    Ok(Some(NoticeGroup {
        group,
        count: r.count,
        latest: PostId(r.latest),
        actors: r
            .actors
            .into_iter()
            .map(|(id, a)| (PostId(id), UserId::from_stored(a)))
            .collect(),
    }))
}

/// Stores the recipient's entry, moving its place from `was`; or removes
/// it (`None`) from its place `latest`.
pub(crate) fn put_group(
    txn: &WriteTransaction,
    recipient: &str,
    key: GroupKey,
    group: Option<&NoticeGroup>,
    was: Option<PostId>,
) -> Result<()> {
    let (kind, post, window) = (key.kind.code(), raw(key.post), key.window);
    let mut groups = txn.open_table(NOTICE_GROUPS).store()?;
    let mut order = txn.open_table(NOTICE_ORDER).store()?;
    if let Some(was) = was {
        order
            .remove((recipient, was.0, kind, post, window))
            .store()?;
    }
    let Some(g) = group else {
        groups.remove((recipient, kind, post, window)).store()?;
        return Ok(());
    };
    let record = GroupRecord {
        count: g.count,
        latest: g.latest.0,
        actors: g
            .actors
            .iter()
            .map(|(id, a)| (id.0, a.to_string()))
            .collect(),
    };
    groups
        .insert((recipient, kind, post, window), encode(&record).as_slice())
        .store()?;
    order
        .insert((recipient, g.latest.0, kind, post, window), ())
        .store()?;
    Ok(())
}

/// The newest notices of the recipient's entry below `before`, newest
/// first, at most `limit`: (id, actor).
pub(crate) fn entry_notices<
    T: ReadableTable<(&'static str, u8, u64, u64, u64, &'static str), u64>,
>(
    table: &T,
    recipient: &str,
    key: GroupKey,
    before: Option<PostId>,
    limit: usize,
) -> Result<Vec<(PostId, UserId)>> {
    let (kind, post, w) = (key.kind.code(), raw(key.post), key.window);
    let below = before.map_or(u64::MAX, |b| b.0.saturating_sub(1));
    let range = (recipient, kind, post, w, 0, "")..=(recipient, kind, post, w, below, "\u{10FFFF}");
    let mut out = Vec::new();
    for row in table.range(range).store()?.rev().take(limit) {
        let (k, _) = row.store()?;
        let (_, _, _, _, id, actor) = k.value();
        out.push((PostId(id), UserId::from_stored(actor.to_owned())));
    }
    Ok(out)
}

/// Up to `limit` of the notices to or by `user`.
pub(crate) fn of_user(txn: &WriteTransaction, user: &str, limit: usize) -> Result<Vec<Notice>> {
    let mut out = Vec::new();
    let to = txn.open_table(NOTICES).store()?;
    let range = (user, 0, 0, "", 0)..=(user, u8::MAX, u64::MAX, "\u{10FFFF}", u64::MAX);
    for row in to.range(range).store()?.take(limit) {
        let (k, v) = row.store()?;
        let (r, kind, post, a, source) = k.value();
        out.push(notice(r, kind_of(kind)?, post, a, source, v.value()));
    }
    let by = txn.open_table(NOTICES_BY_ACTOR).store()?;
    let range = (user, "", 0, 0, 0)..=(user, "\u{10FFFF}", u8::MAX, u64::MAX, u64::MAX);
    for row in by.range(range).store()?.take(limit - out.len()) {
        let (k, v) = row.store()?;
        let (a, r, kind, post, source) = k.value();
        out.push(notice(r, kind_of(kind)?, post, a, source, v.value()));
    }
    Ok(out)
}

fn notice(r: &str, kind: NoticeKind, post: u64, a: &str, source: u64, id: u64) -> Notice {
    Notice {
        key: NoticeKey {
            recipient: UserId::from_stored(r.to_owned()),
            kind,
            post: unraw(post),
            actor: UserId::from_stored(a.to_owned()),
            source: unraw(source),
        },
        id: PostId(id),
    }
}

/// The user's entries below the place `before`, newest first.
pub(crate) fn entries(
    txn: &ReadTransaction,
    user: &str,
    before: Option<PostId>,
    limit: usize,
) -> Result<Vec<NoticeGroup>> {
    let order = txn.open_table(NOTICE_ORDER).store()?;
    let groups = txn.open_table(NOTICE_GROUPS).store()?;
    let below = before.map_or(u64::MAX, |b| b.0.saturating_sub(1));
    let range = (user, 0, 0, 0, 0)..=(user, below, u8::MAX, u64::MAX, u64::MAX);
    let mut out = Vec::new();
    for row in order.range(range).store()?.rev().take(limit) {
        let (k, _) = row.store()?;
        let (_, _, kind, post, window) = k.value();
        let key = GroupKey {
            kind: kind_of(kind)?,
            post: unraw(post),
            window,
        };
        if let Some(g) = group(&groups, user, key)? {
            out.push(g);
        }
    }
    Ok(out)
}

/// The notices of `actors` in the user's entry: (id, actor).
pub(crate) fn by_actors(
    txn: &ReadTransaction,
    user: &str,
    key: GroupKey,
    actors: &[UserId],
) -> Result<Vec<(PostId, UserId)>> {
    let table = txn.open_table(NOTICES).store()?;
    let (kind, post) = (key.kind.code(), raw(key.post));
    let mut out = Vec::new();
    for a in actors {
        let range = (user, kind, post, a.as_str(), 0)..=(user, kind, post, a.as_str(), u64::MAX);
        for row in table.range(range).store()? {
            let id = PostId(row.store()?.1.value());
            // Of this entry's window.
            if id.unix_ms() / WINDOW_MS == key.window {
                out.push((id, a.clone()));
            }
        }
    }
    Ok(out)
}
