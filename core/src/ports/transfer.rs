//! Reading a store whole and loading records into one, in the export
//! format's records ([`socialite_domain::transfer::record`]), for export, import and
//! migration between any two backends.

use super::metered::{port, Metered};
use super::transact::Transact;
use crate::error::Result;
use crate::event::Event;
use crate::write::Write;
use async_trait::async_trait;
use socialite_domain::transfer::admit::Caps;
use socialite_domain::transfer::record::Record;

port! {
    /// A store's side of moving data: written out whole, loaded in batches.
    pub trait Transfer: Transact as "transfer" for Metered<dyn Transfer> {
        /// A view of the store for one export: a consistent snapshot where the
        /// store takes one (the embedded store's read transaction), else pages
        /// read as they come (MongoDB: consistent when no writes run; a
        /// migration's catch-up carries over what ran during it).
        async fn export_view(&self) -> Result<Box<dyn ExportView>>;
        /// Loads `records` in order, in one transaction, each as
        /// [`socialite_domain::transfer::import::import_record`] plans it under `caps`.
        /// Returns how many changed something.
        write async fn import(&self, records: &[Record], caps: &Caps) -> Result<usize> {
            let write = Write::Import {
                records: records.to_vec(),
                caps: *caps,
            };
            self.transact(write).await?.count()
        }
        /// Replays `event`, from another deployment's log, in one transaction
        /// as [`socialite_domain::transfer::replay::replay_event`] plans it; whether it
        /// changed anything. A user's deletion is the caller's
        /// ([`socialite_domain::transfer::replay::deleted_user`]).
        write async fn replay(&self, event: &Event) -> Result<bool> {
            self.transact(Write::Replay(event.clone())).await?.changed()
        }
    }
}

/// A store being read whole, in the format's order: users, accounts,
/// follows, mutes and blocks, members, posts, likes, markers, kept posts, each in key
/// order. Users being deleted, and the records that name them, are left
/// out.
#[async_trait]
pub trait ExportView: Send {
    /// The next records, at most `limit`; none at the end.
    async fn next(&mut self, limit: usize) -> Result<Vec<Record>>;
}
