//! Keyword filters on MongoDB: one document per user in `filters`
//! (`{_id: USER, rev, set}`: the set's revision, and the set as the
//! embedded store keeps it, `FilterSet::to_bytes`). A page read asks for
//! `rev` alone, which the `_id_rev` index covers.

use crate::db::{db_err, TxnError};
use crate::store::{get_i64, MongoStore};
use mongodb::bson::{doc, spec::BinarySubtype, Binary, Bson, Document};
use mongodb::ClientSession;
use socialite_core::error::{Error, Result};
use socialite_core::model::filter::FilterSet;

fn to_set(d: &Document) -> Result<FilterSet> {
    match d.get("set") {
        Some(Bson::Binary(b)) => FilterSet::from_bytes(&b.bytes),
        _ => Err(Error::internal("a filters document holds no set")),
    }
}

/// The set a document holds, for an export; `None` when it holds no
/// filter.
pub(crate) fn filter_set(d: &Document) -> Result<Option<FilterSet>> {
    let set = to_set(d)?;
    Ok((!set.filters.is_empty()).then_some(set))
}

impl MongoStore {
    pub(crate) async fn filters_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<Option<FilterSet>, TxnError> {
        let found = self.db.filters.find_one(doc! { "_id": user });
        let found = found.session(&mut *s).await?;
        Ok(found.as_ref().map(to_set).transpose()?)
    }

    pub(crate) async fn put_filters_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        set: &FilterSet,
    ) -> Result<(), TxnError> {
        let bytes = Binary {
            subtype: BinarySubtype::Generic,
            bytes: set.to_bytes(),
        };
        let put = doc! { "$set": { "rev": set.rev as i64, "set": bytes } };
        let filter = doc! { "_id": user };
        let write = self.db.filters.update_one(filter, put).upsert(true);
        write.session(&mut *s).await?;
        Ok(())
    }

    /// Forgets a deleted user's filters.
    pub(crate) async fn forget_filters_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        let gone = self.db.filters.delete_one(doc! { "_id": user });
        gone.session(&mut *s).await?;
        Ok(())
    }

    pub(crate) async fn filters_of(&self, user: &str) -> Result<Option<FilterSet>> {
        let found = self.db.filters.find_one(doc! { "_id": user }).await;
        let found = found.map_err(db_err("reading filters"))?;
        found.as_ref().map(to_set).transpose()
    }

    pub(crate) async fn filters_rev_of(&self, user: &str) -> Result<Option<u64>> {
        let found = self
            .db
            .filters
            .find_one(doc! { "_id": user })
            .projection(doc! { "_id": 1, "rev": 1 })
            .await
            .map_err(db_err("reading the filters' revision"))?;
        Ok(found.map(|d| get_i64(&d, "rev") as u64))
    }
}
