//! A user created or given a profile, and an account id's standing set:
//! each one step and the event that records it on the log.

use crate::accounts::lifecycle::Standing;
use crate::checks::user_being_deleted;
use crate::event::Event;
use crate::ids::UserId;
use crate::plan::{Step, Txn};
use serde_json::{Map, Value};

/// Creates `user` (counts at 0) if there is none, and gives them `profile`
/// when it is `Some` (`None` keeps theirs). Refused while an earlier user
/// of the id is being deleted. A put that changes nothing writes nothing.
/// Returns whether the user was created, and the profile they have now.
pub async fn put_user<T: Txn>(
    txn: &mut T,
    user: &UserId,
    profile: Option<Map<String, Value>>,
) -> Result<(bool, Option<Map<String, Value>>), T::Error> {
    let put = store_user(txn, user, profile).await?;
    Ok((put.created, put.profile))
}

/// What a put of a user did.
#[derive(Debug, Clone, PartialEq)]
pub struct Put {
    /// Whether the user was created.
    pub created: bool,
    /// Whether anything changed (a put of the profile held changes nothing).
    pub changed: bool,
    /// The profile they have now.
    pub profile: Option<Map<String, Value>>,
}

/// [`put_user`], telling also whether anything changed.
pub async fn store_user<T: Txn>(
    txn: &mut T,
    user: &UserId,
    profile: Option<Map<String, Value>>,
) -> Result<Put, T::Error> {
    if txn.deleting(user).await?.is_some() {
        return Err(user_being_deleted(user).into());
    }
    let held = txn.profile(user).await?;
    let created = held.is_none();
    let now = match (&profile, held.clone()) {
        (Some(p), _) => Some(p.clone()),
        (None, held) => held.flatten(),
    };
    if held.as_ref() == Some(&now) {
        return Ok(Put {
            created: false,
            changed: false,
            profile: now,
        });
    }
    let put = Step::PutUser {
        user: user.clone(),
        profile,
    };
    let event = Event::UserPut {
        user: user.clone(),
        profile: now.clone(),
    };
    txn.apply(&[put, Step::Emit(event)]).await?;
    Ok(Put {
        created,
        changed: true,
        profile: now,
    })
}

/// Moves the id's standing to what `change` makes of the one it has;
/// returns the standing before.
pub async fn set_standing<T: Txn>(
    txn: &mut T,
    user: &UserId,
    change: impl FnOnce(Standing) -> Standing,
) -> Result<Standing, T::Error> {
    let held = txn.standing(user).await?;
    let next = change(held);
    if next != held {
        let set = Step::SetStanding {
            user: user.clone(),
            standing: next,
        };
        let event = Event::StandingSet {
            user: user.clone(),
            standing: next,
            was_suspended: held.suspended,
        };
        txn.apply(&[set, Step::Emit(event)]).await?;
    }
    Ok(held)
}
