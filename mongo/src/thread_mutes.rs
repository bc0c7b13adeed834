//! Muted threads on MongoDB: one document per muted thread in
//! `thread_mutes`, `{u, p}` (the user, the thread's first post), with a
//! unique `{u, p}` index for a user's in id order. The rules are
//! `socialite_domain::notifications::thread_mutes`'.

use crate::db::TxnError;
use crate::store::{get_i64, id_bson, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::PostId;

fn filter(user: &str, after: Option<PostId>) -> Document {
    match after {
        Some(p) => doc! { "u": user, "p": { "$gt": id_bson(p) } },
        None => doc! { "u": user },
    }
}

pub(crate) fn post_of(d: &Document) -> PostId {
    PostId(get_i64(d, "p") as u64)
}

impl MongoStore {
    pub(crate) async fn thread_mutes_in(
        &self,
        s: Option<&mut ClientSession>,
        user: &str,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>, TxnError> {
        let find = self.db.thread_mutes.find(filter(user, after));
        let find = find
            .projection(doc! { "_id": 0, "p": 1 })
            .sort(doc! { "u": 1, "p": 1 })
            .limit(limit.min(i64::MAX as usize) as i64);
        let mut out = Vec::new();
        match s {
            Some(s) => {
                let mut cursor = find.session(&mut *s).await?;
                while let Some(d) = cursor.next(&mut *s).await {
                    out.push(post_of(&d?));
                }
            }
            None => {
                let docs: Vec<Document> = find.await?.try_collect().await?;
                out.extend(docs.iter().map(post_of));
            }
        }
        Ok(out)
    }

    pub(crate) async fn put_thread_mute_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        post: PostId,
        active: bool,
    ) -> Result<(), TxnError> {
        let key = doc! { "u": user, "p": id_bson(post) };
        let mutes = &self.db.thread_mutes;
        if active {
            mutes.insert_one(key).session(&mut *s).await?;
        } else {
            mutes.delete_one(key).session(&mut *s).await?;
        }
        Ok(())
    }

    /// Forgets a deleted user's muted threads.
    pub(crate) async fn forget_thread_mutes_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        let gone = self.db.thread_mutes.delete_many(doc! { "u": user });
        gone.session(&mut *s).await?;
        Ok(())
    }

    pub(crate) async fn muted_threads_of(
        &self,
        user: &str,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        let found = self.thread_mutes_in(None, user, after, limit).await;
        found.map_err(|e| e.into_error("reading muted threads"))
    }
}
