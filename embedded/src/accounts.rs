//! Account standings in `content.redb`: one `ACCOUNTS` row per id ever
//! revoked, deleted or suspended, kept when the account is deleted (a
//! deletion revokes its tokens, and that must outlive it).

use crate::store::EmbeddedStore;
use crate::tables::{StoreResult, ACCOUNTS};
use async_trait::async_trait;
use redb::{ReadableTable, Table};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::ports::{Accounts, Standing};

pub(crate) fn load(
    table: &impl ReadableTable<&'static str, (u64, bool)>,
    id: &str,
) -> Result<Standing> {
    Ok(match table.get(id).store()? {
        Some(row) => {
            let (tokens_after_ms, suspended) = row.value();
            Standing {
                tokens_after_ms,
                suspended,
            }
        }
        None => Standing::default(),
    })
}

pub(crate) fn save(
    table: &mut Table<&'static str, (u64, bool)>,
    id: &str,
    s: Standing,
) -> Result<()> {
    table.insert(id, (s.tokens_after_ms, s.suspended)).store()?;
    Ok(())
}

#[async_trait]
impl Accounts for EmbeddedStore {
    async fn standing(&self, id: &UserId) -> Result<Standing> {
        self.read(|txn| load(&txn.open_table(ACCOUNTS).store()?, id.as_str()))
    }

    async fn suspended(&self) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let table = txn.open_table(ACCOUNTS).store()?;
            let mut out = Vec::new();
            for row in table.iter().store()? {
                let (k, v) = row.store()?;
                if v.value().1 {
                    out.push(UserId::from_stored(k.value().to_owned()));
                }
            }
            Ok(out)
        })
    }
}
