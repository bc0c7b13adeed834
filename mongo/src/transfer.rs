//! MongoDB written out whole and loaded in batches ([`Transfer`]). An
//! export reads each collection in key order a page at a time, after the
//! last key it gave (keyset paging: the same cost per page however deep);
//! it is consistent when no writes run meanwhile, and a migration's
//! catch-up carries over those that do. An import runs each batch in one
//! transaction, each record planned by `socialite_domain::transfer::import`.

use crate::db::{db_err, Db};
use crate::lists::lists_of;
use crate::store::{get_i64, get_str, to_post, to_user, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, PostId, UserId};
use socialite_core::model::collection::{self, Kept};
use socialite_core::ports::{ExportView, Standing, Transfer};
use socialite_domain::graph::relations::Relation;
use socialite_domain::transfer::record::Record;
use std::collections::HashSet;

/// The collections of an export, in the format's order, each with the
/// fields of its key.
const SECTIONS: [(&str, &[&str]); 9] = [
    ("users", &["_id"]),
    ("accounts", &["_id"]),
    ("following", &["user", "followee"]),
    ("relations", &["u", "k", "t"]),
    ("group_members", &["group", "user"]),
    ("content", &["_id"]),
    ("likes", &["p", "u"]),
    ("markers", &["_id"]),
    ("kept", &["_id"]),
];

struct Pages {
    db: Db,
    /// Users being deleted: left out, with every record naming them.
    deleting: HashSet<String>,
    section: usize,
    /// The key of the last document read in the section.
    after: Option<Vec<Bson>>,
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
    fn gone(&self, user: &str) -> bool {
        self.deleting.contains(user)
    }

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
            _ => &self.db.content,
        }
    }

    /// The next page of the current section, in key order.
    async fn page(&mut self, limit: usize) -> Result<Vec<Document>> {
        let (name, key) = SECTIONS[self.section];
        let mut filter = match &self.after {
            Some(after) => after_filter(key, after),
            None => Document::new(),
        };
        if name == "users" {
            filter.insert("deleting", doc! { "$ne": true });
        }
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
        let docs: Vec<Document> = found
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        if let Some(last) = docs.last() {
            self.after = Some(
                key.iter()
                    .map(|f| last.get(*f).cloned().unwrap_or(Bson::Null))
                    .collect(),
            );
        }
        Ok(docs)
    }

    /// The record of a document of the current section, unless it names a
    /// user being deleted (or is a default standing).
    fn record(&self, d: &Document) -> Result<Option<Record>> {
        let user = |field: &str| -> Result<UserId> {
            Ok(UserId::from_stored(get_str(d, field)?.to_owned()))
        };
        let named = |fields: &[&str]| {
            fields
                .iter()
                .any(|f| d.get_str(f).is_ok_and(|u| self.gone(u)))
        };
        Ok(match SECTIONS[self.section].0 {
            "users" => {
                let u = to_user(d)?;
                Some(Record::User {
                    id: u.id,
                    profile: u.profile,
                })
            }
            "accounts" => {
                let standing = crate::store::standing(d);
                (standing != Standing::default())
                    .then(|| {
                        Ok::<_, socialite_core::Error>(Record::Account {
                            id: user("_id")?,
                            standing,
                        })
                    })
                    .transpose()?
            }
            "following" if !named(&["user", "followee"]) => Some(Record::Follow {
                follower: user("user")?,
                followee: user("followee")?,
                at_ms: get_i64(d, "at").max(0) as u64,
                lists: lists_of(d),
            }),
            "relations" if !named(&["u", "t"]) => {
                let relation = Relation::from_code(get_i64(d, "k") as u8);
                relation
                    .map(|relation| {
                        Ok::<_, socialite_core::Error>(Record::Relation {
                            user: user("u")?,
                            relation,
                            target: user("t")?,
                        })
                    })
                    .transpose()?
            }
            "group_members" if !named(&["user"]) => Some(Record::Member {
                group: GroupName::from_stored(get_str(d, "group")?),
                user: user("user")?,
            }),
            "content" if !named(&["author"]) => {
                let mut post = to_post(d)?;
                post.mentions.retain(|m| !self.gone(m.as_str()));
                Some(Record::post(post))
            }
            "markers" if !named(&["u"]) => crate::markers::to_marker(d)
                .map(|marker| {
                    Ok::<_, socialite_core::Error>(Record::Marker {
                        user: user("u")?,
                        marker,
                    })
                })
                .transpose()?,
            "kept" if !named(&["u"]) => Some(Record::Kept {
                collection: collection::Collection::parse(get_str(d, "c")?)?,
                user: user("u")?,
                kept: Kept {
                    post: PostId(get_i64(d, "p") as u64),
                    at_ms: get_i64(d, "at").max(0) as u64,
                },
            }),
            "likes" if !named(&["u"]) => Some(Record::Like {
                post: PostId(get_i64(d, "p") as u64),
                user: user("u")?,
                at_ms: get_i64(d, "at").max(0) as u64,
            }),
            _ => None,
        })
    }
}

impl Pages {
    /// The likes and reposts among `docs` whose post is exported: stored,
    /// and not by a user being deleted (a deleted post's likes and reposts
    /// name nothing; see `socialite_domain::interactions::likes` and `reposts`).
    /// Documents of other sections pass.
    async fn of_exported_posts(&self, docs: Vec<Document>) -> Result<Vec<Document>> {
        // A like's post, or a repost's original.
        let carried = |d: &Document| match SECTIONS[self.section].0 {
            "likes" => Some(get_i64(d, "p")),
            _ => d.get_document("repost_of").ok().map(|r| get_i64(r, "id")),
        };
        if !matches!(SECTIONS[self.section].0, "likes" | "content") {
            return Ok(docs);
        }
        let what = "exporting likes and reposts";
        let posts: Vec<i64> = docs.iter().filter_map(carried).collect();
        if posts.is_empty() {
            return Ok(docs);
        }
        let found: Vec<Document> = self
            .db
            .content
            .find(doc! { "_id": { "$in": &posts } })
            .projection(doc! { "_id": 1, "author": 1 })
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        let exported: HashSet<i64> = found
            .iter()
            .filter(|d| d.get_str("author").is_ok_and(|a| !self.gone(a)))
            .map(|d| get_i64(d, "_id"))
            .collect();
        Ok(docs
            .into_iter()
            .filter(|d| carried(d).is_none_or(|p| exported.contains(&p)))
            .collect())
    }
}

#[async_trait]
impl ExportView for Pages {
    async fn next(&mut self, limit: usize) -> Result<Vec<Record>> {
        let limit = limit.max(1);
        let mut out = Vec::new();
        while out.len() < limit && self.section < SECTIONS.len() {
            let docs = self.page(limit - out.len()).await?;
            if docs.is_empty() {
                (self.section, self.after) = (self.section + 1, None);
                continue;
            }
            let kept = self.of_exported_posts(docs).await?;
            for d in &kept {
                out.extend(self.record(d)?);
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Transfer for MongoStore {
    async fn export_view(&self) -> Result<Box<dyn ExportView>> {
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
        let deleting = docs
            .iter()
            .filter_map(|d| d.get_str("_id").ok().map(str::to_owned))
            .collect();
        Ok(Box::new(Pages {
            db: self.db.clone(),
            deleting,
            section: 0,
            after: None,
        }))
    }
}
