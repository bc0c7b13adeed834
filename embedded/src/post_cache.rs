//! Recent posts in memory, in front of the content store: a timeline page
//! needs up to 200 posts hydrated, and the same recent posts are read by every
//! follower. Posts never change, so the cache is written through on creation
//! and only deletion invalidates it. Each shard holds a bounded number of
//! posts and starts afresh when full: cheap, and recent posts come back on
//! their next read.

use rustc_hash::FxHashMap;
use socialite_core::ids::PostId;
use socialite_core::model::Post;
use std::sync::{Arc, Mutex};

const SHARDS: usize = 16;

pub struct PostCache {
    per_shard: usize,
    shards: Vec<Mutex<FxHashMap<u64, Arc<Post>>>>,
}

impl PostCache {
    /// Holds about `capacity` posts.
    pub fn new(capacity: usize) -> PostCache {
        PostCache {
            per_shard: (capacity / SHARDS).max(1),
            shards: (0..SHARDS)
                .map(|_| Mutex::new(FxHashMap::default()))
                .collect(),
        }
    }

    fn shard(&self, id: PostId) -> std::sync::MutexGuard<'_, FxHashMap<u64, Arc<Post>>> {
        let i = (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, id: PostId) -> Option<Arc<Post>> {
        self.shard(id).get(&id.0).cloned()
    }

    pub fn put(&self, post: Arc<Post>) {
        let mut shard = self.shard(post.id);
        if shard.len() >= self.per_shard {
            shard.clear();
        }
        shard.insert(post.id.0, post);
    }

    pub fn remove(&self, id: PostId) {
        self.shard(id).remove(&id.0);
    }
}
