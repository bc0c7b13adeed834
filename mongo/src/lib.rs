//! The MongoDB stores, behind the same ports as the embedded ones: users,
//! the follow graph, posts and the outbox ([`MongoStore`]), and the timeline
//! caches ([`MongoTimelines`]). Collections and indexes follow the reference
//! design; the indexes are created at start-up.
//!
//! This crate stores and fetches. What a write checks, what a deletion
//! queues and which entries a timeline accepts are `socialite_core::rules`;
//! where MongoDB must express a rule as an atomic update, the update's
//! filter is derived from the rule's function (see `timelines`). It must not
//! know the other backends, transports or settings sources.

mod cache_doc;
mod counts;
mod db;
mod deletion;
mod expiry;
mod graph;
mod groups;
mod lists;
mod outbox;
mod store;
mod timelines;

pub use db::Db;
pub use store::MongoStore;
pub use timelines::MongoTimelines;

use socialite_core::error::{Error, Result};
use socialite_core::feed::config::{FeedConfig, FeedModel};

/// Checks that MongoDB can hold timelines of this feed model: the capped
/// cache (`timeline_cache`) or none (fanout on read).
pub fn check_feed_model(feed: &FeedConfig) -> Result<()> {
    match feed.model {
        FeedModel::Cache | FeedModel::FanoutOnRead => Ok(()),
        other => Err(Error::invalid(
            "invalid_config",
            format!(
                "the {other} feed model runs on the embedded store; on MongoDB use `cache` or `read`"
            ),
        )),
    }
}
