//! Recent posts in memory, in front of the content store: a timeline page
//! needs up to 200 posts hydrated, a ranked order up to 1,200, and the
//! same recent posts are read by every follower. Posts never change, so
//! the cache is written through on creation and only deletion invalidates
//! it.
//!
//! Bounded, in two generations per shard: posts go into the young one;
//! when it is full it becomes the old one (the previous old one is
//! dropped) and a post read from the old one moves back to the young. What
//! is read often stays however large the stream of new posts; and unlike
//! a shard that starts afresh when full, a full cache never loses all it
//! holds at once.

use rustc_hash::FxHashMap;
use socialite_core::ids::PostId;
use socialite_core::model::Post;
use std::sync::{Arc, Mutex};

const SHARDS: usize = 16;

#[derive(Default)]
struct Shard {
    young: FxHashMap<u64, Arc<Post>>,
    old: FxHashMap<u64, Arc<Post>>,
    /// Bumped by every removal from the shard.
    epoch: u64,
}

impl Shard {
    fn insert(&mut self, per_generation: usize, post: Arc<Post>) {
        if self.young.len() >= per_generation {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(post.id.0, post);
    }
}

pub struct PostCache {
    per_generation: usize,
    shards: Vec<Mutex<Shard>>,
}

impl PostCache {
    /// Holds at most `capacity` posts (and at least two per shard).
    pub fn new(capacity: usize) -> PostCache {
        PostCache {
            per_generation: (capacity / SHARDS / 2).max(1),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    fn shard(&self, id: PostId) -> std::sync::MutexGuard<'_, Shard> {
        let i = (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, id: PostId) -> Option<Arc<Post>> {
        let mut shard = self.shard(id);
        if let Some(post) = shard.young.get(&id.0) {
            return Some(post.clone());
        }
        let post = shard.old.remove(&id.0)?;
        shard.insert(self.per_generation, post.clone());
        Some(post)
    }

    /// A post just written (its commit is done).
    pub fn put(&self, post: Arc<Post>) {
        self.shard(post.id).insert(self.per_generation, post);
    }

    /// Taken before a read of the file begins; see [`PostCache::loaded`].
    pub fn epoch(&self, id: PostId) -> u64 {
        self.shard(id).epoch
    }

    /// A post read from the file, kept unless a removal from its shard came
    /// since `epoch`: the read may have seen it before its deletion
    /// committed, and would otherwise bring it back for good.
    pub fn loaded(&self, post: Arc<Post>, epoch: u64) {
        let mut shard = self.shard(post.id);
        if shard.epoch == epoch {
            shard.insert(self.per_generation, post);
        }
    }

    /// A post deleted or rewritten (its commit is done).
    pub fn remove(&self, id: PostId) {
        let mut shard = self.shard(id);
        shard.epoch += 1;
        shard.young.remove(&id.0);
        shard.old.remove(&id.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socialite_core::ids::UserId;

    fn post(id: u64) -> Arc<Post> {
        Arc::new(Post {
            id: PostId(id),
            author: UserId::parse("alice").unwrap(),
            message: format!("post {id}"),
            data: None,
            mentions: Vec::new(),
            reply_to: None,
            repost_of: None,
        })
    }

    /// Ids that fall in one shard.
    fn same_shard(n: usize) -> Vec<u64> {
        let index = |id: u64| (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS;
        (1..).filter(|&id| index(id) == index(1)).take(n).collect()
    }

    #[test]
    fn what_is_read_stays_and_the_rest_ages_out() {
        // Two generations of two posts each in every shard.
        let cache = PostCache::new(SHARDS * 4);
        let ids = same_shard(8);
        cache.put(post(ids[0]));
        cache.put(post(ids[1]));
        // Full young generation: the next post turns it old.
        cache.put(post(ids[2]));
        assert!(
            cache.get(PostId(ids[0])).is_some(),
            "read from the old, moved back"
        );
        cache.put(post(ids[3]));
        cache.put(post(ids[4]));
        // ids[1] was never read again: two turnovers dropped it.
        assert!(cache.get(PostId(ids[1])).is_none());
        assert!(cache.get(PostId(ids[0])).is_some());
        let held = ids
            .iter()
            .filter(|&&id| cache.get(PostId(id)).is_some())
            .count();
        assert!(held <= 4, "at most the capacity: {held}");
    }

    #[test]
    fn a_read_overtaken_by_a_deletion_is_not_kept() {
        let cache = PostCache::new(SHARDS * 4);
        let before = cache.epoch(PostId(7));
        cache.remove(PostId(7)); // committed while the read was under way
        cache.loaded(post(7), before);
        assert!(cache.get(PostId(7)).is_none());
        cache.loaded(post(7), cache.epoch(PostId(7)));
        assert!(cache.get(PostId(7)).is_some());
    }

    #[test]
    fn a_removed_post_is_gone_from_both_generations() {
        let cache = PostCache::new(SHARDS * 4);
        let ids = same_shard(3);
        for id in &ids {
            cache.put(post(*id));
        }
        cache.remove(PostId(ids[0]));
        cache.remove(PostId(ids[2]));
        assert!(cache.get(PostId(ids[0])).is_none());
        assert!(cache.get(PostId(ids[2])).is_none());
        assert!(cache.get(PostId(ids[1])).is_some());
    }
}
