//! Account standings on MongoDB: `accounts` holds `{_id: user, after,
//! suspended}` for each id ever revoked, deleted or suspended; the
//! account's deletion leaves it (a deletion revokes its tokens, and that
//! must outlive it).

use crate::db::db_err;
use crate::store::{get_str, standing, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::ports::{Accounts, Standing};

#[async_trait]
impl Accounts for MongoStore {
    async fn standing(&self, id: &UserId) -> Result<Standing> {
        let found = self
            .db
            .accounts
            .find_one(doc! { "_id": id.as_str() })
            .await
            .map_err(db_err("reading an account's standing"))?;
        Ok(found.as_ref().map(standing).unwrap_or_default())
    }

    async fn suspended(&self) -> Result<Vec<UserId>> {
        let docs: Vec<Document> = self
            .db
            .accounts
            .find(doc! { "suspended": true })
            .projection(doc! { "_id": 1 })
            .sort(doc! { "_id": 1 })
            .await
            .map_err(db_err("reading the suspended accounts"))?
            .try_collect()
            .await
            .map_err(db_err("reading the suspended accounts"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "_id")?.to_owned())))
            .collect()
    }
}
