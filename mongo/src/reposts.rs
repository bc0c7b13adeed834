//! Reposts on MongoDB: one document per repost in `reposts` (`{p, u, i}`:
//! the post, the reposter, the reposter's item), unique on `{p, u}`, a
//! post's reposters newest first on `{p, i}` and a user's reposts on
//! `{u, p}`; the item itself is a post of the reposter's in `content`,
//! with `repost_of`. Which posts of a page have reposts is read from their
//! counts (`tallies`), which the page's other readers need anyway.

use crate::db::{db_err, TxnError, IN_CHUNK};
use crate::store::{get_i64, get_str, id_bson, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_domain::interactions::likes::Tally;
use std::collections::HashSet;

fn reposter(d: &Document) -> Result<(UserId, PostId)> {
    Ok((
        UserId::from_stored(get_str(d, "u")?.to_owned()),
        PostId(get_i64(d, "i") as u64),
    ))
}

impl MongoStore {
    /// The item of `user`'s repost of `post`, if there is one.
    pub(crate) async fn reposted_in(
        &self,
        s: &mut ClientSession,
        post: PostId,
        user: &str,
    ) -> Result<Option<PostId>, TxnError> {
        let found = self
            .db
            .reposts
            .find_one(doc! { "p": id_bson(post), "u": user })
            .projection(doc! { "_id": 0, "i": 1 })
            .session(&mut *s)
            .await?;
        Ok(found.map(|d| PostId(get_i64(&d, "i") as u64)))
    }

    /// Up to `limit` of `user`'s reposts (item, post, post stored): two
    /// queries.
    pub(crate) async fn reposts_by_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>, TxnError> {
        let mut cursor = self
            .db
            .reposts
            .find(doc! { "u": user })
            .projection(doc! { "_id": 0, "p": 1, "i": 1 })
            .sort(doc! { "u": 1, "p": 1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut page = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            let d = d?;
            page.push((get_i64(&d, "i"), get_i64(&d, "p")));
        }
        let posts: Vec<i64> = page.iter().map(|(_, p)| *p).collect();
        let mut stored = self
            .db
            .content
            .find(doc! { "_id": { "$in": &posts } })
            .projection(doc! { "_id": 1 })
            .session(&mut *s)
            .await?;
        let mut found = HashSet::new();
        while let Some(d) = stored.next(&mut *s).await {
            found.insert(get_i64(&d?, "_id"));
        }
        Ok(page
            .into_iter()
            .map(|(i, p)| (PostId(i as u64), PostId(p as u64), found.contains(&p)))
            .collect())
    }

    /// Makes (`active`) or removes `user`'s repost `item` of `post`.
    pub(crate) async fn put_repost_in(
        &self,
        s: &mut ClientSession,
        post: PostId,
        user: &str,
        item: PostId,
        active: bool,
    ) -> Result<(), TxnError> {
        let key = doc! { "p": id_bson(post), "u": user };
        if active {
            let mut row = key;
            row.insert("i", id_bson(item));
            self.db.reposts.insert_one(row).session(&mut *s).await?;
        } else {
            self.db.reposts.delete_one(key).session(&mut *s).await?;
        }
        Ok(())
    }

    /// Removes `user`'s reposts of `posts`: one command.
    pub(crate) async fn remove_reposts_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        posts: &[PostId],
    ) -> Result<(), TxnError> {
        let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
        let filter = doc! { "u": user, "p": { "$in": ids } };
        self.db.reposts.delete_many(filter).session(&mut *s).await?;
        Ok(())
    }

    /// Who reposted `post`, newest first, at most `limit`: the `{p, i}` index.
    pub(crate) async fn reposters_of(
        &self,
        post: PostId,
        limit: usize,
    ) -> Result<Vec<(UserId, PostId)>> {
        let what = "reading reposters";
        let docs: Vec<Document> = self
            .db
            .reposts
            .find(doc! { "p": id_bson(post) })
            .projection(doc! { "_id": 0, "u": 1, "i": 1 })
            .sort(doc! { "p": 1, "i": -1 })
            .limit(limit as i64)
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        docs.iter().map(reposter).collect()
    }

    /// The reposts of `post` that `users` made: the `{p, u}` index.
    pub(crate) async fn reposts_among_of(
        &self,
        post: PostId,
        users: &[UserId],
    ) -> Result<Vec<(UserId, PostId)>> {
        let what = "reading reposts";
        let mut out = Vec::new();
        for chunk in users.chunks(IN_CHUNK) {
            let names: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let docs: Vec<Document> = self
                .db
                .reposts
                .find(doc! { "p": id_bson(post), "u": { "$in": names } })
                .projection(doc! { "_id": 0, "u": 1, "i": 1 })
                .await
                .map_err(db_err(what))?
                .try_collect()
                .await
                .map_err(db_err(what))?;
            for d in &docs {
                out.push(reposter(d)?);
            }
        }
        Ok(out)
    }

    /// Those of `posts` with reposts: their counts' parts, one query.
    pub(crate) async fn reposted_among_of(&self, posts: &[PostId]) -> Result<Vec<PostId>> {
        let what = "reading which posts have reposts";
        let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
        let code = i32::from(Tally::Reposts.code());
        let docs: Vec<Document> = self
            .db
            .tallies
            .find(doc! { "p": { "$in": &ids }, "t": code, "n": { "$gt": 0_i64 } })
            .projection(doc! { "_id": 0, "p": 1 })
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        let with: HashSet<i64> = docs.iter().map(|d| get_i64(d, "p")).collect();
        Ok(posts
            .iter()
            .filter(|p| with.contains(&id_bson(**p)))
            .copied()
            .collect())
    }
}
