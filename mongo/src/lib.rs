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
mod counts;
mod db;
mod deletion;
mod expiry;
mod graph;
mod groups;
mod hybrid;
mod lists;
mod outbox;
mod relations;
mod store;
mod timelines;
mod txn;

pub use buckets::MongoBuckets;
pub use db::Db;
pub use store::MongoStore;
pub use timelines::MongoTimelines;
