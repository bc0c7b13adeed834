//! Likes on MongoDB: one document per like in `likes` (`{p, u, at}`: the
//! post, the user, when), unique on `{p, u}`, paged newest first on
//! `{p, at, u}` and found per user on `{u, p}`; and each post's counts in
//! `tallies`, in the parts `socialite_domain::interactions::likes` spreads them over
//! (`{_id: "POST:TALLY#k", p, n}`), so that concurrent likes of one viral
//! post seldom write the same document, while each move stays in the
//! transaction of its like: the sum is exact. A read of counts is one
//! query on `{p}` for a whole page of posts.

use crate::db::{db_err, TxnError};
use crate::store::{get_i64, id_bson, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::PostCounts;
use socialite_core::plan::Step;
use socialite_domain::interactions::likes::Tally;
use std::collections::{HashMap, HashSet};

fn tally_id(post: PostId, tally: Tally, shard: u8) -> String {
    format!("{post}:{}#{shard}", tally.code())
}

impl MongoStore {
    /// When `user` liked `post`, if they do.
    pub(crate) async fn liked_in(
        &self,
        s: &mut ClientSession,
        post: PostId,
        user: &str,
    ) -> Result<Option<u64>, TxnError> {
        let found = self
            .db
            .likes
            .find_one(doc! { "p": id_bson(post), "u": user })
            .projection(doc! { "_id": 0, "at": 1 })
            .session(&mut *s)
            .await?;
        Ok(found.map(|d| get_i64(&d, "at").max(0) as u64))
    }

    /// Up to `limit` of the posts `user` likes, each with whether it is
    /// stored: two queries.
    pub(crate) async fn likes_by_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        limit: usize,
    ) -> Result<Vec<(PostId, bool)>, TxnError> {
        let mut cursor = self
            .db
            .likes
            .find(doc! { "u": user })
            .projection(doc! { "_id": 0, "p": 1 })
            .sort(doc! { "u": 1, "p": 1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut posts = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            posts.push(get_i64(&d?, "p"));
        }
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
        Ok(posts
            .into_iter()
            .map(|p| (PostId(p as u64), found.contains(&p)))
            .collect())
    }

    /// Makes (`active`, at `at_ms`) or removes the like of `post` by `user`.
    pub(crate) async fn put_like_in(
        &self,
        s: &mut ClientSession,
        post: PostId,
        user: &str,
        at_ms: u64,
        active: bool,
    ) -> Result<(), TxnError> {
        let key = doc! { "p": id_bson(post), "u": user };
        if active {
            let mut like = key;
            like.insert("at", at_ms as i64);
            self.db.likes.insert_one(like).session(&mut *s).await?;
        } else {
            self.db.likes.delete_one(key).session(&mut *s).await?;
        }
        Ok(())
    }

    /// Removes `user`'s likes of `posts`: one command.
    pub(crate) async fn remove_likes_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        posts: &[PostId],
    ) -> Result<(), TxnError> {
        let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
        let filter = doc! { "u": user, "p": { "$in": ids } };
        self.db.likes.delete_many(filter).session(&mut *s).await?;
        Ok(())
    }

    /// Moves the parts of post counts a run of `Tally` steps names: one
    /// command, however many.
    pub(crate) async fn move_tallies_in(
        &self,
        s: &mut ClientSession,
        steps: &[Step],
    ) -> Result<(), TxnError> {
        let updates: Vec<Document> = steps
            .iter()
            .filter_map(|step| match step {
                Step::Tally {
                    post,
                    tally,
                    shard,
                    step,
                } => Some(doc! {
                    "q": { "_id": tally_id(*post, *tally, *shard) },
                    "u": {
                        "$inc": { "n": step },
                        "$setOnInsert": { "p": id_bson(*post), "t": i32::from(tally.code()) },
                    },
                    "upsert": true,
                }),
                _ => None,
            })
            .collect();
        let command = doc! { "update": crate::db::TALLIES, "updates": updates, "ordered": true };
        self.db
            .database
            .run_command(command)
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// Forgets the counts of removed posts.
    pub(crate) async fn forget_tallies_in(
        &self,
        s: &mut ClientSession,
        posts: &[i64],
    ) -> Result<(), TxnError> {
        let filter = doc! { "p": { "$in": posts } };
        self.db.tallies.delete_many(filter).session(&mut *s).await?;
        Ok(())
    }

    /// The counts of each of `posts`: one query for them all.
    pub(crate) async fn post_counts_of(&self, posts: &[PostId]) -> Result<Vec<PostCounts>> {
        let what = "reading post counts";
        let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
        let docs: Vec<Document> = self
            .db
            .tallies
            .find(doc! { "p": { "$in": &ids } })
            .projection(doc! { "_id": 0, "p": 1, "t": 1, "n": 1 })
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        let mut counts: HashMap<i64, PostCounts> = HashMap::new();
        for d in &docs {
            if let Some(tally) = Tally::from_code(get_i64(d, "t") as u8) {
                let of = counts.entry(get_i64(d, "p")).or_default();
                tally.add_to(of, get_i64(d, "n"));
            }
        }
        Ok(ids
            .iter()
            .map(|p| counts.get(p).copied().unwrap_or_default())
            .collect())
    }

    /// The posts `user` likes from `from` on, newest first: the `{u, p}`
    /// index.
    pub(crate) async fn liked_since_of(
        &self,
        user: &UserId,
        from: PostId,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        let what = "reading a user's likes";
        let docs: Vec<Document> = self
            .db
            .likes
            .find(doc! { "u": user.as_str(), "p": { "$gte": id_bson(from) } })
            .projection(doc! { "_id": 0, "p": 1 })
            .sort(doc! { "u": 1, "p": -1 })
            .limit(limit as i64)
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        Ok(docs
            .iter()
            .map(|d| PostId(get_i64(d, "p") as u64))
            .collect())
    }

    /// A page of the post's likers, newest first (ties in id order): the
    /// `{p, at, u}` index.
    pub(crate) async fn likers_of(
        &self,
        post: PostId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        let of = doc! { "p": id_bson(post) };
        crate::graph::newest_first(&self.db.likes, of, "u", after, limit).await
    }
}
