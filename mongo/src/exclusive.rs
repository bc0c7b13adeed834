//! Exclusive lists on MongoDB: one document per marked list in
//! `exclusive_lists`, `{u, l}` (the user, the list), with a unique `{u, l}`
//! index for a user's in name order. The rules are
//! `socialite_domain::graph::exclusive`'.

use crate::db::TxnError;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::ListName;

fn list_of(d: &Document) -> Result<ListName> {
    Ok(ListName::from_stored(get_str(d, "l")?))
}

impl MongoStore {
    pub(crate) async fn exclusive_lists_in(
        &self,
        s: Option<&mut ClientSession>,
        user: &str,
    ) -> Result<Vec<ListName>, TxnError> {
        let find = self.db.exclusive_lists.find(doc! { "u": user });
        let find = find
            .projection(doc! { "_id": 0, "l": 1 })
            .sort(doc! { "u": 1, "l": 1 });
        let mut out = Vec::new();
        match s {
            Some(s) => {
                let mut cursor = find.session(&mut *s).await?;
                while let Some(d) = cursor.next(&mut *s).await {
                    out.push(list_of(&d?)?);
                }
            }
            None => {
                let docs: Vec<Document> = find.await?.try_collect().await?;
                for d in &docs {
                    out.push(list_of(d)?);
                }
            }
        }
        Ok(out)
    }

    pub(crate) async fn put_exclusive_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        list: &ListName,
        on: bool,
    ) -> Result<(), TxnError> {
        let key = doc! { "u": user, "l": list.as_str() };
        let marks = &self.db.exclusive_lists;
        if on {
            marks.insert_one(key).session(&mut *s).await?;
        } else {
            marks.delete_one(key).session(&mut *s).await?;
        }
        Ok(())
    }

    /// Forgets a deleted user's marks.
    pub(crate) async fn forget_exclusive_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        let gone = self.db.exclusive_lists.delete_many(doc! { "u": user });
        gone.session(&mut *s).await?;
        Ok(())
    }
}
