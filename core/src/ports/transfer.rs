//! Reading a store whole and loading records into one, in the export
//! format's records ([`socialite_domain::transfer::record`]), for export, import and
//! migration between any two backends.

use super::metered::{port, Metered};
use super::transact::Transact;
use crate::error::Result;
use crate::event::Event;
use crate::ids::UserId;
use crate::write::Write;
use async_trait::async_trait;
use socialite_domain::transfer::admit::Caps;
use socialite_domain::transfer::export::Section;
use socialite_domain::transfer::record::Record;

port! {
    /// A store's side of moving data: written out whole, loaded in batches.
    pub trait Transfer: Transact as "transfer" for Metered<dyn Transfer> {
        /// A view of the store for one export ([`crate::transfer::walk`]
        /// reads it): a consistent snapshot where the store takes one (the
        /// embedded store's read transaction), else pages read as they come
        /// (MongoDB: consistent when no writes run; a migration's catch-up
        /// carries over what ran during it).
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

/// A store being read whole for one export: the records of each section
/// ([`Section`]), a page at a time, in the section's key order, as the
/// store holds them. What an export carries of them, and in what order, is
/// decided once, in core ([`crate::transfer::walk`]): a backend offers
/// only these pages and who is being deleted.
#[async_trait]
pub trait ExportView: Send {
    /// The users being deleted, as the view sees the store.
    async fn deleting(&mut self) -> Result<Vec<UserId>>;
    /// Up to `limit` (at least 1) records of `section` after `after`, the
    /// last record given of it (`None`: from its start), in the section's
    /// key order ([`Record::key`]); every record the store holds, those
    /// naming users being deleted and default standings among them (a row
    /// no record reads, as of a later version, is passed over). Empty only
    /// at the section's end.
    async fn page(
        &mut self,
        section: Section,
        after: Option<&Record>,
        limit: usize,
    ) -> Result<Vec<Record>>;
}
