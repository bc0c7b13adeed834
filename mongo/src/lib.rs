//! The MongoDB stores, behind the same ports as the embedded ones: users,
//! the follow graph, posts and the outbox ([`MongoStore`]), and the timeline
//! caches ([`MongoTimelines`]) and buckets ([`MongoBuckets`]). Collections and indexes follow the reference
//! design; the indexes are created at start-up.
//!
//! This crate stores and fetches. What a write checks, what a deletion
//! queues and which entries a timeline accepts are `socialite_core::rules`;
//! where MongoDB must express a rule as an atomic update, the update's
//! filter is derived from the rule's function (see `timelines`). It must not
//! know the other backends, transports or settings sources.

mod accounts;
mod author_posts;
mod buckets;
mod cache_doc;
pub mod connect;
mod content;
mod counts;
mod db;
mod deletion;
mod edge_pages;
mod exclusive;
mod expiry;
mod filters;
mod graph;
mod groups;
mod hybrid;
mod indexes;
mod kept;
mod likes;
mod lists;
mod markers;
mod mute_ends;
mod notices;
mod notify_since;
mod outbox;
mod posts;
mod relations;
mod reposts;
mod snapshots;
mod store;
mod thread_mutes;
mod timelines;
mod transfer;
mod txn;
mod user_rows;
mod webhooks;

pub use buckets::MongoBuckets;
pub use db::Db;
pub use store::MongoStore;
pub use timelines::MongoTimelines;

use socialite_core::error::Result;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::feed::NoTimelines;
use socialite_core::ports::TimelineStore;
use std::sync::Arc;

/// Connects to `uri` (`mongodb://...`, the database its path) and opens the
/// stores and the timelines of `feed`'s model, with their indexes. The feed
/// model decides here which collections hold the timelines, as the embedded
/// store decides for its own.
pub async fn open(
    uri: &str,
    feed: &FeedConfig,
) -> Result<(Arc<MongoStore>, Arc<dyn TimelineStore>)> {
    let db = Db::connect(uri).await?;
    let timelines: Arc<dyn TimelineStore> = match feed.model {
        FeedModel::FanoutOnRead => Arc::new(NoTimelines),
        FeedModel::Cache => {
            Arc::new(MongoTimelines::open(db.clone(), feed.cache_size, feed.freshness()).await?)
        }
        FeedModel::TimeBuckets | FeedModel::SizedBuckets => {
            Arc::new(MongoBuckets::open(db.clone(), feed).await?)
        }
    };
    Ok((Arc::new(MongoStore::new(db)), timelines))
}
