//! The accounts port: what stands of an account id beyond its profile, and
//! outlives the account: when its user tokens stop counting, and whether it
//! is suspended. Both backends keep one small record per id that was ever
//! revoked, deleted or suspended; ids never touched have the default.

use super::metered::{port, Metered};
use super::transact::Transact;
use crate::error::Result;
use crate::ids::UserId;
use crate::write::Write;
use socialite_domain::accounts::lifecycle::Standing;

port! {
    pub trait Accounts: Transact as "accounts" for Metered<dyn Accounts> {
        /// The id's standing: the default for an id never revoked, deleted or
        /// suspended.
        async fn standing(&self, id: &UserId) -> Result<Standing>;
        /// Every suspended id, in id order (a moderation list: small).
        async fn suspended(&self) -> Result<Vec<UserId>>;
        /// Refuses the id's tokens issued at or before `at_ms` (the time only
        /// moves forward).
        write async fn revoke_tokens(&self, id: &UserId, at_ms: u64) -> Result<()> {
            let write = Write::RevokeTokens {
                user: id.clone(),
                at_ms,
            };
            self.transact(write).await.map(drop)
        }
        /// Suspends (`on`, revoking tokens issued up to `at_ms` too) or lifts a
        /// suspension. Returns whether the suspension changed.
        write async fn set_suspended(&self, id: &UserId, on: bool, at_ms: u64) -> Result<bool> {
            let write = Write::Suspension {
                user: id.clone(),
                on,
                at_ms,
            };
            self.transact(write).await?.changed()
        }
    }
}
