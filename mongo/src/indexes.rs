//! The indexes every collection needs, each with the queries it serves,
//! created when the store connects.

use crate::db::{db_err, Db};
use mongodb::bson::{doc, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};
use socialite_core::error::Result;

impl Db {
    pub(crate) async fn create_indexes(&self) -> Result<()> {
        // Follow lists newest first: `at` is when the follow was made (ms);
        // edges stored before it was kept get 0, once, and come last.
        for edges in [&self.followers, &self.following] {
            edges
                .update_many(
                    doc! { "at": { "$exists": false } },
                    doc! { "$set": { "at": 0_i64 } },
                )
                .await
                .map_err(db_err("giving old edges a follow time"))?;
        }
        for (collection, model, what) in self.indexes() {
            collection
                .create_index(model)
                .await
                .map_err(db_err(&format!("creating {what}")))?;
        }
        self.rank_snapshots_expiry().await;
        Ok(())
    }

    /// The TTL index on the ranked snapshots' `x`, each document expiring
    /// at its own time. A server without TTL indexes keeps expired
    /// snapshots until their reader's newer ones replace them; reads never
    /// serve them.
    async fn rank_snapshots_expiry(&self) {
        let index = IndexModel::builder()
            .keys(doc! { "x": 1 })
            .options(
                IndexOptions::builder()
                    .name("x_ttl".to_owned())
                    .expire_after(std::time::Duration::ZERO)
                    .build(),
            )
            .build();
        if let Err(e) = self.rank_snapshots.create_index(index).await {
            tracing::warn!(error = %e, "the ranked snapshots' TTL index could not be made; each reader's stay bounded");
        }
    }

    /// Every index the store's queries need, with what each serves.
    fn indexes(&self) -> Vec<(&Collection<Document>, IndexModel, &'static str)> {
        vec![
            // Edges: one per pair; followers and following lists are
            // covered queries on these indexes, in id order.
            (
                &self.followers,
                index(doc! { "user": 1, "follower": 1 }, "user_follower", true),
                "the followers index",
            ),
            (
                &self.following,
                index(doc! { "user": 1, "followee": 1 }, "user_followee", true),
                "the following index",
            ),
            // Follow lists newest first.
            (
                &self.followers,
                index(
                    doc! { "user": 1, "at": -1, "follower": 1 },
                    "user_at_follower",
                    false,
                ),
                "the follow time index",
            ),
            (
                &self.following,
                index(
                    doc! { "user": 1, "at": -1, "followee": 1 },
                    "user_at_followee",
                    false,
                ),
                "the follow time index",
            ),
            // The suspended accounts, read by every process once a second.
            (
                &self.accounts,
                index(doc! { "suspended": 1 }, "suspended", false),
                "the accounts index",
            ),
            // A group's members in id order, and a user's groups.
            (
                &self.group_members,
                index(doc! { "group": 1, "user": 1 }, "group_user", true),
                "the group members index",
            ),
            (
                &self.group_members,
                index(doc! { "user": 1, "group": 1 }, "user_group", true),
                "the user groups index",
            ),
            // A list's members in id order: the edges of a user filed under
            // a list (`_g` holds the edge's lists, so the index is multikey).
            (
                &self.following,
                index(
                    doc! { "user": 1, "_g": 1, "followee": 1 },
                    "user_g_followee",
                    false,
                ),
                "the list index",
            ),
            // An author's posts newest first, for read-time merges and backfills.
            (
                &self.content,
                index(doc! { "author": 1, "_id": -1 }, "author_id", false),
                "the content index",
            ),
            // The replies to a post, oldest first (threads).
            (
                &self.content,
                index(doc! { "reply_to.id": 1, "_id": 1 }, "reply_to_id", false),
                "the replies index",
            ),
            // The posts that mention a user, newest first (multikey).
            (
                &self.content,
                index(doc! { "mentions": 1, "_id": -1 }, "mentions_id", false),
                "the mentions index",
            ),
        ]
        .into_iter()
        .chain(self.relation_indexes())
        .chain(self.count_indexes())
        .chain(self.like_and_marker_indexes())
        .chain(self.repost_indexes())
        .chain(self.notice_indexes())
        .chain(self.kept_indexes())
        .collect()
    }

    /// Mutes and blocks: a user's in id order, who keeps one to a user, and
    /// the ends of mutes that end by themselves, soonest first.
    fn relation_indexes(&self) -> Vec<(&Collection<Document>, IndexModel, &'static str)> {
        vec![
            (
                &self.relations,
                index(doc! { "u": 1, "k": 1, "t": 1 }, "u_k_t", true),
                "the relations index",
            ),
            (
                &self.relations,
                index(doc! { "t": 1, "k": 1, "u": 1 }, "t_k_u", false),
                "the related index",
            ),
            (
                &self.relations,
                index(doc! { "until": 1 }, "until", false),
                "the mute ends index",
            ),
            // A user's exclusive lists, in name order.
            (
                &self.exclusive_lists,
                index(doc! { "u": 1, "l": 1 }, "u_l", true),
                "the exclusive lists index",
            ),
        ]
    }

    /// The most followed accounts, which a fanout worker loads when it
    /// starts (`most_followed`): the count's shards by size, and the users
    /// documents' own counts.
    fn count_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 2] {
        [
            (
                &self.counts,
                index(doc! { "n": -1 }, "n", false),
                "the follower count index",
            ),
            (
                &self.users,
                index(doc! { "followers": -1 }, "followers", false),
                "the follower count index",
            ),
        ]
    }

    /// A collection of a user in its order (and its size); a deleted
    /// post's rows in every collection; the export's order.
    fn kept_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 4] {
        [
            (
                &self.kept,
                index(
                    doc! { "u": 1, "c": 1, "at": -1, "p": -1 },
                    "u_c_at_p",
                    false,
                ),
                "the collections index",
            ),
            (
                &self.kept,
                index(doc! { "p": 1 }, "p", false),
                "the kept posts index",
            ),
            (
                &self.kept,
                index(doc! { "u": 1, "c": 1, "p": 1 }, "u_c_p", true),
                "the kept posts' export index",
            ),
            // A user's muted threads in id order.
            (
                &self.thread_mutes,
                index(doc! { "u": 1, "p": 1 }, "u_p", true),
                "the muted threads index",
            ),
        ]
    }

    /// A like per post and user; a post's likers newest first; a user's
    /// likes; a page of posts' counts; a user's markers; a user's filters'
    /// revision, which every page read asks for (a covered query).
    fn like_and_marker_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 6] {
        [
            (
                &self.markers,
                index(doc! { "u": 1, "t": 1 }, "u_t", false),
                "the markers index",
            ),
            (
                &self.filters,
                index(doc! { "_id": 1, "rev": 1 }, "id_rev", false),
                "the filters revision index",
            ),
            (
                &self.likes,
                index(doc! { "p": 1, "u": 1 }, "p_u", true),
                "the likes index",
            ),
            (
                &self.likes,
                index(doc! { "p": 1, "at": -1, "u": 1 }, "p_at_u", false),
                "the likers index",
            ),
            (
                &self.likes,
                index(doc! { "u": 1, "p": 1 }, "u_p", false),
                "the user likes index",
            ),
            (
                &self.tallies,
                index(doc! { "p": 1 }, "p", false),
                "the tallies index",
            ),
        ]
    }

    /// A repost per post and user; a post's reposters newest first; a
    /// user's reposts.
    fn repost_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 3] {
        [
            (
                &self.reposts,
                index(doc! { "p": 1, "u": 1 }, "p_u", true),
                "the reposts index",
            ),
            (
                &self.reposts,
                index(doc! { "p": 1, "i": -1 }, "p_i", false),
                "the reposters index",
            ),
            (
                &self.reposts,
                index(doc! { "u": 1, "p": 1 }, "u_p", false),
                "the user reposts index",
            ),
        ]
    }

    /// An entry's notices newest first; a user's caused notices; a user's
    /// entries newest first.
    fn notice_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 5] {
        [
            (
                &self.notices,
                index(
                    doc! { "r": 1, "k": 1, "p": 1, "w": 1, "i": -1 },
                    "r_k_p_w_i",
                    false,
                ),
                "the entry notices index",
            ),
            (
                &self.notices,
                index(doc! { "a": 1 }, "a", false),
                "the caused notices index",
            ),
            (
                &self.notice_groups,
                index(
                    doc! { "r": 1, "l": -1, "k": -1, "p": -1, "w": -1 },
                    "r_l",
                    false,
                ),
                "the notifications index",
            ),
            // An endpoint's delivery log, newest first.
            (
                &self.webhook_attempts,
                index(doc! { "endpoint": 1, "seq": -1 }, "endpoint_seq", true),
                "the webhook deliveries index",
            ),
            // A reader's ranked snapshots, the newest first.
            (
                &self.rank_snapshots,
                index(doc! { "r": 1, "x": -1 }, "r_x", false),
                "the ranked snapshots index",
            ),
        ]
    }
}

/// An index named `name` on `keys`.
fn index(keys: Document, name: &str, unique: bool) -> IndexModel {
    let options = IndexOptions::builder().name(name.to_owned());
    let options = match unique {
        true => options.unique(true).build(),
        false => options.build(),
    };
    IndexModel::builder().keys(keys).options(options).build()
}
