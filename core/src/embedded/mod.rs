//! The embedded default: the whole pipeline's storage in one process with no
//! servers. Content, graph and outbox persist in `content.redb`, the log in
//! `log.redb` (both redb: pure Rust, ACID, crash-safe copy-on-write B-trees),
//! and timeline caches live in memory.

mod content;
mod graph;
mod import;
mod log;
mod post_cache;
mod tables;
mod timelines;
mod writer;

pub use content::EmbeddedStore;
pub use log::{EmbeddedLog, DEFAULT_RETENTION};
pub use timelines::MemoryTimelines;
