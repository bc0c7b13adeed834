//! Follow edges read and removed a page at a time, for the steps of a
//! user's deletion (`socialite_domain::deletion::plan`): a page of a user's
//! edges with their lists, and a run of removals as one command per
//! collection; and a run of new edges (a bulk import's,
//! `socialite_domain::graph::edges`) as one insert per collection.

use crate::db::{TxnError, FOLLOWERS, FOLLOWING};
use crate::lists::{lists_of, names};
use crate::store::{get_str, MongoStore};
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::ids::{ListName, UserId};
use socialite_core::plan::Step;

impl MongoStore {
    /// Up to `limit` of `user`'s edges in `collection`, in id order, with
    /// their lists.
    pub(crate) async fn edges_to_cut(
        &self,
        s: &mut ClientSession,
        collection: &str,
        user: &str,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>, TxnError> {
        let field = crate::graph::other_end(collection);
        let mut cursor = self
            .edges(collection)
            .find(doc! { "user": user })
            .projection(doc! { "_id": 0, field: 1, "_g": 1 })
            .sort(doc! { "user": 1, field: 1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            let d = d?;
            out.push((
                UserId::from_stored(get_str(&d, field)?.to_owned()),
                lists_of(&d),
            ));
        }
        Ok(out)
    }

    /// Removes these edges `(follower, followee)`, both directions: one
    /// command per collection, however many.
    pub(crate) async fn remove_edges(
        &self,
        s: &mut ClientSession,
        edges: &[(&str, &str)],
    ) -> Result<(), TxnError> {
        if edges.is_empty() {
            return Ok(());
        }
        let following: Vec<Document> = edges
            .iter()
            .map(|(f, t)| doc! { "q": { "user": *f, "followee": *t }, "limit": 1 })
            .collect();
        let followers: Vec<Document> = edges
            .iter()
            .map(|(f, t)| doc! { "q": { "user": *t, "follower": *f }, "limit": 1 })
            .collect();
        for (collection, deletes) in [(FOLLOWING, following), (FOLLOWERS, followers)] {
            let command = doc! { "delete": collection, "deletes": deletes, "ordered": true };
            self.db
                .database
                .run_command(command)
                .session(&mut *s)
                .await?;
        }
        Ok(())
    }

    /// Adds the new edges of a run of `Step::AddEdge`, both directions:
    /// one insert per collection, however many.
    pub(crate) async fn add_edges(
        &self,
        s: &mut ClientSession,
        run: &[Step],
    ) -> Result<(), TxnError> {
        let (mut following, mut followers) = (Vec::new(), Vec::new());
        for step in run {
            if let Step::AddEdge {
                follower,
                followee,
                lists,
                at_ms,
            } = step
            {
                let (edge, reverse) = edge_docs(follower, followee, lists, *at_ms);
                following.push(edge);
                followers.push(reverse);
            }
        }
        if following.is_empty() {
            return Ok(());
        }
        self.db
            .following
            .insert_many(following)
            .session(&mut *s)
            .await?;
        self.db
            .followers
            .insert_many(followers)
            .session(&mut *s)
            .await?;
        Ok(())
    }
}

/// The documents of the edge `follower → followee` filed under `lists`,
/// made at `at_ms`: in `following` and in `followers`.
pub(crate) fn edge_docs(
    follower: &UserId,
    followee: &UserId,
    lists: &[ListName],
    at_ms: u64,
) -> (Document, Document) {
    let (f, t, at) = (follower.as_str(), followee.as_str(), at_ms as i64);
    let mut edge = doc! { "user": f, "followee": t, "at": at };
    let mut reverse = doc! { "user": t, "follower": f, "at": at };
    if !lists.is_empty() {
        edge.insert("_g", names(lists));
        reverse.insert("_g", names(lists));
    }
    (edge, reverse)
}
