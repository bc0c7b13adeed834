//! The embedded store written out whole and loaded in batches
//! ([`Transfer`]). An export reads one redb read transaction from start to
//! end, so it is a consistent snapshot however long it takes and whatever
//! is written meanwhile: each section's table a page at a time, in its key
//! order, as core's walk asks (`socialite_core::transfer::walk`, which
//! decides the order and what is left out). An import runs each batch in
//! one write transaction, each record planned by
//! `socialite_domain::transfer::import`.

use crate::accounts;
use crate::content::to_post;
use crate::likes::post_key;
use crate::lists::edge_lists;
use crate::store::EmbeddedStore;
use crate::tables::*;
use async_trait::async_trait;
use redb::{ReadTransaction, ReadableDatabase, ReadableTable};
use serde_json::{Map, Value};
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::model::filter::FilterSet;
use socialite_core::ports::{ExportView, Transfer};
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::graph::relations::{FollowOption, Relation};
use socialite_domain::transfer::export::{cursor, Key, Section};
use socialite_domain::transfer::record::Record;
use std::ops::Bound::{Excluded, Unbounded};

/// One export's view: a redb read transaction, held to its end.
struct Snapshot {
    txn: ReadTransaction,
}

fn from<K>(after: Option<K>) -> (std::ops::Bound<K>, std::ops::Bound<K>) {
    (after.map_or(Unbounded, Excluded), Unbounded)
}

/// The first `limit` of `rows` that read as records (a row no record reads,
/// as of a later version, is passed over).
fn first<I: Iterator<Item = Result<Option<Record>>>>(rows: I, limit: usize) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    for row in rows {
        out.extend(row?);
        if out.len() == limit {
            break;
        }
    }
    Ok(out)
}

impl Snapshot {
    fn users(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(USERS).store()?;
        let after = cursor(after, |k| match k {
            Key::User(id) => Some(id.as_str()),
            _ => None,
        })?;
        let rows = table.range::<&str>(from(after)).store()?.map(|item| {
            let (k, v) = item.store()?;
            let profile = match v.value() {
                [] => None,
                bytes => Some(decode::<Map<String, Value>>(bytes)?),
            };
            let id = UserId::from_stored(k.value().to_owned());
            Ok(Some(Record::User { id, profile }))
        });
        first(rows, limit)
    }

    fn accounts(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(ACCOUNTS).store()?;
        let after = cursor(after, |k| match k {
            Key::User(id) => Some(id.as_str()),
            _ => None,
        })?;
        let rows = table.range::<&str>(from(after)).store()?.map(|item| {
            let (k, _) = item.store()?;
            let standing = accounts::load(&table, k.value())?;
            let id = UserId::from_stored(k.value().to_owned());
            Ok(Some(Record::Account { id, standing }))
        });
        first(rows, limit)
    }

    fn follows(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(FOLLOWING).store()?;
        let times = self.txn.open_table(EDGE_TIMES).store()?;
        let filed = self.txn.open_table(EDGE_LISTS).store()?;
        let after = cursor(after, |k| match k {
            Key::Follow(f, t) => Some((f.as_str(), t.as_str())),
            _ => None,
        })?;
        let rows = table
            .range::<(&str, &str)>(from(after))
            .store()?
            .map(|item| {
                let (k, _) = item.store()?;
                let (f, t) = k.value();
                Ok(Some(Record::Follow {
                    follower: UserId::from_stored(f.to_owned()),
                    followee: UserId::from_stored(t.to_owned()),
                    at_ms: times.get((f, t)).store()?.map_or(0, |g| g.value()),
                    lists: edge_lists(&filed, f, t)?,
                }))
            });
        first(rows, limit)
    }

    fn relations(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(RELATIONS).store()?;
        let ends = self.txn.open_table(MUTE_ENDS).store()?;
        let since = self.txn.open_table(NOTIFY_SINCE).store()?;
        let after = cursor(after, |k| match k {
            Key::Relation(u, r, t) => Some((u.as_str(), r.code(), t.as_str())),
            _ => None,
        })?;
        let rows = table
            .range::<(&str, u8, &str)>(from(after))
            .store()?
            .map(|item| {
                let (k, _) = item.store()?;
                let (u, c, t) = k.value();
                let Some(relation) = Relation::from_code(c) else {
                    return Ok(None);
                };
                let at_ms = match relation {
                    Relation::Mute => time_of_pair(&ends, u, t)?,
                    Relation::Option(FollowOption::Notify) => time_of_pair(&since, u, t)?,
                    _ => None,
                };
                Ok(Some(Record::Relation {
                    user: UserId::from_stored(u.to_owned()),
                    relation,
                    target: UserId::from_stored(t.to_owned()),
                    at_ms,
                }))
            });
        first(rows, limit)
    }

    fn members(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(GROUP_MEMBERS).store()?;
        let after = cursor(after, |k| match k {
            Key::Member(g, u) => Some((g.as_str(), u.as_str())),
            _ => None,
        })?;
        let rows = table
            .range::<(&str, &str)>(from(after))
            .store()?
            .map(|item| {
                let (k, _) = item.store()?;
                let (g, u) = k.value();
                Ok(Some(Record::Member {
                    group: GroupName::from_stored(g),
                    user: UserId::from_stored(u.to_owned()),
                }))
            });
        first(rows, limit)
    }

    fn posts(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(POSTS).store()?;
        let after = cursor(after, |k| match k {
            Key::Post(id) => Some(id.0),
            _ => None,
        })?;
        let rows = table.range::<u64>(from(after)).store()?.map(|item| {
            let (k, v) = item.store()?;
            Ok(Some(Record::post(to_post(k.value(), v.value())?)))
        });
        first(rows, limit)
    }

    fn likes(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(LIKES).store()?;
        let after = cursor(after, |k| match k {
            Key::Like(post, u) => Some((post_key(post), u.as_str())),
            _ => None,
        })?;
        let key = after.as_ref().map(|(p, u)| (p.as_str(), *u));
        let rows = table.range::<(&str, &str)>(from(key)).store()?.map(|item| {
            let (k, at) = item.store()?;
            let (p, u) = k.value();
            Ok(Some(Record::Like {
                post: PostId::parse(p)?,
                user: UserId::from_stored(u.to_owned()),
                at_ms: at.value(),
            }))
        });
        first(rows, limit)
    }

    fn filters(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(FILTERS).store()?;
        let after = cursor(after, |k| match k {
            Key::Filters(u) => Some(u.as_str()),
            _ => None,
        })?;
        let rows = table.range::<&str>(from(after)).store()?.map(|item| {
            let (k, v) = item.store()?;
            let set = FilterSet::from_bytes(v.value())?;
            Ok((!set.filters.is_empty()).then(|| Record::Filters {
                user: UserId::from_stored(k.value().to_owned()),
                filters: set.filters,
                next_id: set.next_id,
            }))
        });
        first(rows, limit)
    }

    fn markers(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(MARKERS).store()?;
        let after = cursor(after, |k| match k {
            Key::Marker(u, timeline) => Some((u.as_str(), timeline.code())),
            _ => None,
        })?;
        let rows = table.range::<(&str, u8)>(from(after)).store()?.map(|item| {
            let (k, v) = item.store()?;
            let (u, code) = k.value();
            let (post, at_ms) = v.value();
            Ok(
                MarkerTimeline::from_code(code).map(|timeline| Record::Marker {
                    user: UserId::from_stored(u.to_owned()),
                    marker: Marker {
                        timeline,
                        last_read: PostId(post),
                        at_ms,
                    },
                }),
            )
        });
        first(rows, limit)
    }
}

impl Snapshot {
    fn exclusive_lists(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(EXCLUSIVE_LISTS).store()?;
        let after = cursor(after, |k| match k {
            Key::ExclusiveList(u, l) => Some((u.as_str(), l.as_str())),
            _ => None,
        })?;
        let rows = table.range::<(&str, &str)>(from(after)).store()?;
        let rows = rows.map(|item| {
            let (k, _) = item.store()?;
            let (u, l) = k.value();
            Ok(Some(Record::ExclusiveList {
                user: UserId::from_stored(u.to_owned()),
                list: ListName::from_stored(l),
            }))
        });
        first(rows, limit)
    }

    fn thread_mutes(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(THREAD_MUTES).store()?;
        let after = cursor(after, |k| match k {
            Key::ThreadMute(u, post) => Some((u.as_str(), post.0)),
            _ => None,
        })?;
        let rows = table.range::<(&str, u64)>(from(after)).store()?;
        let rows = rows.map(|item| {
            let (k, _) = item.store()?;
            let (u, post) = k.value();
            Ok(Some(Record::ThreadMute {
                user: UserId::from_stored(u.to_owned()),
                post: PostId(post),
            }))
        });
        first(rows, limit)
    }

    fn kept(&self, after: Option<&Record>, limit: usize) -> Result<Vec<Record>> {
        let table = self.txn.open_table(KEPT).store()?;
        let after = cursor(after, |k| match k {
            Key::Kept(u, c, post) => Some((u.as_str(), c.as_str(), post.0)),
            _ => None,
        })?;
        let rows = table.range::<(&str, &str, u64)>(from(after)).store()?;
        let rows = rows.map(|item| {
            let (k, at) = item.store()?;
            let (u, c, post) = k.value();
            Ok(Some(Record::Kept {
                collection: Collection::parse(c)?,
                user: UserId::from_stored(u.to_owned()),
                kept: Kept {
                    post: PostId(post),
                    at_ms: at.value(),
                },
            }))
        });
        first(rows, limit)
    }
}

#[async_trait]
impl ExportView for Snapshot {
    async fn deleting(&mut self) -> Result<Vec<UserId>> {
        let mut deleting = Vec::new();
        for item in self.txn.open_table(DELETING).store()?.iter().store()? {
            deleting.push(UserId::from_stored(item.store()?.0.value().to_owned()));
        }
        Ok(deleting)
    }

    async fn page(
        &mut self,
        section: Section,
        after: Option<&Record>,
        limit: usize,
    ) -> Result<Vec<Record>> {
        let limit = limit.max(1);
        match section {
            Section::Users => self.users(after, limit),
            Section::Accounts => self.accounts(after, limit),
            Section::Follows => self.follows(after, limit),
            Section::Relations => self.relations(after, limit),
            Section::Members => self.members(after, limit),
            Section::Posts => self.posts(after, limit),
            Section::Likes => self.likes(after, limit),
            Section::Markers => self.markers(after, limit),
            Section::Kept => self.kept(after, limit),
            Section::Filters => self.filters(after, limit),
            Section::ThreadMutes => self.thread_mutes(after, limit),
            Section::ExclusiveLists => self.exclusive_lists(after, limit),
        }
    }
}

#[async_trait]
impl Transfer for EmbeddedStore {
    async fn export_view(&self) -> Result<Box<dyn ExportView>> {
        let txn = self.db()?.begin_read().store()?;
        Ok(Box::new(Snapshot { txn }))
    }
}
