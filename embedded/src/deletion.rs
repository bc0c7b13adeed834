//! A user's deletion on the embedded store: begun and stepped as
//! `socialite_domain::deletion::plan` plans it (its facts and steps are in
//! `txn`). Its mark is a `DELETING` row (with the user's lists at the
//! start), which every existence check reads as absent and which
//! `pending_deletions` finds after a crash.

use crate::store::EmbeddedStore;
use crate::tables::*;
use redb::ReadableTable;
use socialite_core::error::Result;
use socialite_core::ids::UserId;

impl EmbeddedStore {
    pub(crate) fn pending_deletion_list(&self) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let table = txn.open_table(DELETING).store()?;
            let mut out = Vec::new();
            for item in table.iter().store()? {
                let (k, _) = item.store()?;
                out.push(UserId::from_stored(k.value().to_owned()));
            }
            Ok(out)
        })
    }
}
