//! User tokens: JWTs signed with HS256 and a shared secret, whose subject
//! (`sub`) is the user they act as, with an expiry (`exp`, required). The
//! product's backend mints them with the secret; Socialite verifies them
//! against every configured secret, so a new one can be added before the
//! old one is removed.

use chrono::{DateTime, TimeDelta, Utc};
use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt, Claims, Header, UntrustedToken, ValidationError};
use serde::{Deserialize, Serialize};
use socialite_core::ids::UserId;
use socialite_core::{Error, ErrorKind, Result};
use std::time::Duration;

/// Shortest secret accepted: HS256 wants at least its 256 bits.
pub const MIN_SECRET_BYTES: usize = 32;
/// Longest lifetime a minted token may have.
pub const MAX_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// Clock difference tolerated between the minting backend and Socialite.
const LEEWAY_SECS: i64 = 30;

#[derive(Serialize, Deserialize)]
struct Subject {
    sub: String,
}

fn now() -> DateTime<Utc> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

fn time_options() -> jwt_compact::TimeOptions<fn() -> DateTime<Utc>> {
    jwt_compact::TimeOptions::new(TimeDelta::seconds(LEEWAY_SECS), now)
}

/// Parses secrets: one per line, each at least [`MIN_SECRET_BYTES`] long;
/// the first signs what this process mints.
pub fn parse_secrets(text: &str) -> std::result::Result<Vec<Vec<u8>>, String> {
    let secrets: Vec<Vec<u8>> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.as_bytes().to_vec())
        .collect();
    if let Some(short) = secrets.iter().position(|s| s.len() < MIN_SECRET_BYTES) {
        return Err(format!(
            "token secret {} is shorter than {MIN_SECRET_BYTES} bytes",
            short + 1
        ));
    }
    Ok(secrets)
}

/// A new random secret (64 hex digits).
pub fn new_secret() -> std::result::Result<String, String> {
    Ok(super::keys::hex(&super::keys::random_bytes::<32>()?))
}

/// A token for `user`, valid for `ttl` (at most [`MAX_TTL`]).
pub fn mint(secret: &[u8], user: &str, ttl: Duration) -> Result<String> {
    let user = UserId::parse(user)?;
    if ttl.is_zero() || ttl > MAX_TTL {
        return Err(Error::invalid(
            "invalid_ttl",
            format!("a token lives 1 s to {} days", MAX_TTL.as_secs() / 86_400),
        ));
    }
    let ttl = TimeDelta::seconds(ttl.as_secs() as i64);
    let claims = Claims::new(Subject {
        sub: user.to_string(),
    })
    .set_duration_and_issuance(&time_options(), ttl);
    Hs256
        .token(
            &Header::empty().with_token_type("JWT"),
            &claims,
            &Hs256Key::new(secret),
        )
        .map_err(|e| Error::internal(format!("cannot sign a token: {e}")))
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Unauthenticated, "invalid_token", message)
}

/// What a verified token says: the user it acts as, when it was issued and
/// when it expires (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub user: UserId,
    pub issued_at: u64,
    pub expires_at: u64,
}

/// The user a token acts as, if one of `secrets` signed it, it says when it
/// was issued (`iat`, which binds it to the accounts under its id then: see
/// `socialite_domain::accounts::lifecycle`), it lives at most [`MAX_TTL`], it has
/// not expired and it is not used before its `nbf`.
pub fn verify(secrets: &[Vec<u8>], token: &str) -> Result<Verified> {
    let untrusted =
        UntrustedToken::new(token).map_err(|e| invalid(format!("the token is malformed: {e}")))?;
    let mut outcome = Err(invalid("no configured secret signed this token"));
    for secret in secrets {
        match Hs256
            .validator::<Subject>(&Hs256Key::new(secret))
            .validate(&untrusted)
        {
            Ok(t) => {
                outcome = Ok(t);
                break;
            }
            Err(ValidationError::InvalidSignature) => continue,
            Err(e) => {
                outcome = Err(invalid(format!("the token is not valid: {e}")));
                break;
            }
        }
    }
    let token = outcome?;
    let claims = token.claims();
    let options = time_options();
    claims.validate_expiration(&options).map_err(|e| match e {
        ValidationError::Expired => Error::new(
            ErrorKind::Unauthenticated,
            "expired_token",
            "the token has expired; get a new one",
        ),
        e => invalid(format!("the token is not valid: {e}")),
    })?;
    if claims.not_before.is_some() {
        claims.validate_maturity(&options).map_err(|_| {
            Error::new(
                ErrorKind::Unauthenticated,
                "token_not_yet_valid",
                "the token is not valid yet (its `nbf` is in the future)",
            )
        })?;
    }
    let (issued, expires) = match (claims.issued_at, claims.expiration) {
        (Some(i), Some(e)) => (i.timestamp(), e.timestamp()),
        _ => return Err(invalid("the token must say when it was issued (`iat`)")),
    };
    let leeway = LEEWAY_SECS;
    if issued > now().timestamp() + leeway {
        return Err(invalid("the token's `iat` is in the future"));
    }
    if expires - issued > MAX_TTL.as_secs() as i64 + leeway {
        return Err(invalid(format!(
            "the token lives longer than {} days (`exp` - `iat`)",
            MAX_TTL.as_secs() / 86_400
        )));
    }
    let user = UserId::parse(&claims.custom.sub)
        .map_err(|_| invalid("the token's subject is not a user id"))?;
    Ok(Verified {
        user,
        issued_at: issued.max(0) as u64,
        expires_at: expires.max(0) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_acts_as_its_subject_until_it_expires() {
        let (old, new) = (new_secret().unwrap(), new_secret().unwrap());
        let secrets = parse_secrets(&format!("{new}\n# rotated out soon\n{old}\n")).unwrap();
        let t = mint(old.as_bytes(), "alice", Duration::from_secs(60)).unwrap();
        assert_eq!(verify(&secrets, &t).unwrap().user.as_str(), "alice");
        let t = mint(new.as_bytes(), "bob", Duration::from_secs(60)).unwrap();
        let verified = verify(&secrets, &t).unwrap();
        assert_eq!(verified.user.as_str(), "bob");
        assert_eq!(verified.expires_at - verified.issued_at, 60);
        // Signed with a secret no longer configured.
        assert_eq!(
            verify(
                &secrets[..1],
                &mint(old.as_bytes(), "a", Duration::from_secs(9)).unwrap()
            )
            .unwrap_err()
            .code(),
            "invalid_token"
        );
        // Tampered with: the subject changed, the signature kept.
        let parts: Vec<&str> = t.split('.').collect();
        let forged_claims = base64_url(br#"{"sub":"carol","exp":9999999999}"#);
        let forged = format!("{}.{}.{}", parts[0], forged_claims, parts[2]);
        assert_eq!(
            verify(&secrets, &forged).unwrap_err().code(),
            "invalid_token"
        );
        assert_eq!(
            verify(&secrets, "not.a.token").unwrap_err().code(),
            "invalid_token"
        );
    }

    #[test]
    fn expiry_and_limits() {
        let s = new_secret().unwrap();
        let secrets = parse_secrets(&s).unwrap();
        let claims = Claims::new(Subject {
            sub: "alice".into(),
        });
        let mut claims = claims.set_duration_and_issuance(&time_options(), TimeDelta::seconds(1));
        claims.expiration = Some(now() - TimeDelta::seconds(LEEWAY_SECS + 5));
        let expired = Hs256
            .token(&Header::empty(), &claims, &Hs256Key::new(s.as_bytes()))
            .unwrap();
        assert_eq!(
            verify(&secrets, &expired).unwrap_err().code(),
            "expired_token"
        );
        let no_expiry = Hs256
            .token(
                &Header::empty(),
                &Claims::new(Subject {
                    sub: "alice".into(),
                }),
                &Hs256Key::new(s.as_bytes()),
            )
            .unwrap();
        assert_eq!(
            verify(&secrets, &no_expiry).unwrap_err().code(),
            "invalid_token"
        );
        assert_eq!(
            mint(s.as_bytes(), "alice", MAX_TTL * 2).unwrap_err().code(),
            "invalid_ttl"
        );
        assert_eq!(
            mint(s.as_bytes(), "a/b", MAX_TTL).unwrap_err().code(),
            "invalid_user_id"
        );
        assert!(parse_secrets("short").unwrap_err().contains("shorter"));
    }

    /// Signs `claims` with `secret`, as any backend's JWT library would.
    fn signed(secret: &str, claims: serde_json::Value) -> String {
        let header = base64_url(br#"{"alg":"HS256","typ":"JWT"}"#);
        let body = base64_url(claims.to_string().as_bytes());
        let input = format!("{header}.{body}");
        let key = Hs256Key::new(secret.as_bytes());
        let sig = jwt_compact::Algorithm::sign(&Hs256, &key, input.as_bytes());
        let sig = jwt_compact::AlgorithmSignature::as_bytes(&sig);
        format!("{input}.{}", base64_url(&sig))
    }

    #[test]
    fn lifetime_issue_time_and_not_before_are_enforced() {
        let s = new_secret().unwrap();
        let secrets = parse_secrets(&s).unwrap();
        let now = now().timestamp();
        let code = |claims| verify(&secrets, &signed(&s, claims)).map(|v| v.issued_at);
        assert_eq!(
            code(serde_json::json!({"sub": "a", "iat": now, "exp": now + 60})).unwrap(),
            now as u64
        );
        let century = now + 100 * 365 * 86_400;
        for (claims, want) in [
            (
                serde_json::json!({"sub": "a", "exp": now + 60}),
                "invalid_token",
            ),
            (
                serde_json::json!({"sub": "a", "iat": now, "exp": century}),
                "invalid_token",
            ),
            (
                serde_json::json!({"sub": "a", "iat": now + 3600, "exp": now + 7200}),
                "invalid_token",
            ),
            (
                serde_json::json!({"sub": "a", "iat": now, "nbf": now + 600, "exp": now + 900}),
                "token_not_yet_valid",
            ),
        ] {
            assert_eq!(code(claims.clone()).unwrap_err().code(), want, "{claims}");
        }
        assert!(
            code(serde_json::json!({"sub": "a", "iat": now, "nbf": now, "exp": now + 9})).is_ok()
        );
    }

    fn base64_url(bytes: &[u8]) -> String {
        use base64ct::{Base64UrlUnpadded, Encoding};
        Base64UrlUnpadded::encode_string(bytes)
    }
}
