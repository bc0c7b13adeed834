//! Posts stored and deleted on MongoDB, as `socialite_core::plan::post`
//! plans them: one document per post in `content`, written in a
//! transaction with its event.

use crate::db::TxnError;
use crate::store::{id_bson, json_text, to_post, MongoStore};
use crate::txn::MongoTxn;
use mongodb::bson::doc;
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::Post;
use socialite_core::plan::post::{create_post, delete_post};

impl MongoStore {
    pub(crate) async fn create_post_of(&self, post: &Post) -> Result<Post> {
        self.db
            .transaction("storing a post", |mut s| async move {
                let txn = &mut MongoTxn {
                    store: self,
                    s: &mut s,
                };
                let r = create_post(txn, post.clone()).await;
                (s, r)
            })
            .await
    }

    pub(crate) async fn delete_post_of(&self, id: PostId) -> Result<Option<Post>> {
        self.db
            .transaction("deleting a post", |mut s| async move {
                let txn = &mut MongoTxn {
                    store: self,
                    s: &mut s,
                };
                let r = delete_post(txn, id).await;
                (s, r)
            })
            .await
    }

    /// Stores a new post's document (its mentions, of users that exist).
    pub(crate) async fn put_post(
        &self,
        s: &mut ClientSession,
        post: &Post,
    ) -> Result<(), TxnError> {
        let mut record = doc! {
            "_id": id_bson(post.id),
            "author": post.author.as_str(),
            "message": &post.message,
            "data": json_text(&post.data),
        };
        if !post.mentions.is_empty() {
            let m: Vec<&str> = post.mentions.iter().map(UserId::as_str).collect();
            record.insert("mentions", m);
        }
        self.db.content.insert_one(record).session(&mut *s).await?;
        Ok(())
    }

    /// The post `id`, read in the transaction.
    pub(crate) async fn post_in(
        &self,
        s: &mut ClientSession,
        id: PostId,
    ) -> Result<Option<Post>, TxnError> {
        let found = self.db.content.find_one(doc! { "_id": id_bson(id) });
        let found = found.session(&mut *s).await?;
        Ok(found.as_ref().map(to_post).transpose()?)
    }
}
