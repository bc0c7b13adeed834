//! Posts users keep, on MongoDB: one document per kept post in `kept`
//! (`{_id: "USER#COLLECTION#POST", u, c, p, at}`), a collection paged on
//! `{u, c, at, p}` and a deleted post found in every collection on `{p}`.

use crate::db::{db_err, TxnError};
use crate::store::{get_i64, id_bson, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::PostId;
use socialite_core::model::collection::{Collection, Kept};

fn kept_id(user: &str, collection: &Collection, post: PostId) -> String {
    format!("{user}#{collection}#{}", post.0)
}

fn to_kept(d: &Document) -> Kept {
    Kept {
        post: PostId(get_i64(d, "p") as u64),
        at_ms: get_i64(d, "at").max(0) as u64,
    }
}

impl MongoStore {
    pub(crate) async fn kept_at_in(
        &self,
        s: &mut ClientSession,
        collection: &Collection,
        user: &str,
        post: PostId,
    ) -> Result<Option<u64>, TxnError> {
        let found = self
            .db
            .kept
            .find_one(doc! { "_id": kept_id(user, collection, post) });
        let found = found.session(&mut *s).await?;
        Ok(found.as_ref().map(|d| to_kept(d).at_ms))
    }

    pub(crate) async fn kept_count_in(
        &self,
        s: &mut ClientSession,
        collection: &Collection,
        user: &str,
    ) -> Result<u64, TxnError> {
        let filter = doc! { "u": user, "c": collection.as_str() };
        Ok(self
            .db
            .kept
            .count_documents(filter)
            .session(&mut *s)
            .await?)
    }

    /// Puts `kept` in (`Some`) or takes `post` out of the user's collection.
    pub(crate) async fn put_kept_in(
        &self,
        s: &mut ClientSession,
        collection: &Collection,
        user: &str,
        post: PostId,
        kept: Option<Kept>,
    ) -> Result<(), TxnError> {
        let id = kept_id(user, collection, post);
        match kept {
            Some(k) => {
                let row = doc! {
                    "_id": id,
                    "u": user,
                    "c": collection.as_str(),
                    "p": id_bson(k.post),
                    "at": k.at_ms as i64,
                };
                self.db.kept.insert_one(row).session(&mut *s).await?;
            }
            None => {
                self.db
                    .kept
                    .delete_one(doc! { "_id": id })
                    .session(&mut *s)
                    .await?;
            }
        }
        Ok(())
    }

    /// Takes `posts` out of every collection (the posts are gone).
    pub(crate) async fn forget_kept_posts_in(
        &self,
        s: &mut ClientSession,
        posts: &[PostId],
    ) -> Result<(), TxnError> {
        let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
        let gone = self.db.kept.delete_many(doc! { "p": { "$in": ids } });
        gone.session(&mut *s).await?;
        Ok(())
    }

    /// Forgets every collection of a deleted user.
    pub(crate) async fn forget_kept_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        self.db
            .kept
            .delete_many(doc! { "u": user })
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// The user's `collection`, newest kept first, after `before`.
    pub(crate) async fn kept_page(
        &self,
        collection: &Collection,
        user: &str,
        before: Option<(u64, PostId)>,
        limit: usize,
    ) -> Result<Vec<Kept>> {
        let mut filter = doc! { "u": user, "c": collection.as_str() };
        if let Some((at, post)) = before {
            let at = at as i64;
            filter.insert(
                "$or",
                vec![
                    doc! { "at": { "$lt": at } },
                    doc! { "at": at, "p": { "$lt": id_bson(post) } },
                ],
            );
        }
        let docs: Vec<Document> = self
            .db
            .kept
            .find(filter)
            .sort(doc! { "at": -1, "p": -1 })
            .limit(limit as i64)
            .await
            .map_err(db_err("reading a collection"))?
            .try_collect()
            .await
            .map_err(db_err("reading a collection"))?;
        Ok(docs.iter().map(to_kept).collect())
    }
}
