//! Lists on MongoDB's follow edges: `_g` on the edge documents holds an
//! edge's lists (the reference design's group label), and each user's list
//! sizes are kept on their `users` document (`lists: {name: size}`), moved
//! in the transaction that changes the edge.

use crate::db::TxnError;
use crate::store::MongoStore;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::ids::ListName;

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
        let mut out: Vec<(ListName, u64)> = found
            .as_ref()
            .and_then(|d| d.get_document("lists").ok())
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
        Ok(out)
    }
}
