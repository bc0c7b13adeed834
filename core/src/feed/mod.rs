//! What goes into whose timeline, decided once for every backend: the
//! read-time merge ([`merge`]), the home timeline read path with cache
//! activation ([`timeline`]), delivery of log events to caches ([`fanout`]),
//! and the cache structure the embedded store keeps ([`cache`]).

pub mod cache;
pub mod fanout;
pub mod merge;
pub mod timeline;

use crate::ports::{ContentStore, GraphStore, TimelineStore};
use std::sync::Arc;

/// The stores the feed logic reads and writes.
#[derive(Clone)]
pub struct Stores {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub timelines: Arc<dyn TimelineStore>,
}
