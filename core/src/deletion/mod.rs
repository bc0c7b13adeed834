//! Deleting a user: the API's act (its tokens revoked first, then the
//! deletion begun and run in steps, `socialite_domain::deletion`), and
//! finishing the deletions a crash cut short ([`resume`]).

mod resume;

pub use resume::run_deletions;

use crate::budgets::Cost;
use crate::checks::user_not_found;
use crate::error::Result;
use crate::ids::UserId;
use crate::ingest::Ingest;
use socialite_domain::accounts::access::{check, Act, Caller};

impl Ingest {
    /// Deletes the account. Its tokens are revoked first, so that none
    /// issued before the deletion acts for a later account under the id.
    pub async fn delete_user(&self, caller: &Caller, id: &str) -> Result<()> {
        let id = UserId::parse(id)?;
        check(caller, Act::Moderate)?;
        if self.content.get_user(&id).await?.is_none() {
            return Err(user_not_found(&id));
        }
        let _write = self.enter_changing(caller, Cost::Delete)?;
        self.accounts.revoke_tokens(&id).await?;
        if self.content.delete_user(&id).await? {
            Ok(())
        } else {
            Err(user_not_found(&id))
        }
    }
}
