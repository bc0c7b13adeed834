//! An account's lifecycle, as far as acting goes: created, suspended (cannot
//! act, hidden, id kept, blocks kept), lifted, deleted. A user token belongs
//! to the accounts under its id that stood when it was issued: a
//! revocation, a deletion and a suspension each refuse every token issued
//! up to that moment, so a token minted before a deletion never acts for a
//! later account under the same id.

use crate::error::{Error, ErrorKind, Result};
use crate::ids::UserId;

pub use crate::model::standing::Standing;

/// Whether a user token issued at `issued_at_secs` (its `iat`) still acts
/// for the account: 401 `token_revoked` if it was issued at or before the
/// account's tokens were last revoked (a token's time has whole seconds, so
/// one issued in the same second as the revocation is refused too), 403
/// `account_suspended` while the account is suspended.
pub fn admit_token(user: &UserId, standing: &Standing, issued_at_secs: u64) -> Result<()> {
    if issued_at_secs.saturating_mul(1000) <= standing.tokens_after_ms {
        return Err(Error::new(
            ErrorKind::Unauthenticated,
            "token_revoked",
            format!(
                "this token for {user} was issued before its tokens were revoked or its account \
                 was deleted or suspended; get a new one"
            ),
        ));
    }
    may_act(user, standing)
}

/// Refuses anything done as a suspended account (`account_suspended`),
/// taking its id included.
pub fn may_act(user: &UserId, standing: &Standing) -> Result<()> {
    if standing.suspended {
        return Err(suspended(user));
    }
    Ok(())
}

pub fn suspended(user: &UserId) -> Error {
    Error::new(
        ErrorKind::Forbidden,
        "account_suspended",
        format!("the account {user} is suspended"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<()>) -> &'static str {
        r.err().map_or("ok", |e| e.code())
    }

    #[test]
    fn a_token_acts_only_if_issued_after_the_last_revocation() {
        let u = UserId::parse("victim").unwrap();
        let fresh = Standing::default();
        assert_eq!(code(admit_token(&u, &fresh, 1)), "ok");
        // Deleted (or revoked) at 12.5 s: a token of 12 s is refused, even
        // if minted in that second after the revocation; one of 13 s acts.
        let revoked = Standing {
            tokens_after_ms: 12_500,
            suspended: false,
        };
        assert_eq!(code(admit_token(&u, &revoked, 12)), "token_revoked");
        assert_eq!(code(admit_token(&u, &revoked, 13)), "ok");
        let at_second = Standing {
            tokens_after_ms: 13_000,
            suspended: false,
        };
        assert_eq!(code(admit_token(&u, &at_second, 13)), "token_revoked");
        let banned = Standing {
            tokens_after_ms: 12_500,
            suspended: true,
        };
        assert_eq!(code(admit_token(&u, &banned, 12)), "token_revoked");
        assert_eq!(code(admit_token(&u, &banned, 99)), "account_suspended");
        assert_eq!(code(may_act(&u, &banned)), "account_suspended");
        assert_eq!(code(may_act(&u, &revoked)), "ok");
    }
}
