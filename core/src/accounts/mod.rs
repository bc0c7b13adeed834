//! Accounts, as the APIs act on them: a user created or given a profile,
//! suspended or lifted, their tokens revoked. The rules are the domain's
//! (`socialite_domain::accounts`); the standings this process knows are
//! [`crate::standings`].

use crate::budgets::Cost;
use crate::error::Result;
use crate::ids::UserId;
use crate::ingest::Ingest;
use crate::model::{json_object, User};
use serde_json::Value;
use socialite_domain::accounts::access::{check, Act, Caller};
use std::time::{Duration, Instant};

/// How long a put of a user waits for a deletion of the id's earlier user
/// to finish before answering `user_being_deleted`.
const RECREATE_WAIT: Duration = Duration::from_secs(5);

impl Ingest {
    /// Creates the user, or replaces the profile of an existing one. A
    /// write answers with what it wrote: a caller that may not read the
    /// user (a `write`-only key) gets the id and the profile it sent, with
    /// counts of 0, never the stored profile.
    pub async fn put_user(
        &self,
        caller: &Caller,
        id: &str,
        profile: Option<Value>,
    ) -> Result<(User, bool)> {
        let id = UserId::parse(id)?;
        self.acting_as(caller, &id).await?;
        let profile = profile.map(|p| json_object("profile", p)).transpose()?;
        // A profile shows on pages (the epoch), but changes no ranked order.
        let _write = self.enter_changing_for(caller, Cost::Update, vec![id.clone()])?;
        // A deletion of the id's earlier user usually ends within
        // milliseconds: wait for it a little rather than refuse at once.
        let mut wait = Duration::from_millis(5);
        let give_up = Instant::now() + RECREATE_WAIT;
        loop {
            match self.content.put_user(&id, profile.clone()).await {
                Err(e) if e.code() == "user_being_deleted" && Instant::now() < give_up => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(200));
                }
                Ok((user, created)) if check(caller, Act::ReadPublic).is_err() => {
                    let written = User {
                        id: user.id,
                        followers: 0,
                        following: 0,
                        profile,
                    };
                    return Ok((written, created));
                }
                answer => return answer,
            }
        }
    }

    /// Suspends the account (`on`) or lifts its suspension; returns whether
    /// it changed. Suspending refuses the account's tokens issued so far,
    /// hides it and its posts from every reader and keeps its id; lifting
    /// brings the posts back. The id need not exist: a deleted account's
    /// suspension keeps its id from being taken.
    ///
    /// Suspending is an account safety act: it goes on while writes are
    /// stopped for a move ([`crate::gate`]); lifting waits for writes.
    pub async fn suspend(&self, caller: &Caller, id: &str, on: bool) -> Result<bool> {
        let id = UserId::parse(id)?;
        check(caller, Act::Moderate)?;
        let _write = match on {
            true => (self.gate.enter_safety()?, self.epoch.advancing()),
            false => self.enter_changing(caller, Cost::Update)?,
        };
        self.accounts.set_suspended(&id, on).await
    }

    /// Refuses every token of the account issued up to now (one user's
    /// tokens, without rotating the shared secret). An account safety act:
    /// it goes on while writes are stopped for a move ([`crate::gate`]).
    pub async fn revoke_tokens(&self, caller: &Caller, id: &str) -> Result<()> {
        let id = UserId::parse(id)?;
        check(caller, Act::Moderate)?;
        let _write = self.gate.enter_safety()?;
        self.accounts.revoke_tokens(&id).await
    }
}
