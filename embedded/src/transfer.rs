//! The embedded store written out whole and loaded in batches
//! ([`Transfer`]). An export reads one redb read transaction from start to
//! end, so it is a consistent snapshot however long it takes and whatever
//! is written meanwhile; an import runs each batch in one write
//! transaction, each record planned by `socialite_domain::transfer::import`.

use crate::accounts;
use crate::content::to_post;
use crate::lists::edge_lists;
use crate::store::EmbeddedStore;
use crate::tables::*;
use async_trait::async_trait;
use redb::{ReadTransaction, ReadableDatabase, ReadableTable};
use serde_json::{Map, Value};
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, PostId, UserId};
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::ports::{ExportView, Standing, Transfer};
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::graph::relations::Relation;
use socialite_domain::transfer::record::Record;
use std::collections::HashSet;
use std::ops::Bound::{Excluded, Unbounded};

/// Where an export stands: the section it reads and the last key it gave.
enum Cursor {
    Users(Option<String>),
    Accounts(Option<String>),
    Follows(Option<(String, String)>),
    Relations(Option<(String, u8, String)>),
    Members(Option<(String, String)>),
    Posts(Option<u64>),
    Likes(Option<(String, String)>),
    Markers(Option<(String, u8)>),
    Kept(Option<(String, String, u64)>),
    Done,
}

struct Snapshot {
    txn: ReadTransaction,
    /// Users being deleted: left out, with every record naming them.
    deleting: HashSet<String>,
    cursor: Cursor,
}

fn from<K>(after: Option<K>) -> (std::ops::Bound<K>, std::ops::Bound<K>) {
    (after.map_or(Unbounded, Excluded), Unbounded)
}

impl Snapshot {
    fn gone(&self, user: &str) -> bool {
        self.deleting.contains(user)
    }

    /// Up to `limit` records of the cursor's section after its key; moves
    /// the cursor past the keys it read, or to the next section when it
    /// read none.
    fn page(&mut self, limit: usize) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        let cursor = std::mem::replace(&mut self.cursor, Cursor::Done);
        self.cursor = match cursor {
            Cursor::Users(after) => self.users(after, limit, &mut out)?,
            Cursor::Accounts(after) => self.accounts(after, limit, &mut out)?,
            Cursor::Follows(after) => self.follows(after, limit, &mut out)?,
            Cursor::Relations(after) => self.relations(after, limit, &mut out)?,
            Cursor::Members(after) => self.members(after, limit, &mut out)?,
            Cursor::Posts(after) => self.posts(after, limit, &mut out)?,
            Cursor::Likes(after) => self.likes(after, limit, &mut out)?,
            Cursor::Markers(after) => self.markers(after, limit, &mut out)?,
            Cursor::Kept(after) => self.kept(after, limit, &mut out)?,
            Cursor::Done => Cursor::Done,
        };
        Ok(out)
    }

    fn users(&self, after: Option<String>, limit: usize, out: &mut Vec<Record>) -> Result<Cursor> {
        let table = self.txn.open_table(USERS).store()?;
        let mut last = None;
        for item in table
            .range::<&str>(from(after.as_deref()))
            .store()?
            .take(limit)
        {
            let (k, v) = item.store()?;
            last = Some(k.value().to_owned());
            if self.gone(k.value()) {
                continue;
            }
            let profile = match v.value() {
                [] => None,
                bytes => Some(decode::<Map<String, Value>>(bytes)?),
            };
            let id = UserId::from_stored(k.value().to_owned());
            out.push(Record::User { id, profile });
        }
        Ok(advance(last, Cursor::Users, Cursor::Accounts(None)))
    }

    fn accounts(
        &self,
        after: Option<String>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(ACCOUNTS).store()?;
        let mut last = None;
        for item in table
            .range::<&str>(from(after.as_deref()))
            .store()?
            .take(limit)
        {
            let (k, _) = item.store()?;
            last = Some(k.value().to_owned());
            let standing = accounts::load(&table, k.value())?;
            if standing != Standing::default() {
                let id = UserId::from_stored(k.value().to_owned());
                out.push(Record::Account { id, standing });
            }
        }
        Ok(advance(last, Cursor::Accounts, Cursor::Follows(None)))
    }

    fn follows(
        &self,
        after: Option<(String, String)>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(FOLLOWING).store()?;
        let times = self.txn.open_table(EDGE_TIMES).store()?;
        let filed = self.txn.open_table(EDGE_LISTS).store()?;
        let key = after.as_ref().map(|(f, t)| (f.as_str(), t.as_str()));
        let mut last = None;
        for item in table.range::<(&str, &str)>(from(key)).store()?.take(limit) {
            let (k, _) = item.store()?;
            let (f, t) = k.value();
            last = Some((f.to_owned(), t.to_owned()));
            if self.gone(f) || self.gone(t) {
                continue;
            }
            out.push(Record::Follow {
                follower: UserId::from_stored(f.to_owned()),
                followee: UserId::from_stored(t.to_owned()),
                at_ms: times.get((f, t)).store()?.map_or(0, |g| g.value()),
                lists: edge_lists(&filed, f, t)?,
            });
        }
        Ok(advance(last, Cursor::Follows, Cursor::Relations(None)))
    }

    fn relations(
        &self,
        after: Option<(String, u8, String)>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(RELATIONS).store()?;
        let key = after.as_ref().map(|(u, c, t)| (u.as_str(), *c, t.as_str()));
        let mut last = None;
        for item in table
            .range::<(&str, u8, &str)>(from(key))
            .store()?
            .take(limit)
        {
            let (k, _) = item.store()?;
            let (u, c, t) = k.value();
            last = Some((u.to_owned(), c, t.to_owned()));
            let Some(relation) = Relation::from_code(c) else {
                continue;
            };
            if !self.gone(u) && !self.gone(t) {
                out.push(Record::Relation {
                    user: UserId::from_stored(u.to_owned()),
                    relation,
                    target: UserId::from_stored(t.to_owned()),
                });
            }
        }
        Ok(advance(last, Cursor::Relations, Cursor::Members(None)))
    }

    fn members(
        &self,
        after: Option<(String, String)>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(GROUP_MEMBERS).store()?;
        let key = after.as_ref().map(|(g, u)| (g.as_str(), u.as_str()));
        let mut last = None;
        for item in table.range::<(&str, &str)>(from(key)).store()?.take(limit) {
            let (k, _) = item.store()?;
            let (g, u) = k.value();
            last = Some((g.to_owned(), u.to_owned()));
            if !self.gone(u) {
                out.push(Record::Member {
                    group: GroupName::from_stored(g),
                    user: UserId::from_stored(u.to_owned()),
                });
            }
        }
        Ok(advance(last, Cursor::Members, Cursor::Posts(None)))
    }

    fn posts(&self, after: Option<u64>, limit: usize, out: &mut Vec<Record>) -> Result<Cursor> {
        let table = self.txn.open_table(POSTS).store()?;
        let mut last = None;
        for item in table.range::<u64>(from(after)).store()?.take(limit) {
            let (k, v) = item.store()?;
            last = Some(k.value());
            let mut post = to_post(k.value(), v.value())?;
            // A repost of a deleted post names nothing: it is left out.
            let carried = match &post.repost_of {
                None => true,
                Some(o) => !self.gone(o.author.as_str()) && table.get(o.id.0).store()?.is_some(),
            };
            if carried && !self.gone(post.author.as_str()) {
                post.mentions.retain(|m| !self.gone(m.as_str()));
                out.push(Record::post(post));
            }
        }
        Ok(advance(last, Cursor::Posts, Cursor::Likes(None)))
    }

    /// Likes of stored posts whose author and liker are not being deleted
    /// (a deleted post's like rows name nothing: see
    /// `socialite_domain::interactions::likes`).
    fn likes(
        &self,
        after: Option<(String, String)>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(LIKES).store()?;
        let posts = self.txn.open_table(POSTS).store()?;
        let key = after.as_ref().map(|(p, u)| (p.as_str(), u.as_str()));
        let mut last = None;
        for item in table.range::<(&str, &str)>(from(key)).store()?.take(limit) {
            let (k, at) = item.store()?;
            let (p, u) = k.value();
            last = Some((p.to_owned(), u.to_owned()));
            let post = PostId::parse(p)?;
            let Some(bytes) = posts.get(post.0).store()? else {
                continue;
            };
            let author = to_post(post.0, bytes.value())?.author;
            if !self.gone(u) && !self.gone(author.as_str()) {
                out.push(Record::Like {
                    post,
                    user: UserId::from_stored(u.to_owned()),
                    at_ms: at.value(),
                });
            }
        }
        Ok(advance(last, Cursor::Likes, Cursor::Markers(None)))
    }

    fn markers(
        &self,
        after: Option<(String, u8)>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(MARKERS).store()?;
        let key = after.as_ref().map(|(u, t)| (u.as_str(), *t));
        let mut last = None;
        for item in table.range::<(&str, u8)>(from(key)).store()?.take(limit) {
            let (k, v) = item.store()?;
            let (u, code) = k.value();
            last = Some((u.to_owned(), code));
            let (Some(timeline), false) = (MarkerTimeline::from_code(code), self.gone(u)) else {
                continue;
            };
            let (post, at_ms) = v.value();
            out.push(Record::Marker {
                user: UserId::from_stored(u.to_owned()),
                marker: Marker {
                    timeline,
                    last_read: PostId(post),
                    at_ms,
                },
            });
        }
        Ok(advance(last, Cursor::Markers, Cursor::Kept(None)))
    }

    fn kept(
        &self,
        after: Option<(String, String, u64)>,
        limit: usize,
        out: &mut Vec<Record>,
    ) -> Result<Cursor> {
        let table = self.txn.open_table(KEPT).store()?;
        let key = after.as_ref().map(|(u, c, p)| (u.as_str(), c.as_str(), *p));
        let mut last = None;
        for item in table
            .range::<(&str, &str, u64)>(from(key))
            .store()?
            .take(limit)
        {
            let (k, at) = item.store()?;
            let (u, c, post) = k.value();
            last = Some((u.to_owned(), c.to_owned(), post));
            if self.gone(u) {
                continue;
            }
            out.push(Record::Kept {
                collection: Collection::parse(c)?,
                user: UserId::from_stored(u.to_owned()),
                kept: Kept {
                    post: PostId(post),
                    at_ms: at.value(),
                },
            });
        }
        Ok(advance(last, Cursor::Kept, Cursor::Done))
    }
}

/// The cursor after a page of a section: on after `last`, the page's last
/// key, or the next section when the page read none.
fn advance<K>(last: Option<K>, same: fn(Option<K>) -> Cursor, then: Cursor) -> Cursor {
    match last {
        Some(k) => same(Some(k)),
        None => then,
    }
}

#[async_trait]
impl ExportView for Snapshot {
    async fn next(&mut self, limit: usize) -> Result<Vec<Record>> {
        let limit = limit.max(1);
        let mut out = Vec::new();
        while out.len() < limit && !matches!(self.cursor, Cursor::Done) {
            out.extend(self.page(limit - out.len())?);
        }
        Ok(out)
    }
}

#[async_trait]
impl Transfer for EmbeddedStore {
    async fn export_view(&self) -> Result<Box<dyn ExportView>> {
        let txn = self.db()?.begin_read().store()?;
        let mut deleting = HashSet::new();
        for item in txn.open_table(DELETING).store()?.iter().store()? {
            deleting.insert(item.store()?.0.value().to_owned());
        }
        Ok(Box::new(Snapshot {
            txn,
            deleting,
            cursor: Cursor::Users(None),
        }))
    }
}
