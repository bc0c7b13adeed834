//! Differential test of the feed logic: for every feed model, linked and
//! embedded, random interleavings of every write, of reads (which activate
//! dormant users) and of log replays over graphs with Zipf-distributed
//! follower counts, checked against an independent model of the timeline
//! (what fanout on read must return) at several page sizes. Seeded: a
//! failure prints the seed and the configuration, and `SOCIALITE_SEED=<n>`
//! reproduces it.

mod harness;
mod held;
mod history;
mod model;
mod notices;
mod ranked;
mod reader;
mod round_trip;

pub use harness::{Harness, Which};
pub use held::held_fanout_matches_the_oracle;
pub use history::{feed, model_matches_the_oracle, play, run};
pub use model::Model;
pub use notices::Entry;
pub use round_trip::{histories_export_import_and_export_the_same, rich_history};
pub use socialite_core::feed::config::FeedModel;
