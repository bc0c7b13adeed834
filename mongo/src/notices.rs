//! Notifications on MongoDB: one document per notice in `notices`
//! (`{_id: "r:k:p:a:s", r, k, p, a, s, w, i}`: recipient, kind, post, actor,
//! source, window, id; 0 for no post or source), an entry's notices newest
//! first on `{r, k, p, w, i}`, a user's caused notices on `{a}`; and one
//! document per entry in `notice_groups` (`{_id: "r:k:p:w", r, k, p, w, n,
//! l, actors: [{i, a}]}`), a user's entries newest first on `{r, l}`. The
//! fanout worker that holds a recipient's partition writes most of them,
//! a batch at a time, so an entry under a viral post is written once per
//! batch, not once per like.

use crate::db::{db_err, TxnError, IN_CHUNK, NOTICE_GROUPS};
use crate::store::{get_i64, get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, UserId};
use socialite_domain::notifications::notified::{
    GroupKey, Notice, NoticeGroup, NoticeKey, NoticeKind,
};

fn raw(id: Option<PostId>) -> i64 {
    id.map_or(0, |p| p.0 as i64)
}

fn unraw(id: i64) -> Option<PostId> {
    (id != 0).then_some(PostId(id as u64))
}

pub(crate) fn notice_id(k: &NoticeKey) -> String {
    let (kind, post, source) = (k.kind.code(), raw(k.post), raw(k.source));
    format!("{}:{kind}:{post}:{}:{source}", k.recipient, k.actor)
}

pub(crate) fn group_id(recipient: &str, g: GroupKey) -> String {
    format!("{recipient}:{}:{}:{}", g.kind.code(), raw(g.post), g.window)
}

/// The filter of an entry's notices.
fn entry(recipient: &str, g: GroupKey) -> Document {
    doc! { "r": recipient, "k": i32::from(g.kind.code()), "p": raw(g.post), "w": g.window as i64 }
}

/// The document of a kept notice.
fn notice_doc(n: &Notice) -> Document {
    let k = &n.key;
    let mut d = entry(k.recipient.as_str(), n.group());
    d.insert("_id", notice_id(k));
    d.insert("a", k.actor.as_str());
    d.insert("s", raw(k.source));
    d.insert("i", n.id.0 as i64);
    d
}

/// The document of the recipient's entry `g`.
fn group_doc(recipient: &str, g: &NoticeGroup) -> Document {
    let actors: Vec<Document> = g
        .actors
        .iter()
        .map(|(i, a)| doc! { "i": i.0 as i64, "a": a.as_str() })
        .collect();
    let mut d = entry(recipient, g.group);
    d.insert("_id", group_id(recipient, g.group));
    d.insert("n", g.count as i64);
    d.insert("l", g.latest.0 as i64);
    d.insert("actors", actors);
    d
}

fn kind_of(d: &Document) -> Result<NoticeKind> {
    let code = get_i64(d, "k") as u8;
    NoticeKind::from_code(code).ok_or_else(|| Error::internal(format!("stored notice kind {code}")))
}

fn to_notice(d: &Document) -> Result<Notice> {
    Ok(Notice {
        key: NoticeKey {
            recipient: UserId::from_stored(get_str(d, "r")?.to_owned()),
            kind: kind_of(d)?,
            post: unraw(get_i64(d, "p")),
            actor: UserId::from_stored(get_str(d, "a")?.to_owned()),
            source: unraw(get_i64(d, "s")),
        },
        id: PostId(get_i64(d, "i") as u64),
    })
}

pub(crate) fn to_group(d: &Document) -> Result<NoticeGroup> {
    let actors = d
        .get_array("actors")
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_document())
                .map(|x| {
                    Ok((
                        PostId(get_i64(x, "i") as u64),
                        UserId::from_stored(get_str(x, "a")?.to_owned()),
                    ))
                })
                .collect::<Result<Vec<_>>>()
        })
        .unwrap_or_else(|_| Ok(Vec::new()))?;
    Ok(NoticeGroup {
        group: GroupKey {
            kind: kind_of(d)?,
            post: unraw(get_i64(d, "p")),
            window: get_i64(d, "w") as u64,
        },
        count: get_i64(d, "n").max(0) as u64,
        latest: PostId(get_i64(d, "l") as u64),
        actors,
    })
}

fn to_pair(d: &Document) -> Result<(PostId, UserId)> {
    let actor = UserId::from_stored(get_str(d, "a")?.to_owned());
    Ok((PostId(get_i64(d, "i") as u64), actor))
}

impl MongoStore {
    pub(crate) async fn notice_in(
        &self,
        s: &mut ClientSession,
        key: &NoticeKey,
    ) -> Result<Option<PostId>, TxnError> {
        let found = self
            .db
            .notices
            .find_one(doc! { "_id": notice_id(key) })
            .projection(doc! { "_id": 0, "i": 1 })
            .session(&mut *s)
            .await?;
        Ok(found.map(|d| PostId(get_i64(&d, "i") as u64)))
    }

    pub(crate) async fn notice_group_in(
        &self,
        s: &mut ClientSession,
        recipient: &str,
        g: GroupKey,
    ) -> Result<Option<NoticeGroup>, TxnError> {
        let found = self
            .db
            .notice_groups
            .find_one(doc! { "_id": group_id(recipient, g) });
        let found = found.session(&mut *s).await?;
        Ok(found.as_ref().map(to_group).transpose()?)
    }

    pub(crate) async fn group_notices_in(
        &self,
        s: &mut ClientSession,
        recipient: &str,
        g: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>, TxnError> {
        let mut cursor = self
            .db
            .notices
            .find(entry(recipient, g))
            .projection(doc! { "_id": 0, "i": 1, "a": 1 })
            .sort(doc! { "r": 1, "k": 1, "p": 1, "w": 1, "i": -1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            out.push(to_pair(&d?)?);
        }
        Ok(out)
    }

    /// Up to `limit` of the notices to or by `user`: two queries.
    pub(crate) async fn notices_of_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        limit: usize,
    ) -> Result<Vec<Notice>, TxnError> {
        let mut out = Vec::new();
        for filter in [doc! { "r": user }, doc! { "a": user }] {
            if out.len() >= limit {
                break;
            }
            let mut cursor = self
                .db
                .notices
                .find(filter)
                .limit((limit - out.len()) as i64)
                .session(&mut *s)
                .await?;
            while let Some(d) = cursor.next(&mut *s).await {
                out.push(to_notice(&d?)?);
            }
        }
        Ok(out)
    }

    /// Keeps (`active`) or removes the notice.
    pub(crate) async fn put_notice_in(
        &self,
        s: &mut ClientSession,
        n: &Notice,
        active: bool,
    ) -> Result<(), TxnError> {
        let id = notice_id(&n.key);
        if !active {
            self.db
                .notices
                .delete_one(doc! { "_id": id })
                .session(&mut *s)
                .await?;
            return Ok(());
        }
        self.db
            .notices
            .insert_one(notice_doc(n))
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// Keeps a run of new notices, and then their recipients' entries:
    /// one command for each, however many.
    pub(crate) async fn put_notices_in(
        &self,
        s: &mut ClientSession,
        notices: &[&Notice],
        entries: &[(&str, &NoticeGroup)],
    ) -> Result<(), TxnError> {
        for part in notices.chunks(IN_CHUNK) {
            let docs = part.iter().map(|n| notice_doc(n));
            self.db.notices.insert_many(docs).session(&mut *s).await?;
        }
        let updates: Vec<Document> = entries
            .iter()
            .map(|(r, g)| {
                let d = group_doc(r, g);
                let id = group_id(r, g.group);
                doc! { "q": { "_id": id }, "u": d, "upsert": true }
            })
            .collect();
        let update = ("update", "updates");
        self.db.write_run(s, update, NOTICE_GROUPS, updates).await?;
        Ok(())
    }

    /// Stores the recipient's entry, or removes it (`None`).
    pub(crate) async fn put_notice_group_in(
        &self,
        s: &mut ClientSession,
        recipient: &str,
        key: GroupKey,
        group: Option<&NoticeGroup>,
    ) -> Result<(), TxnError> {
        let id = group_id(recipient, key);
        let Some(g) = group else {
            self.db
                .notice_groups
                .delete_one(doc! { "_id": id })
                .session(&mut *s)
                .await?;
            return Ok(());
        };
        let d = group_doc(recipient, g);
        self.db
            .notice_groups
            .replace_one(doc! { "_id": id }, d)
            .upsert(true)
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// The user's entries below the place `before`, newest first.
    pub(crate) async fn notice_groups_of(
        &self,
        user: &str,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<NoticeGroup>> {
        let what = "reading notifications";
        let mut filter = doc! { "r": user };
        if let Some(b) = before {
            filter.insert("l", doc! { "$lt": b.0 as i64 });
        }
        let docs: Vec<Document> = self
            .db
            .notice_groups
            .find(filter)
            .sort(doc! { "r": 1, "l": -1, "k": -1, "p": -1, "w": -1 })
            .limit(limit as i64)
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        docs.iter().map(to_group).collect()
    }

    /// The newest notices of the user's entry below `before`.
    pub(crate) async fn entry_notices_of(
        &self,
        user: &str,
        g: GroupKey,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        let what = "reading an entry's notices";
        let mut filter = entry(user, g);
        if let Some(b) = before {
            filter.insert("i", doc! { "$lt": b.0 as i64 });
        }
        let docs: Vec<Document> = self
            .db
            .notices
            .find(filter)
            .projection(doc! { "_id": 0, "i": 1, "a": 1 })
            .sort(doc! { "r": 1, "k": 1, "p": 1, "w": 1, "i": -1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        docs.iter().map(to_pair).collect()
    }

    /// The notices of `actors` in the user's entry.
    pub(crate) async fn entry_notices_by_of(
        &self,
        user: &str,
        g: GroupKey,
        actors: &[UserId],
    ) -> Result<Vec<(PostId, UserId)>> {
        let what = "reading an entry's notices";
        let mut out = Vec::new();
        for chunk in actors.chunks(IN_CHUNK) {
            let names: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let mut filter = entry(user, g);
            filter.insert("a", doc! { "$in": names });
            let docs: Vec<Document> = self
                .db
                .notices
                .find(filter)
                .projection(doc! { "_id": 0, "i": 1, "a": 1 })
                .await
                .map_err(db_err(what))?
                .try_collect()
                .await
                .map_err(db_err(what))?;
            for d in &docs {
                out.push(to_pair(d)?);
            }
        }
        Ok(out)
    }
}
