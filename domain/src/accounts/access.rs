//! Who may do what: the one table of permissions, checked by the use cases
//! (`socialite_core::ingest`, `socialite_core::reads`) for REST and gRPC alike. The API crate
//! only establishes who is calling (it verifies keys and tokens); what that
//! caller may do is decided here.
//!
//! - A server API key acts for any user within its scopes: `write` (create
//!   users and change profiles, follow, unfollow, post, delete posts), `read`
//!   (read anything), `admin` (delete users, operators' endpoints),
//!   `firehose` (follow the network's public acts: `crate::firehose`).
//! - A user token acts only as its subject: it may change its own profile,
//!   follow and unfollow from its own account, post and delete its own posts,
//!   and read its own timelines; public data (users, posts, follower lists)
//!   where the deployment allows it. Never delete an account, never
//!   operators' endpoints.
//! - Without a credential nothing but health, readiness and the contract.

use crate::error::{Error, ErrorKind, Result};
use crate::ids::UserId;
use std::sync::Arc;

/// What a server API key may do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scopes {
    pub write: bool,
    pub read: bool,
    pub admin: bool,
    pub firehose: bool,
}

impl Scopes {
    pub const ALL: Scopes = Scopes {
        write: true,
        read: true,
        admin: true,
        firehose: true,
    };

    /// Parses `write,read,admin,firehose` (any order, `+` also separates; at
    /// least one).
    pub fn parse(s: &str) -> Result<Scopes> {
        let mut scopes = Scopes::default();
        for name in s.split([',', '+']).map(str::trim) {
            match name {
                "write" => scopes.write = true,
                "read" => scopes.read = true,
                "admin" => scopes.admin = true,
                "firehose" => scopes.firehose = true,
                other => {
                    return Err(Error::invalid(
                        "invalid_scope",
                        format!(
                            "unknown scope {other:?}; scopes are write, read, admin and firehose"
                        ),
                    ))
                }
            }
        }
        Ok(scopes)
    }

    fn has(self, scope: Scope) -> bool {
        match scope {
            Scope::Write => self.write,
            Scope::Read => self.read,
            Scope::Admin => self.admin,
            Scope::Firehose => self.firehose,
        }
    }
}

impl std::fmt::Display for Scopes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = [
            (self.write, "write"),
            (self.read, "read"),
            (self.admin, "admin"),
            (self.firehose, "firehose"),
        ];
        let set: Vec<&str> = names
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect();
        f.write_str(&set.join(","))
    }
}

#[derive(Debug, Clone, Copy)]
enum Scope {
    Write,
    Read,
    Admin,
    Firehose,
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Write => "write",
            Scope::Read => "read",
            Scope::Admin => "admin",
            Scope::Firehose => "firehose",
        }
    }
}

/// Who is calling, as the API established it from the request's credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Checks are off (`--auth none`), or the caller is in-process (the
    /// benchmark, tests of the use cases).
    Trusted,
    /// No credential was presented.
    Anonymous,
    /// A server API key, by name, with its scopes.
    Server { key: Arc<str>, scopes: Scopes },
    /// A user token: acts only as `user`. `public_reads` is the deployment's
    /// setting: whether it may read other users' public data.
    User { user: UserId, public_reads: bool },
}

/// What a call does, as far as permissions go.
#[derive(Debug, Clone, Copy)]
pub enum Act<'a> {
    /// Create the user or change their profile, follow or unfollow from
    /// their account, post as them.
    ActAs(&'a UserId),
    /// Delete a post whose author is this user.
    DeletePostOf(&'a UserId),
    /// Moderate accounts: delete one and everything it posted, suspend or
    /// lift, revoke its tokens.
    Moderate,
    /// Read this user's own timelines (home, lists, mentions).
    ReadOwn(&'a UserId),
    /// Read public data: users, counts, posts, follower and following lists.
    ReadPublic,
    /// The operators' endpoints (metrics, status page).
    Operate,
    /// Follow the firehose: every public act of the network.
    Firehose,
    /// Register, change and replay webhook endpoints, read their delivery
    /// logs.
    ManageWebhooks,
}

impl Act<'_> {
    /// The scope a server key needs for it.
    fn scope(self) -> Scope {
        match self {
            Act::ActAs(_) | Act::DeletePostOf(_) => Scope::Write,
            Act::ReadOwn(_) | Act::ReadPublic => Scope::Read,
            Act::Moderate | Act::Operate | Act::ManageWebhooks => Scope::Admin,
            Act::Firehose => Scope::Firehose,
        }
    }
}

/// Whether `caller` may do `act`: `Ok`, or 401 `unauthenticated` without a
/// credential, or 403 with a code naming why.
pub fn check(caller: &Caller, act: Act<'_>) -> Result<()> {
    match caller {
        Caller::Trusted => Ok(()),
        Caller::Anonymous => Err(unauthenticated()),
        Caller::Server { key, scopes } => {
            let scope = act.scope();
            if scopes.has(scope) || (scopes.admin && matches!(act, Act::DeletePostOf(_))) {
                Ok(())
            } else {
                Err(forbidden(
                    "missing_scope",
                    format!("API key {key} lacks the `{}` scope", scope.name()),
                ))
            }
        }
        Caller::User { user, public_reads } => match act {
            Act::ActAs(u) | Act::ReadOwn(u) if u == user => Ok(()),
            Act::ActAs(u) | Act::ReadOwn(u) => Err(forbidden(
                "not_your_account",
                format!("a token for {user} cannot act as or read the timelines of {u}"),
            )),
            Act::DeletePostOf(author) if author == user => Ok(()),
            Act::DeletePostOf(_) => Err(forbidden(
                "not_your_post",
                format!("a token for {user} can delete only {user}'s posts"),
            )),
            Act::ReadPublic if *public_reads => Ok(()),
            Act::ReadPublic => Err(forbidden(
                "public_reads_off",
                "user tokens read only their own timelines on this deployment",
            )),
            Act::Moderate | Act::Operate | Act::ManageWebhooks => Err(forbidden(
                "server_key_required",
                "this needs a server API key with the `admin` scope",
            )),
            Act::Firehose => Err(forbidden(
                "server_key_required",
                "the firehose needs a server API key with the `firehose` scope",
            )),
        },
    }
}

/// Whose mutes and blocks apply to a timeline several users share (a
/// group's): a user token views as its user, and naming another is refused
/// as reading their timelines is; other callers view as the user they name,
/// or as nobody (the whole timeline).
pub fn viewing_as(caller: &Caller, viewer: Option<UserId>) -> Result<Option<UserId>> {
    let viewer = match (caller, viewer) {
        (Caller::User { user, .. }, None) => Some(user.clone()),
        (_, named) => named,
    };
    if let Some(v) = &viewer {
        check(caller, Act::ReadOwn(v))?;
    }
    Ok(viewer)
}

/// Refuses an anonymous caller before anything is looked up, for checks
/// that need stored data (a post's author): without a credential the answer
/// is 401 whether or not the data exists.
pub fn authenticated(caller: &Caller) -> Result<()> {
    match caller {
        Caller::Anonymous => Err(unauthenticated()),
        _ => Ok(()),
    }
}

pub fn unauthenticated() -> Error {
    Error::new(
        ErrorKind::Unauthenticated,
        "unauthenticated",
        "this needs a credential: `Authorization: Bearer` with an API key or a user token",
    )
}

fn forbidden(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Forbidden, code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str) -> UserId {
        UserId::parse(id).unwrap()
    }

    fn key(scopes: &str) -> Caller {
        Caller::Server {
            key: "k".into(),
            scopes: Scopes::parse(scopes).unwrap(),
        }
    }

    fn token(id: &str, public_reads: bool) -> Caller {
        Caller::User {
            user: user(id),
            public_reads,
        }
    }

    fn code(r: Result<()>) -> &'static str {
        r.err().map_or("ok", |e| e.code())
    }

    #[test]
    fn the_table() {
        let (alice, bob) = (user("alice"), user("bob"));
        let acts = [
            Act::ActAs(&alice),
            Act::DeletePostOf(&alice),
            Act::Moderate,
            Act::ReadOwn(&alice),
            Act::ReadPublic,
            Act::Operate,
            Act::Firehose,
            Act::ManageWebhooks,
        ];
        // Expected outcome per act, in the order above.
        let table: [(Caller, [&str; 8]); 9] = [
            (Caller::Trusted, ["ok"; 8]),
            (Caller::Anonymous, ["unauthenticated"; 8]),
            (
                key("write"),
                [
                    "ok",
                    "ok",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                ],
            ),
            (
                key("read"),
                [
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "ok",
                    "ok",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                ],
            ),
            (
                key("admin"),
                [
                    "missing_scope",
                    "ok",
                    "ok",
                    "missing_scope",
                    "missing_scope",
                    "ok",
                    "missing_scope",
                    "ok",
                ],
            ),
            (
                key("firehose"),
                [
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "missing_scope",
                    "ok",
                    "missing_scope",
                ],
            ),
            (
                token("alice", true),
                [
                    "ok",
                    "ok",
                    "server_key_required",
                    "ok",
                    "ok",
                    "server_key_required",
                    "server_key_required",
                    "server_key_required",
                ],
            ),
            (
                token("bob", true),
                [
                    "not_your_account",
                    "not_your_post",
                    "server_key_required",
                    "not_your_account",
                    "ok",
                    "server_key_required",
                    "server_key_required",
                    "server_key_required",
                ],
            ),
            (
                token("alice", false),
                [
                    "ok",
                    "ok",
                    "server_key_required",
                    "ok",
                    "public_reads_off",
                    "server_key_required",
                    "server_key_required",
                    "server_key_required",
                ],
            ),
        ];
        for (caller, expected) in &table {
            for (act, want) in acts.iter().zip(expected) {
                assert_eq!(code(check(caller, *act)), *want, "{caller:?} {act:?}");
            }
        }
        assert_eq!(code(check(&token("bob", true), Act::ActAs(&bob))), "ok");
        assert_eq!(code(authenticated(&Caller::Anonymous)), "unauthenticated");
        assert_eq!(code(authenticated(&key("read"))), "ok");
    }

    #[test]
    fn scopes_parse_and_print() {
        assert_eq!(
            Scopes::parse("admin+read").unwrap().to_string(),
            "read,admin"
        );
        assert_eq!(
            Scopes::parse("write,read,admin,firehose").unwrap(),
            Scopes::ALL
        );
        assert_eq!(Scopes::parse("root").unwrap_err().code(), "invalid_scope");
        assert_eq!(Scopes::parse("").unwrap_err().code(), "invalid_scope");
    }
}
