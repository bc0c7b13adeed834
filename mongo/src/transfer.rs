//! MongoDB written out whole and loaded in batches ([`Transfer`]). An
//! export reads each section's collection in key order a page at a time,
//! after the key of the last record given (keyset paging: the same cost
//! per page however deep), as core's walk asks
//! (`socialite_core::transfer::walk`, which decides the order and what is
//! left out); it is consistent when no writes run meanwhile, and a
//! migration's catch-up carries over those that do. An import runs each batch in one
//! transaction, each record planned by `socialite_domain::transfer::import`.

use crate::db::{db_err, Db};
use crate::lists::lists_of;
use crate::markers::marker_id;
use crate::relations::code;
use crate::store::{get_i64, get_str, id_bson, to_post, to_user, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::collection::{Collection as KeptIn, Kept};
use socialite_core::ports::{ExportView, Transfer};
use socialite_domain::graph::relations::Relation;
use socialite_domain::transfer::export::{Key, Section};
use socialite_domain::transfer::record::Record;

/// The collection of each section, and the fields of its key (in
/// [`Section::ALL`]'s order).
fn collection_of(section: Section) -> (&'static str, &'static [&'static str]) {
    match section {
        Section::Users => ("users", &["_id"]),
        Section::Accounts => ("accounts", &["_id"]),
        Section::Follows => ("following", &["user", "followee"]),
        Section::Relations => ("relations", &["u", "k", "t"]),
        Section::Members => ("group_members", &["group", "user"]),
        Section::Posts => ("content", &["_id"]),
        Section::Likes => ("likes", &["p", "u"]),
        Section::Markers => ("markers", &["_id"]),
        Section::Kept => ("kept", &["u", "c", "p"]),
        Section::Filters => ("filters", &["_id"]),
        Section::ThreadMutes => ("thread_mutes", &["u", "p"]),
        Section::ExclusiveLists => ("exclusive_lists", &["u", "l"]),
    }
}

/// The values of a record's key as its section's documents hold them.
fn key_values(record: &Record) -> Vec<Bson> {
    let s = |u: &UserId| Bson::String(u.as_str().to_owned());
    match record.key() {
        Key::User(id) => vec![s(id)],
        Key::Follow(f, t) => vec![s(f), s(t)],
        Key::Relation(u, r, t) => vec![s(u), Bson::Int32(code(r)), s(t)],
        Key::Member(g, u) => vec![Bson::String(g.as_str().to_owned()), s(u)],
        Key::Post(id) => vec![Bson::Int64(id_bson(id))],
        Key::Like(post, u) => vec![Bson::Int64(id_bson(post)), s(u)],
        Key::Marker(u, timeline) => vec![Bson::String(marker_id(u.as_str(), timeline))],
        Key::Filters(u) => vec![s(u)],
        Key::ThreadMute(u, post) => vec![s(u), Bson::Int64(id_bson(post))],
        Key::ExclusiveList(u, l) => vec![s(u), Bson::String(l.as_str().to_owned())],
        Key::Kept(u, c, post) => vec![
            s(u),
            Bson::String(c.to_string()),
            Bson::Int64(id_bson(post)),
        ],
    }
}

/// One export's view: each collection read in key order, a page at a time.
struct Pages {
    db: Db,
}

/// The documents after `after` in the order of `key`: the first field
/// greater, or equal and the next greater, and so on.
fn after_filter(key: &[&str], after: &[Bson]) -> Document {
    let mut any = Vec::new();
    for i in 0..key.len() {
        let mut d = Document::new();
        for (field, value) in key.iter().zip(after).take(i) {
            d.insert(*field, value.clone());
        }
        d.insert(key[i], doc! { "$gt": after[i].clone() });
        any.push(d);
    }
    doc! { "$or": any }
}

impl Pages {
    fn collection(&self, name: &str) -> &Collection<Document> {
        match name {
            "users" => &self.db.users,
            "accounts" => &self.db.accounts,
            "following" => &self.db.following,
            "relations" => &self.db.relations,
            "group_members" => &self.db.group_members,
            "likes" => &self.db.likes,
            "markers" => &self.db.markers,
            "kept" => &self.db.kept,
            "filters" => &self.db.filters,
            "thread_mutes" => &self.db.thread_mutes,
            "exclusive_lists" => &self.db.exclusive_lists,
            _ => &self.db.content,
        }
    }

    /// Up to `limit` documents of `section` after the key `after`, in key
    /// order.
    async fn documents(
        &self,
        section: Section,
        after: Option<&[Bson]>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        let (name, key) = collection_of(section);
        let filter = after.map_or_else(Document::new, |after| after_filter(key, after));
        let sort: Document = key
            .iter()
            .map(|f| (f.to_string(), Bson::Int32(1)))
            .collect();
        let what = "exporting a store";
        let found = self
            .collection(name)
            .find(filter)
            .sort(sort)
            .limit(limit as i64);
        found
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))
    }
}

/// The record of a document of `section`; `None` for one no record reads
/// (a code of a later version).
fn record(section: Section, d: &Document) -> Result<Option<Record>> {
    let user =
        |field: &str| -> Result<UserId> { Ok(UserId::from_stored(get_str(d, field)?.to_owned())) };
    Ok(Some(match section {
        Section::Users => {
            let u = to_user(d)?;
            Record::User {
                id: u.id,
                profile: u.profile,
            }
        }
        Section::Accounts => Record::Account {
            id: user("_id")?,
            standing: crate::store::standing(d),
        },
        Section::Follows => Record::Follow {
            follower: user("user")?,
            followee: user("followee")?,
            at_ms: get_i64(d, "at").max(0) as u64,
            lists: lists_of(d),
        },
        Section::Relations => match Relation::from_code(get_i64(d, "k") as u8) {
            Some(relation) => Record::Relation {
                user: user("u")?,
                relation,
                target: user("t")?,
                // A mute's end, a notify option's start.
                at_ms: crate::mute_ends::until(d).or(crate::notify_since::since(d)),
            },
            None => return Ok(None),
        },
        Section::Members => Record::Member {
            group: GroupName::from_stored(get_str(d, "group")?),
            user: user("user")?,
        },
        Section::Posts => Record::post(to_post(d)?),
        Section::Likes => Record::Like {
            post: PostId(get_i64(d, "p") as u64),
            user: user("u")?,
            at_ms: get_i64(d, "at").max(0) as u64,
        },
        Section::Markers => match crate::markers::to_marker(d) {
            Some(marker) => Record::Marker {
                user: user("u")?,
                marker,
            },
            None => return Ok(None),
        },
        Section::Filters => match crate::filters::filter_set(d)? {
            Some(set) => Record::Filters {
                user: user("_id")?,
                filters: set.filters,
                next_id: set.next_id,
            },
            None => return Ok(None),
        },
        Section::ExclusiveLists => Record::ExclusiveList {
            user: user("u")?,
            list: ListName::from_stored(get_str(d, "l")?),
        },
        Section::ThreadMutes => Record::ThreadMute {
            user: user("u")?,
            post: PostId(get_i64(d, "p") as u64),
        },
        Section::Kept => Record::Kept {
            collection: KeptIn::parse(get_str(d, "c")?)?,
            user: user("u")?,
            kept: Kept {
                post: PostId(get_i64(d, "p") as u64),
                at_ms: get_i64(d, "at").max(0) as u64,
            },
        },
    }))
}

#[async_trait]
impl ExportView for Pages {
    async fn deleting(&mut self) -> Result<Vec<UserId>> {
        let what = "finding users being deleted";
        let found = self
            .db
            .users
            .find(doc! { "deleting": true })
            .projection(doc! { "_id": 1 });
        let docs: Vec<Document> = found
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "_id")?.to_owned())))
            .collect()
    }

    async fn page(
        &mut self,
        section: Section,
        after: Option<&Record>,
        limit: usize,
    ) -> Result<Vec<Record>> {
        let limit = limit.max(1);
        let (_, key) = collection_of(section);
        let mut after = after.map(key_values);
        let mut out = Vec::new();
        // Until a page holds a record or the section ends: documents no
        // record reads are passed over.
        loop {
            let docs = self.documents(section, after.as_deref(), limit).await?;
            let Some(last) = docs.last() else {
                return Ok(out);
            };
            after = Some(
                key.iter()
                    .map(|f| last.get(*f).cloned().unwrap_or(Bson::Null))
                    .collect(),
            );
            for d in &docs {
                out.extend(record(section, d)?);
            }
            if !out.is_empty() {
                return Ok(out);
            }
        }
    }
}

#[async_trait]
impl Transfer for MongoStore {
    async fn export_view(&self) -> Result<Box<dyn ExportView>> {
        Ok(Box::new(Pages {
            db: self.db.clone(),
        }))
    }
}
