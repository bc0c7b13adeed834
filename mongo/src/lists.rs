//! Lists on MongoDB's follow edges: `_g` on the edge documents holds an
//! edge's lists (the reference design's group label), and each user's list
//! sizes are kept on their `users` document (`lists: {name: size}`), moved
//! in the transaction that changes the edge.

use crate::db::{TxnError, USERS};
use crate::store::MongoStore;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::ids::ListName;
use std::collections::{BTreeMap, BTreeSet};

/// The lists of an edge document (`_g`).
pub(crate) fn lists_of(d: &Document) -> Vec<ListName> {
    d.get_array("_g")
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .map(ListName::from_stored)
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn names(lists: &[ListName]) -> Vec<&str> {
    lists.iter().map(ListName::as_str).collect()
}

impl MongoStore {
    /// [`Self::move_list_sizes`] for a run of moves `(user, added,
    /// removed)` (a bulk load's, an import's): each user's sizes moved by
    /// the run's sum, then the lists left with none removed; one command
    /// for each, however many.
    pub(crate) async fn move_list_sizes_run(
        &self,
        s: &mut ClientSession,
        moves: &[(&str, &[ListName], &[ListName])],
    ) -> Result<(), TxnError> {
        let mut sums: BTreeMap<&str, BTreeMap<String, i64>> = BTreeMap::new();
        let mut emptied: BTreeSet<(&str, String)> = BTreeSet::new();
        for (user, added, removed) in moves {
            let sum = sums.entry(user).or_default();
            for l in *added {
                *sum.entry(format!("lists.{l}")).or_default() += 1;
            }
            for l in *removed {
                let path = format!("lists.{l}");
                *sum.entry(path.clone()).or_default() -= 1;
                emptied.insert((user, path));
            }
        }
        let incs: Vec<Document> = sums
            .into_iter()
            .map(|(user, sum)| {
                let inc: Document = sum.into_iter().map(|(p, n)| (p, n.into())).collect();
                doc! { "q": { "_id": user }, "u": { "$inc": inc } }
            })
            .collect();
        let unsets: Vec<Document> = emptied
            .into_iter()
            .map(|(user, path)| {
                let q = doc! { "_id": user, &path: { "$lte": 0_i64 } };
                doc! { "q": q, "u": { "$unset": { &path: "" } } }
            })
            .collect();
        for run in [incs, unsets] {
            if !run.is_empty() {
                self.db
                    .write_run(s, ("update", "updates"), USERS, run)
                    .await?;
            }
        }
        Ok(())
    }

    /// Moves the sizes of `user`'s lists: one more member in each of
    /// `added`, one fewer in each of `removed`; a list left with none goes.
    pub(crate) async fn move_list_sizes(
        &self,
        s: &mut ClientSession,
        user: &str,
        added: &[ListName],
        removed: &[ListName],
    ) -> Result<(), TxnError> {
        if added.is_empty() && removed.is_empty() {
            return Ok(());
        }
        let mut inc = Document::new();
        for l in added {
            inc.insert(format!("lists.{l}"), 1_i64);
        }
        for l in removed {
            inc.insert(format!("lists.{l}"), -1_i64);
        }
        self.db
            .users
            .update_one(doc! { "_id": user }, doc! { "$inc": inc })
            .session(&mut *s)
            .await?;
        for l in removed {
            let path = format!("lists.{l}");
            self.db
                .users
                .update_one(
                    doc! { "_id": user, &path: { "$lte": 0_i64 } },
                    doc! { "$unset": { &path: "" } },
                )
                .session(&mut *s)
                .await?;
        }
        Ok(())
    }

    /// The user's lists and sizes, from their document.
    pub(crate) async fn list_sizes(
        &self,
        s: Option<&mut ClientSession>,
        user: &str,
    ) -> Result<Vec<(ListName, u64)>, TxnError> {
        let find = self
            .db
            .users
            .find_one(doc! { "_id": user })
            .projection(doc! { "lists": 1 });
        let found = match s {
            Some(s) => find.session(s).await?,
            None => find.await?,
        };
        Ok(found.as_ref().map(sizes_of).unwrap_or_default())
    }
}

/// The lists with members on a user's document, and their sizes, in name
/// order.
pub(crate) fn sizes_of(user: &Document) -> Vec<(ListName, u64)> {
    let mut out: Vec<(ListName, u64)> = user
        .get_document("lists")
        .map(|lists| {
            lists
                .iter()
                .map(|(k, v)| {
                    let n = v.as_i64().or(v.as_i32().map(i64::from)).unwrap_or(0);
                    (ListName::from_stored(k), n.max(0) as u64)
                })
                .filter(|(_, n)| *n > 0)
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}
