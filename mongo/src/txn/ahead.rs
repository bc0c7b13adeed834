//! Reads ahead for a run of planned changes ([`Txn::read_ahead_edges`],
//! [`Txn::read_ahead_notices`], [`Txn::read_ahead_posts`]): what the rules
//! of a bulk load's or an import's run read, in a few commands instead of a
//! round trip for each fact. Each write keeps what it leaves true and
//! forgets the rest ([`ReadAhead::after`]), so that every read answers what
//! the server would have.
//!
//! [`Txn::read_ahead_edges`]: socialite_core::plan::Txn::read_ahead_edges
//! [`Txn::read_ahead_notices`]: socialite_core::plan::Txn::read_ahead_notices
//! [`Txn::read_ahead_posts`]: socialite_core::plan::Txn::read_ahead_posts

use super::MongoTxn;
use crate::db::{TxnError, IN_CHUNK};
use crate::lists::{lists_of, sizes_of};
use crate::notices::{group_id, notice_id, to_group};
use crate::relations::code;
use crate::store::{get_i64, get_str, to_post};
use crate::thread_mutes::post_of;
use crate::user_rows::present;
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::Post;
use socialite_core::plan::Step;
use socialite_domain::graph::relations::Relation;
use socialite_domain::notifications::notified::{GroupKey, NoticeGroup, NoticeKey};
use std::collections::{BTreeMap, HashMap};

/// What was read ahead, by what the reads ask.
#[derive(Default)]
pub(super) struct ReadAhead {
    /// Each pair asked (follower, followee): the edge's lists; `None`, no edge.
    pub edges: HashMap<(UserId, UserId), Option<Vec<ListName>>>,
    /// Each pair asked: whether either blocks the other.
    pub blocked: HashMap<(UserId, UserId), bool>,
    /// Each follower asked: how many they follow, and their lists with members.
    pub followers: HashMap<UserId, (u64, Vec<ListName>)>,
    /// Each notice asked, by its document's id: its id, if it is kept.
    pub notices: HashMap<String, Option<PostId>>,
    /// Each entry asked, by its document's id.
    pub groups: HashMap<String, Option<NoticeGroup>>,
    /// Each post asked: the post, if it is stored.
    pub posts: HashMap<PostId, Option<Post>>,
    /// Each user asked: whether they exist (and are not being deleted).
    pub users: HashMap<UserId, bool>,
    /// Each recipient of a notice about a post: the threads they muted, in
    /// id order.
    pub thread_mutes: HashMap<UserId, Vec<PostId>>,
    /// Each membership asked: whether it is held.
    pub members: HashMap<(GroupName, UserId), bool>,
    /// Each member asked: how many groups they are in.
    pub group_counts: HashMap<UserId, usize>,
}

impl ReadAhead {
    /// Keeps what was read true across `steps`, the transaction's next
    /// write: a post written is held from then on, a membership written
    /// is held (or not) and moves its member's count, and counts and
    /// events change nothing read here; notices written make those read
    /// forgotten; any other write makes everything forgotten.
    pub(super) fn after(&mut self, steps: &[Step]) {
        for step in steps {
            match step {
                Step::PutPost(p) if !self.posts.is_empty() => {
                    self.posts.insert(p.id, Some(p.clone()));
                }
                Step::Membership(m)
                    if self
                        .members
                        .contains_key(&(m.group.clone(), m.user.clone())) =>
                {
                    let held = self
                        .members
                        .insert((m.group.clone(), m.user.clone()), m.join);
                    let moved = match (held, m.join) {
                        (Some(false), true) => 1,
                        (Some(true), false) => -1,
                        _ => 0,
                    };
                    match self.group_counts.get_mut(&m.user) {
                        Some(n) => *n = n.saturating_add_signed(moved),
                        None => {
                            *self = ReadAhead::default();
                            return;
                        }
                    }
                }
                Step::PutPost(_) | Step::Tally { .. } | Step::Emit(_) => {}
                Step::PutNotice(_) | Step::PutNoticeGroup { .. } => {
                    self.notices.clear();
                    self.groups.clear();
                }
                _ => {
                    *self = ReadAhead::default();
                    return;
                }
            }
        }
    }

    /// Which of `users` exist, if each was read ahead.
    pub(super) fn existing(&self, users: &[&UserId]) -> Option<Vec<UserId>> {
        if self.users.is_empty() {
            return None;
        }
        let mut found = Vec::with_capacity(users.len());
        for u in users {
            if *self.users.get(*u)? && !found.contains(*u) {
                found.push((*u).clone());
            }
        }
        Some(found)
    }
}

/// `pairs` by follower, each follower's followees in one list.
fn by_follower<'a>(pairs: &[(&'a UserId, &'a UserId)]) -> BTreeMap<&'a UserId, Vec<&'a str>> {
    let mut out: BTreeMap<&UserId, Vec<&str>> = BTreeMap::new();
    for (f, t) in pairs {
        out.entry(*f).or_default().push(t.as_str());
    }
    out
}

/// Groups of `$or` clauses holding at most [`IN_CHUNK`] values between them.
fn chunks(clauses: Vec<(usize, Document)>) -> Vec<Vec<Document>> {
    let mut out: Vec<Vec<Document>> = vec![Vec::new()];
    let mut held = 0;
    for (n, clause) in clauses {
        if held + n > IN_CHUNK && !out.last().is_some_and(Vec::is_empty) {
            out.push(Vec::new());
            held = 0;
        }
        held += n;
        out.last_mut().expect("one group at least").push(clause);
    }
    out
}

impl MongoTxn<'_> {
    /// The documents of `collection` that `filter` finds, read in the
    /// transaction.
    async fn find_all(
        &mut self,
        collection: &Collection<Document>,
        filter: Document,
        projection: Document,
    ) -> Result<Vec<Document>, TxnError> {
        let mut cursor = collection
            .find(filter)
            .projection(projection)
            .session(&mut *self.s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *self.s).await {
            out.push(d?);
        }
        Ok(out)
    }

    /// The documents an aggregation of `collection` gives, run in the
    /// transaction.
    async fn aggregate_all(
        &mut self,
        collection: &Collection<Document>,
        pipeline: impl IntoIterator<Item = Document>,
    ) -> Result<Vec<Document>, TxnError> {
        let mut cursor = collection.aggregate(pipeline).session(&mut *self.s).await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *self.s).await {
            out.push(d?);
        }
        Ok(out)
    }

    pub(super) async fn read_edges_ahead(
        &mut self,
        pairs: &[(&UserId, &UserId)],
    ) -> Result<(), TxnError> {
        let db = self.store.db.clone();
        let grouped = by_follower(pairs);
        // The edges asked: one clause per follower.
        let mut found: HashMap<(String, String), Vec<ListName>> = HashMap::new();
        let clauses = grouped
            .iter()
            .map(|(f, ts)| {
                (
                    ts.len(),
                    doc! { "user": f.as_str(), "followee": { "$in": ts } },
                )
            })
            .collect();
        for any in chunks(clauses) {
            let projection = doc! { "_id": 0, "user": 1, "followee": 1, "_g": 1 };
            for d in self
                .find_all(&db.following, doc! { "$or": any }, projection)
                .await?
            {
                let key = (
                    get_str(&d, "user")?.to_owned(),
                    get_str(&d, "followee")?.to_owned(),
                );
                found.insert(key, lists_of(&d));
            }
        }
        self.read_blocks_ahead(pairs).await?;
        // Each follower's count and lists, from their document.
        let mut followers: HashMap<String, (u64, Vec<ListName>)> = HashMap::new();
        let names: Vec<&str> = grouped.keys().map(|f| f.as_str()).collect();
        for part in names.chunks(IN_CHUNK) {
            let filter = doc! { "_id": { "$in": part } };
            let projection = doc! { "_id": 1, "following": 1, "lists": 1 };
            for d in self.find_all(&db.users, filter, projection).await? {
                let lists = sizes_of(&d).into_iter().map(|(l, _)| l).collect();
                let following = get_i64(&d, "following").max(0) as u64;
                followers.insert(get_str(&d, "_id")?.to_owned(), (following, lists));
            }
        }
        let ahead = &mut self.ahead;
        for (f, t) in pairs {
            let key = (f.as_str().to_owned(), t.as_str().to_owned());
            let pair = ((*f).clone(), (*t).clone());
            ahead.edges.insert(pair, found.get(&key).cloned());
        }
        for f in grouped.keys() {
            let held = followers.remove(f.as_str()).unwrap_or_default();
            ahead.followers.insert((*f).clone(), held);
        }
        Ok(())
    }

    /// Whether either of each pair blocks the other: two clauses per first
    /// of a pair.
    async fn read_blocks_ahead(&mut self, pairs: &[(&UserId, &UserId)]) -> Result<(), TxnError> {
        let db = self.store.db.clone();
        let grouped = by_follower(pairs);
        let mut blocks: HashMap<(String, String), ()> = HashMap::new();
        let block = code(Relation::Block);
        let clauses = grouped
            .iter()
            .flat_map(|(f, ts)| {
                let f = f.as_str();
                [
                    (ts.len(), doc! { "k": block, "u": f, "t": { "$in": ts } }),
                    (ts.len(), doc! { "k": block, "u": { "$in": ts }, "t": f }),
                ]
            })
            .collect();
        for any in chunks(clauses) {
            let projection = doc! { "_id": 0, "u": 1, "t": 1 };
            for d in self
                .find_all(&db.relations, doc! { "$or": any }, projection)
                .await?
            {
                blocks.insert(
                    (get_str(&d, "u")?.to_owned(), get_str(&d, "t")?.to_owned()),
                    (),
                );
            }
        }
        for (a, b) in pairs {
            let key = (a.as_str().to_owned(), b.as_str().to_owned());
            let either =
                blocks.contains_key(&key) || blocks.contains_key(&(key.1.clone(), key.0.clone()));
            self.ahead
                .blocked
                .insert(((*a).clone(), (*b).clone()), either);
        }
        Ok(())
    }

    pub(super) async fn read_posts_ahead(
        &mut self,
        posts: &[PostId],
        users: &[&UserId],
    ) -> Result<(), TxnError> {
        let db = self.store.db.clone();
        let mut held: HashMap<PostId, Post> = HashMap::new();
        let ids: Vec<i64> = posts.iter().map(|p| crate::store::id_bson(*p)).collect();
        for part in ids.chunks(IN_CHUNK) {
            let filter = doc! { "_id": { "$in": part } };
            for d in self.find_all(&db.content, filter, Document::new()).await? {
                let post = to_post(&d)?;
                held.insert(post.id, post);
            }
        }
        let mut exist: HashMap<String, bool> = HashMap::new();
        let names: Vec<&str> = users.iter().map(|u| u.as_str()).collect();
        for part in names.chunks(IN_CHUNK) {
            let filter = doc! { "_id": { "$in": part } };
            let projection = doc! { "_id": 1, "deleting": 1 };
            for d in self.find_all(&db.users, filter, projection).await? {
                exist.insert(get_str(&d, "_id")?.to_owned(), present(&d));
            }
        }
        for id in posts {
            self.ahead.posts.insert(*id, held.remove(id));
        }
        for u in users {
            let there = exist.get(u.as_str()).copied().unwrap_or(false);
            self.ahead.users.insert((*u).clone(), there);
        }
        Ok(())
    }

    /// The threads muted by each recipient of a notice about a post (the
    /// notice is not made in a thread they muted).
    async fn read_thread_mutes_ahead(&mut self, keys: &[&NoticeKey]) -> Result<(), TxnError> {
        let db = self.store.db.clone();
        let mut recipients: Vec<&str> = keys
            .iter()
            .filter(|k| k.post.is_some())
            .map(|k| k.recipient.as_str())
            .collect();
        recipients.sort_unstable();
        recipients.dedup();
        let mut muted: HashMap<String, Vec<PostId>> = HashMap::new();
        for part in recipients.chunks(IN_CHUNK) {
            let filter = doc! { "u": { "$in": part } };
            let projection = doc! { "_id": 0, "u": 1, "p": 1 };
            for d in self.find_all(&db.thread_mutes, filter, projection).await? {
                let user = get_str(&d, "u")?.to_owned();
                muted.entry(user).or_default().push(post_of(&d));
            }
        }
        for r in recipients {
            let mut threads = muted.remove(r).unwrap_or_default();
            threads.sort_unstable();
            let user = UserId::from_stored(r.to_owned());
            self.ahead.thread_mutes.insert(user, threads);
        }
        Ok(())
    }

    pub(super) async fn read_members_ahead(
        &mut self,
        pairs: &[(&GroupName, &UserId)],
    ) -> Result<(), TxnError> {
        let db = self.store.db.clone();
        let mut by_user: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (g, u) in pairs {
            by_user.entry(u.as_str()).or_default().push(g.as_str());
        }
        let clauses = by_user
            .iter()
            .map(|(u, gs)| (gs.len(), doc! { "user": *u, "group": { "$in": gs } }))
            .collect();
        let mut held: HashMap<(String, String), ()> = HashMap::new();
        for any in chunks(clauses) {
            let projection = doc! { "_id": 0, "group": 1, "user": 1 };
            for d in self
                .find_all(&db.group_members, doc! { "$or": any }, projection)
                .await?
            {
                let key = (
                    get_str(&d, "group")?.to_owned(),
                    get_str(&d, "user")?.to_owned(),
                );
                held.insert(key, ());
            }
        }
        let users: Vec<&str> = by_user.keys().copied().collect();
        let mut counts: HashMap<String, usize> = HashMap::new();
        let mut exist: HashMap<String, bool> = HashMap::new();
        for part in users.chunks(IN_CHUNK) {
            let pipeline = [
                doc! { "$match": { "user": { "$in": part } } },
                doc! { "$group": { "_id": "$user", "n": { "$sum": 1 } } },
            ];
            for d in self.aggregate_all(&db.group_members, pipeline).await? {
                counts.insert(
                    get_str(&d, "_id")?.to_owned(),
                    get_i64(&d, "n").max(0) as usize,
                );
            }
            let filter = doc! { "_id": { "$in": part } };
            let projection = doc! { "_id": 1, "deleting": 1 };
            for d in self.find_all(&db.users, filter, projection).await? {
                exist.insert(get_str(&d, "_id")?.to_owned(), present(&d));
            }
        }
        for (g, u) in pairs {
            let key = (g.as_str().to_owned(), u.as_str().to_owned());
            let member = held.contains_key(&key);
            self.ahead
                .members
                .insert(((*g).clone(), (*u).clone()), member);
        }
        for u in users {
            let user = UserId::from_stored(u.to_owned());
            let n = counts.get(u).copied().unwrap_or(0);
            self.ahead
                .users
                .insert(user.clone(), exist.get(u).copied().unwrap_or(false));
            self.ahead.group_counts.insert(user, n);
        }
        Ok(())
    }

    pub(super) async fn read_notices_ahead(
        &mut self,
        keys: &[&NoticeKey],
        groups: &[(&UserId, GroupKey)],
    ) -> Result<(), TxnError> {
        let db = self.store.db.clone();
        let ids: Vec<String> = keys.iter().map(|k| notice_id(k)).collect();
        let mut kept: HashMap<String, PostId> = HashMap::new();
        for part in ids.chunks(IN_CHUNK) {
            let filter = doc! { "_id": { "$in": part } };
            for d in self.find_all(&db.notices, filter, doc! { "i": 1 }).await? {
                kept.insert(
                    get_str(&d, "_id")?.to_owned(),
                    PostId(get_i64(&d, "i") as u64),
                );
            }
        }
        let gids: Vec<String> = groups
            .iter()
            .map(|(r, g)| group_id(r.as_str(), *g))
            .collect();
        let mut entries: HashMap<String, NoticeGroup> = HashMap::new();
        for part in gids.chunks(IN_CHUNK) {
            let filter = doc! { "_id": { "$in": part } };
            for d in self
                .find_all(&db.notice_groups, filter, Document::new())
                .await?
            {
                entries.insert(get_str(&d, "_id")?.to_owned(), to_group(&d)?);
            }
        }
        self.read_thread_mutes_ahead(keys).await?;
        for id in ids {
            let held = kept.get(&id).copied();
            self.ahead.notices.insert(id, held);
        }
        for id in gids {
            let held = entries.remove(&id);
            self.ahead.groups.insert(id, held);
        }
        Ok(())
    }
}
