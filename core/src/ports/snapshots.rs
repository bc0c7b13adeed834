//! The ranked orders' snapshots, where several processes serve the same
//! readers: a later page may reach another process than the one that
//! ranked its first ([`crate::reads`]). Where one process serves
//! everything (the embedded default), snapshots stay in its memory and no
//! store keeps them.

use super::metered::{port, Metered, Port};
use crate::error::Result;
use crate::ids::UserId;
use socialite_domain::feed::snapshot::Snapshot;

port! {
    pub trait RankSnapshots: Port as "snapshots" for Metered<dyn RankSnapshots> {
        /// Keeps `snapshot` until it expires; the reader's others but the
        /// newest [`socialite_domain::feed::snapshot::PER_READER`] go.
        async fn keep_snapshot(&self, snapshot: &Snapshot) -> Result<()>;
        /// The reader's snapshot `id`, if still kept (whether it serves a
        /// page is [`Snapshot::page`]'s to say).
        async fn snapshot(&self, reader: &UserId, id: u64) -> Result<Option<Snapshot>>;
    }
}
