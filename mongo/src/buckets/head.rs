//! A bucketed timeline's head: one document per stored timeline in
//! `<buckets>.heads`, `{_id: timeline, g, setup, warming, wv, floor, purged, retracted, read_at, open}`.
//! Buckets are many documents, so what the cache model keeps in its one
//! document lives here: whether the timeline exists (dormant timelines have
//! no head, and fanout skips them), its coverage floor, the warming memory,
//! the last read time, and for sized buckets the open bucket (a hint that
//! deliveries correct).
//!
//! `g` is the head's generation. A new head starts in `setup`, in which
//! fanout skips it, while whoever creates it deletes buckets of earlier
//! generations (left by an expiry or a drop that a crash cut short); only
//! then does it warm. Buckets record their generation, and reads and pushes
//! use only the head's.

use crate::store::get_i64;
use mongodb::bson::Document;
use socialite_core::ids::PostId;
use socialite_core::ports::Coverage;

#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) generation: i64,
    pub(crate) setup: bool,
    pub(crate) warming: bool,
    pub(crate) wv: i64,
    pub(crate) floor: u64,
    pub(crate) open: i64,
}

/// What reads of heads project: everything but the warming memory.
pub(crate) fn projection() -> Document {
    mongodb::bson::doc! { "purged": 0, "retracted": 0 }
}

impl Head {
    pub(crate) fn from(d: &Document) -> Head {
        Head {
            generation: get_i64(d, "g"),
            setup: d.get_bool("setup").unwrap_or(false),
            warming: d.get_bool("warming").unwrap_or(false),
            wv: get_i64(d, "wv"),
            floor: get_i64(d, "floor") as u64,
            open: get_i64(d, "open"),
        }
    }

    /// The timeline is held exactly from the floor up.
    pub(crate) fn coverage(&self) -> Coverage {
        match self.floor {
            0 => Coverage::All,
            f => Coverage::From(PostId(f)),
        }
    }
}
