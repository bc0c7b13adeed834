//! Posts stored and deleted on MongoDB, as `socialite_domain::posts::post`
//! plans them: one document per post in `content`, written in a
//! transaction with its event.

use crate::db::{is_duplicate_key, TxnError};
use crate::store::{get_i64, id_bson, json_text, to_post, MongoStore};
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::checks::post_id_taken;
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::{Post, PostRef};

/// A post's document in `content`.
fn post_doc(post: &Post) -> Document {
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
    let reference = |r: &PostRef| doc! { "id": id_bson(r.id), "author": r.author.as_str() };
    if let Some(r) = &post.reply_to {
        record.insert("reply_to", reference(r));
    }
    if let Some(r) = &post.repost_of {
        record.insert("repost_of", reference(r));
    }
    record
}

impl MongoStore {
    /// Stores a new post's document (its mentions, of users that exist).
    pub(crate) async fn put_post(
        &self,
        s: &mut ClientSession,
        post: &Post,
    ) -> Result<(), TxnError> {
        match self
            .db
            .content
            .insert_one(post_doc(post))
            .session(&mut *s)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_duplicate_key(&e) => Err(post_id_taken(post.id).into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Stores a run of new posts' documents in one command (each chunk of
    /// them), in order.
    pub(crate) async fn put_posts(
        &self,
        s: &mut ClientSession,
        posts: &[Post],
    ) -> Result<(), TxnError> {
        for part in posts.chunks(crate::db::IN_CHUNK) {
            let docs = part.iter().map(post_doc);
            match self.db.content.insert_many(docs).session(&mut *s).await {
                Ok(_) => {}
                Err(e) if is_duplicate_key(&e) => {
                    // The run's ids were read ahead as free: only a write
                    // beside this transaction took one of them.
                    let ids = part.iter().map(|p| p.id.to_string());
                    let what = format!(
                        "one of the posts {} is stored already",
                        ids.collect::<Vec<_>>().join(", ")
                    );
                    return Err(Error::conflict("post_id_taken", what).into());
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// The posts that those of `posts` that are replies answer, where still
    /// stored, one per reply: two queries.
    pub(crate) async fn answered_among_in(
        &self,
        s: &mut ClientSession,
        posts: &[PostId],
    ) -> Result<Vec<PostId>, TxnError> {
        let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
        let filter = doc! { "_id": { "$in": ids }, "reply_to": { "$exists": true } };
        let mut replies = self
            .db
            .content
            .find(filter)
            .projection(doc! { "_id": 0, "reply_to": 1 })
            .session(&mut *s)
            .await?;
        let mut answered = Vec::new();
        while let Some(d) = replies.next(&mut *s).await {
            if let Ok(r) = d?.get_document("reply_to") {
                answered.push(get_i64(r, "id"));
            }
        }
        let mut stored = self
            .db
            .content
            .find(doc! { "_id": { "$in": &answered } })
            .projection(doc! { "_id": 1 })
            .session(&mut *s)
            .await?;
        let mut found = std::collections::HashSet::new();
        while let Some(d) = stored.next(&mut *s).await {
            found.insert(get_i64(&d?, "_id"));
        }
        Ok(answered
            .into_iter()
            .filter(|a| found.contains(a))
            .map(|a| PostId(a as u64))
            .collect())
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

    /// Up to `limit` of the ids of the posts `filter` selects, by the index
    /// `sort` names.
    pub(crate) async fn post_page(
        &self,
        s: &mut ClientSession,
        filter: Document,
        sort: Document,
        limit: usize,
    ) -> Result<Vec<PostId>, TxnError> {
        let mut cursor = self
            .db
            .content
            .find(filter)
            .projection(doc! { "_id": 1 })
            .sort(sort)
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            out.push(PostId(crate::store::get_i64(&d?, "_id") as u64));
        }
        Ok(out)
    }
}
