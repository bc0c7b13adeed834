//! The content store's ports: users, deletions, posts, likes, reposts,
//! notifications, markers, collections and filters, each a port of its own; a
//! backend implements the nine, and anything that does is a `ContentStore`. Every write that
//! other parts must learn of queues its event in the store's outbox in the
//! same transaction.

use super::metered::{port, Metered};
use super::transact::Transact;
use crate::error::Result;
use crate::fault::StoreFault;
use crate::ids::{PostId, UserId};
use crate::model::collection::{Collection, Kept};
use crate::model::filter::{Filter, FilterSet};
use crate::model::{Entry, Post, PostCounts, User};
use crate::write::Write;
use serde_json::{Map, Value};
use socialite_domain::collections::KeepChange;
use socialite_domain::deletion::cascade::{DeletionStage, DELETION_STEP};
use socialite_domain::feed::markers::Marker;
use socialite_domain::filters::FilterChange;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::repost::Reposted;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::notifications::notified::{GroupKey, NoticeChange, NoticeGroup};

/// Users and posts. Every write that other parts must learn of queues its
/// event in the store's outbox in the same transaction, so an acknowledged
/// change always reaches the log (see [`Outbox`]).
pub trait ContentStore:
    Users + Deletions + Posts + Likes + Reposts + Notices + Markers + Collections + Filters
{
}

impl<
        T: Users
            + Deletions
            + Posts
            + Likes
            + Reposts
            + Notices
            + Markers
            + Collections
            + Filters
            + ?Sized,
    > ContentStore for T
{
}

port! {
    /// Users: created, given a profile, read.
    pub trait Users: Transact as "content" for Metered<dyn ContentStore> {
        /// Creates the user, or replaces the profile of an existing one (`None`
        /// keeps it). Returns the user and whether it was created; an existing
        /// user's counts are read after the write (0 if they were deleted since).
        write async fn put_user(
            &self,
            id: &UserId,
            profile: Option<Map<String, Value>>,
        ) -> Result<(User, bool)> {
            let write = Write::PutUser {
                user: id.clone(),
                profile,
            };
            let (created, profile) = self.transact(write).await?.user()?;
            let mut user = User {
                id: id.clone(),
                followers: 0,
                following: 0,
                profile,
            };
            if !created {
                if let Some(held) = self.get_user(id).await? {
                    (user.followers, user.following) = (held.followers, held.following);
                }
            }
            Ok((user, created))
        }
        async fn get_user(&self, id: &UserId) -> Result<Option<User>>;
        /// A fault the store knows of without asking anything (the embedded
        /// store after an I/O error, until it reopened), for readiness and
        /// liveness; `None` when it knows of none.
        fn fault(&self) -> Option<StoreFault> {
            None
        }
        /// The accounts with at least `at_least` followers, most followed
        /// first, at most `limit`: the fanout worker loads their follower lists
        /// when it starts, before their first post waits for it.
        async fn most_followed(&self, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>>;
    }
}

port! {
    /// A user's deletion, in steps ([`DeletionStage`]).
    pub trait Deletions: Transact as "content" for Metered<dyn ContentStore> {
        /// Begins deleting the user ([`DeletionStage`]): marks them as being
        /// deleted, so that from now on they are gone to readers and writers,
        /// and a restarted process finds the deletion to resume. False if there
        /// is no such user (or their deletion began already).
        write async fn begin_deletion(&self, id: &UserId) -> Result<bool> {
            self.transact(Write::BeginDeletion(id.clone()))
                .await?
                .changed()
        }
        /// One step of a begun deletion, in one transaction: removes up to
        /// `limit` of the stage's records and queues what [`socialite_domain::deletion::cascade::UserDeletion`]
        /// decides for them (the `Finish` stage removes the user's record, their
        /// counts and the mark, and queues [`socialite_domain::deletion::cascade::timeline_dropped`]). Returns whether
        /// the stage has more.
        write async fn deletion_step(&self, id: &UserId, stage: DeletionStage, limit: usize) -> Result<bool> {
            let write = Write::DeletionStep {
                user: id.clone(),
                stage,
                limit,
            };
            self.transact(write).await?.changed()
        }
        /// The users whose deletion began and has not finished.
        async fn pending_deletions(&self) -> Result<Vec<UserId>>;
        /// Deletes the user, their posts and their edges, the mentions of the
        /// user in other posts, fixes the counts of the accounts at the other
        /// ends, and queues `AuthorRetracted` (in chunks), `Unfollowed` for each
        /// account they followed, `Left` for each group, and `TimelineDropped`,
        /// in bounded steps. Returns false if there was no such user.
        async fn delete_user(&self, id: &UserId) -> Result<bool> {
            if !self.begin_deletion(id).await? {
                return Ok(false);
            }
            self.finish_deletion(id).await?;
            Ok(true)
        }
        /// Runs every remaining step of a begun deletion.
        async fn finish_deletion(&self, id: &UserId) -> Result<()> {
            for stage in DeletionStage::ORDER {
                while self.deletion_step(id, stage, DELETION_STEP).await? {}
            }
            Ok(())
        }
        /// Finishes the deletions a crash cut short; returns how many.
        async fn resume_deletions(&self) -> Result<usize> {
            let pending = self.pending_deletions().await?;
            for id in &pending {
                self.finish_deletion(id).await?;
            }
            Ok(pending.len())
        }
    }
}

port! {
    /// Posts: stored, deleted, and read by id, by author, by mention and by
    /// the post they answer.
    pub trait Posts: Transact as "content" for Metered<dyn ContentStore> {
        /// Stores the post and queues `PostCreated`. `NotFound` if the author is
        /// unknown. The post's mentions are candidates: the store keeps those
        /// that are users ([`socialite_domain::posts::mentions::kept`]) in the same
        /// transaction, indexes the post under each, and returns the post as
        /// stored.
        write async fn create_post(&self, post: Post) -> Result<Post> {
            self.transact(Write::CreatePost(post)).await?.post()
        }
        /// The ids of the posts that mention `user` within `range`, newest
        /// first, at most `limit`: one indexed range read.
        async fn mentions_of(&self, user: &UserId, range: IdRange, limit: usize)
            -> Result<Vec<PostId>>;
        /// The posts that exist among `ids`, in the order of `ids`.
        async fn get_posts(&self, ids: &[PostId]) -> Result<Vec<Post>>;
        /// Deletes the post (and its mentions) and queues `PostDeleted`; returns
        /// it, or `None` if absent.
        write async fn delete_post(&self, id: PostId) -> Result<Option<Post>> {
            self.transact(Write::DeletePost(id)).await?.deleted()
        }
        /// For each author, the newest `limit_each` of their post ids in `range`,
        /// as timeline entries in no particular order. One call for many authors,
        /// so a read-time merge costs one round trip.
        async fn post_ids_by(
            &self,
            authors: &[UserId],
            range: IdRange,
            limit_each: usize,
        ) -> Result<Vec<Entry>>;
        /// The newest `limit` posts of all of `authors` together in `range`,
        /// newest first: the page of a read-time merge. Stores that keep each
        /// author's posts in order merge them as a heap (a read of about
        /// `limit` entries, however many authors), instead of reading `limit`
        /// of each.
        async fn newest_by(
            &self,
            authors: &[UserId],
            range: IdRange,
            limit: usize,
        ) -> Result<Vec<Entry>> {
            let candidates = self.post_ids_by(authors, range, limit).await?;
            Ok(crate::model::newest(candidates, limit))
        }
        /// The newest post id ever stored, so a restarted producer keeps ids increasing.
        async fn newest_post_id(&self) -> Result<Option<PostId>>;
        /// The replies to `post` after `after`, oldest first, at most `limit`:
        /// one indexed range read.
        async fn replies_of(
            &self,
            post: PostId,
            after: Option<PostId>,
            limit: usize,
        ) -> Result<Vec<PostId>>;
    }
}

port! {
    /// Likes, and the counts of posts.
    pub trait Likes: Transact as "content" for Metered<dyn ContentStore> {
        /// Applies a like or its undoing as [`socialite_domain::interactions::like::change_like`]
        /// plans it, atomically: the row, the post's count and the event.
        /// Returns whether it changed anything.
        write async fn change_like(&self, change: &LikeChange) -> Result<bool> {
            self.transact(Write::Like(change.clone())).await?.changed()
        }
        /// Who likes `post`, newest like first, each with when they liked it,
        /// after `after` (a time and a user, from a page before), at most
        /// `limit`. Ties in time come in id order.
        async fn likers(
            &self,
            post: PostId,
            after: Option<&(u64, UserId)>,
            limit: usize,
        ) -> Result<Vec<(UserId, u64)>>;
        /// The counts of each of `posts`, in their order (zero for a post that
        /// is not stored).
        async fn post_counts(&self, posts: &[PostId]) -> Result<Vec<PostCounts>>;
        /// The posts `user` likes whose ids are `from` or newer (posts of
        /// that time on), newest post first, at most `limit`: what a ranked
        /// timeline reads of the reader's likes.
        async fn liked_since(&self, user: &UserId, from: PostId, limit: usize) -> Result<Vec<PostId>>;
    }
}

port! {
    /// Reposts: a reposter's item of a post.
    pub trait Reposts: Transact as "content" for Metered<dyn ContentStore> {
        /// Applies a repost or its undoing as
        /// [`socialite_domain::interactions::repost::change_repost`] plans it, atomically: the
        /// reposter's item (a new one takes the id `id`), its rows, the post's
        /// count and the event.
        write async fn change_repost(&self, change: &RepostChange, id: PostId) -> Result<Reposted> {
            let write = Write::Repost {
                change: change.clone(),
                id,
            };
            self.transact(write).await?.reposted()
        }
        /// Those of `posts` that may have reposts: every one that has, and
        /// maybe some whose reposts were all undone (a read of their reposts
        /// then finds none). The page read asks this of every page, so a store
        /// answers it from memory where it can.
        async fn reposted_among(&self, posts: &[PostId]) -> Result<Vec<PostId>>;
        /// Who reposted `post`, newest repost first, each with their repost's
        /// item, at most `limit`.
        async fn reposters(&self, post: PostId, limit: usize) -> Result<Vec<(UserId, PostId)>>;
        /// The reposts of `post` that `users` made: (reposter, item), in any
        /// order. One batched read, however many users.
        async fn reposts_among(&self, post: PostId, users: &[UserId]) -> Result<Vec<(UserId, PostId)>>;
    }
}

port! {
    /// Notifications: notices, and the entries they group into.
    pub trait Notices: Transact as "content" for Metered<dyn ContentStore> {
        /// Applies notices as [`socialite_domain::notifications::notify::apply_notices`] plans
        /// them, in one transaction (no `Forget` among them); how many changed
        /// anything.
        write async fn apply_notices(&self, changes: &[NoticeChange]) -> Result<usize> {
            self.transact(Write::Notices(changes.to_vec()))
                .await?
                .count()
        }
        /// Forgets a page of the notices to or by `user`, as
        /// [`socialite_domain::notifications::notify::forget_page`] plans it; whether more remain.
        write async fn forget_notices(&self, user: &UserId, limit: usize) -> Result<bool> {
            let write = Write::ForgetNotices {
                user: user.clone(),
                limit,
            };
            self.transact(write).await?.changed()
        }
        /// Mutes (`make`) or unmutes the thread of `post` for `user`'s
        /// notifications, as [`socialite_domain::notifications::thread_mutes::mute_thread`]
        /// plans it: whether it changed, and the thread's first post.
        write async fn mute_thread(&self, user: &UserId, post: PostId, make: bool) -> Result<(bool, PostId)> {
            let write = Write::ThreadMute {
                user: user.clone(),
                post,
                make,
            };
            self.transact(write).await?.thread()
        }
        /// The threads the user muted (their first posts), in id order,
        /// after `after`, at most `limit`.
        async fn muted_threads(
            &self,
            user: &UserId,
            after: Option<PostId>,
            limit: usize,
        ) -> Result<Vec<PostId>>;
        /// The user's notification entries in the order of their newest
        /// notices, newest first, below the place `before`, at most `limit`.
        async fn notice_groups(
            &self,
            user: &UserId,
            before: Option<PostId>,
            limit: usize,
        ) -> Result<Vec<NoticeGroup>>;
        /// The newest notices of the user's entry `group` below `before`,
        /// newest first, at most `limit`: (id, actor).
        async fn entry_notices(
            &self,
            user: &UserId,
            group: GroupKey,
            before: Option<PostId>,
            limit: usize,
        ) -> Result<Vec<(PostId, UserId)>>;
        /// The notices of `actors` in the user's entry `group`: (id, actor),
        /// any order.
        async fn entry_notices_by(
            &self,
            user: &UserId,
            group: GroupKey,
            actors: &[UserId],
        ) -> Result<Vec<(PostId, UserId)>>;
    }
}

port! {
    /// Markers: where a user stopped reading a timeline.
    pub trait Markers: Transact as "content" for Metered<dyn ContentStore> {
        /// Sets `user`'s marker as [`socialite_domain::feed::marker::set_marker`] plans
        /// it, atomically with its event; the marker the user has afterwards,
        /// and whether it moved.
        write async fn set_marker(&self, user: &UserId, to: Marker, force: bool) -> Result<(Marker, bool)> {
            let write = Write::Marker {
                user: user.clone(),
                to,
                force,
            };
            self.transact(write).await?.marker()
        }
        /// The user's markers, in timeline order.
        async fn markers(&self, user: &UserId) -> Result<Vec<Marker>>;
    }
}

port! {
    /// Keyword filters: a reader's, kept as one set ([`socialite_domain::filters`]).
    pub trait Filters: Transact as "content" for Metered<dyn ContentStore> {
        /// Makes a filter (`id` None) or changes the user's filter `id` as
        /// [`socialite_domain::filters::plan::put_filter`] plans it, now,
        /// atomically with its event; the filter afterwards.
        write async fn put_filter(&self, user: &UserId, id: Option<u64>, change: &FilterChange) -> Result<Filter> {
            let write = Write::PutFilter {
                user: user.clone(),
                id,
                change: change.clone(),
                at_ms: crate::ids::now_ms(),
            };
            self.transact(write).await?.filter()
        }
        /// Deletes the user's filter `id`; whether there was one.
        write async fn remove_filter(&self, user: &UserId, id: u64) -> Result<bool> {
            let write = Write::RemoveFilter {
                user: user.clone(),
                id,
            };
            self.transact(write).await?.changed()
        }
        /// The user's filters, if they ever made one.
        async fn filters(&self, user: &UserId) -> Result<Option<FilterSet>>;
        /// The revision of the user's filters ([`FilterSet::rev`]), without
        /// reading them: what every page read asks.
        async fn filters_rev(&self, user: &UserId) -> Result<Option<u64>>;
    }
}

port! {
    /// Posts users keep, in collections a feature names (bookmarks, ...):
    /// every collection stored alike ([`socialite_domain::collections`]).
    pub trait Collections: Transact as "content" for Metered<dyn ContentStore> {
        /// Puts a post in or takes it out of a user's collection, as
        /// [`socialite_domain::collections::change_kept`] plans it, now,
        /// atomically with its event; whether it changed.
        write async fn change_kept(&self, change: &KeepChange) -> Result<bool> {
            let write = Write::Keep {
                change: change.clone(),
                at_ms: crate::ids::now_ms(),
            };
            self.transact(write).await?.changed()
        }
        /// The user's `collection`, newest kept first (a post id tells apart
        /// those of one millisecond): at most `limit`, after `before` (the
        /// last of the previous page) when given.
        async fn kept(
            &self,
            collection: &Collection,
            user: &UserId,
            before: Option<(u64, PostId)>,
            limit: usize,
        ) -> Result<Vec<Kept>>;
    }
}

/// A window of post ids: `below` is exclusive, `from` inclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdRange {
    pub below: Option<PostId>,
    pub from: Option<PostId>,
}

impl IdRange {
    pub fn contains(&self, id: PostId) -> bool {
        self.below.is_none_or(|b| id < b) && self.from.is_none_or(|f| id >= f)
    }
}
