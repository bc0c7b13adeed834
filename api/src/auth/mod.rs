//! Who is calling: the request's credential verified and turned into a
//! [`Caller`] that the use cases check (`socialite_domain::accounts::access`).
//!
//! A credential comes as `Authorization: Bearer CREDENTIAL` (REST), the same
//! `authorization` metadata (gRPC), or as the password of HTTP Basic (so a
//! browser can open the status page). It is a server API key ([`keys`]) or
//! a user token ([`tokens`]). No credential makes the caller anonymous; a
//! credential that does not verify is refused here with 401, and a caller
//! over its rate ([`rate`]) with 429.
//!
//! Keys and secrets come from files, reread when they change (so keys are
//! rotated without a restart), and from fixed text (an environment variable).

pub mod fields;
pub mod keys;
pub mod rate;
pub mod tokens;

use crate::error::to_status;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64ct::{Base64, Encoding};
use keys::{find_key, parse_keys, StoredKey};
use rate::{RateLimiter, Rates};
use socialite_core::budgets::{BudgetConfig, Budgets, Window};
use socialite_core::standings::Standings;
use socialite_core::{Error, ErrorKind};
use socialite_domain::accounts::access::Caller;
use socialite_domain::accounts::lifecycle::admit_token;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

/// Where keys or secrets come from: a file (watched) and fixed text.
#[derive(Clone, Default)]
pub struct Source {
    pub file: Option<PathBuf>,
    pub text: Option<String>,
}

impl std::fmt::Debug for Source {
    /// Secrets given as text are never printed, not even in a debug dump.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("file", &self.file)
            .field("text", &self.text.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// How requests are authenticated.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// `false` runs without checks (`--auth none`): every caller is trusted.
    pub checks: bool,
    /// Server API keys, as `NAME SCOPES SHA256` entries.
    pub api_keys: Source,
    /// Secrets that user tokens are signed with, one per line.
    pub token_secrets: Source,
    /// Whether user tokens may read other users' public data.
    pub public_reads: bool,
    pub rates: Rates,
    /// What each credential may write an hour and a day, in points.
    pub budgets: BudgetConfig,
}

impl AuthConfig {
    /// No checks: every caller is trusted.
    pub fn none() -> AuthConfig {
        AuthConfig {
            checks: false,
            api_keys: Source::default(),
            token_secrets: Source::default(),
            public_reads: true,
            rates: Rates::default(),
            budgets: BudgetConfig::default(),
        }
    }
}

/// What credentials verify against, as last loaded.
#[derive(Default)]
struct Credentials {
    keys: Vec<StoredKey>,
    secrets: Vec<Vec<u8>>,
}

/// Verifies credentials and meters callers; shared by REST and gRPC.
pub struct Authenticator {
    config: AuthConfig,
    credentials: RwLock<Arc<Credentials>>,
    /// What the files looked like when last read.
    seen: std::sync::Mutex<[Option<Stamp>; 2]>,
    limiter: RateLimiter,
    /// Account standings, for user tokens: a token issued before its
    /// account's tokens were revoked (or the account deleted or suspended)
    /// is refused. Absent only in a process with no stores.
    accounts: Option<Arc<Standings>>,
    /// The write budgets the use cases spend, for the `RateLimit` fields.
    budgets: Option<Arc<Budgets>>,
}

/// A verified credential: who calls, and until when it holds (a token's
/// expiry, Unix seconds).
#[derive(Debug, Clone)]
pub struct Identity {
    pub caller: Caller,
    pub expires_at: Option<u64>,
}

/// The text of a source: its fixed text, then its file.
pub fn read_source(source: &Source, what: &str) -> Result<String, String> {
    let mut text = source.text.clone().unwrap_or_default();
    if let Some(path) = &source.file {
        let file = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {what} from {}: {e}", path.display()))?;
        text.push('\n');
        text.push_str(&file);
    }
    Ok(text)
}

/// A file's modification time and length: a change to either means the
/// file is read again (a copy that keeps the time rarely keeps the length).
type Stamp = (SystemTime, u64);

fn modified(source: &Source) -> Option<Stamp> {
    let path = source.file.as_ref()?;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl Authenticator {
    /// Loads the keys and secrets; with checks on, at least one of them must
    /// exist, or no one could call.
    pub fn new(config: AuthConfig) -> Result<Authenticator, String> {
        let auth = Authenticator {
            limiter: RateLimiter::new(config.rates),
            accounts: None,
            budgets: None,
            credentials: RwLock::default(),
            seen: std::sync::Mutex::new([
                modified(&config.api_keys),
                modified(&config.token_secrets),
            ]),
            config,
        };
        if auth.config.checks {
            let loaded = auth.load()?;
            if loaded.keys.is_empty() && loaded.secrets.is_empty() {
                return Err(
                    "authentication is on but no API keys or token secrets are configured \
                    (set --api-keys-file or SOCIALITE_API_KEYS, and --token-secrets-file or \
                    SOCIALITE_TOKEN_SECRETS; or run with --auth none)"
                        .into(),
                );
            }
            tracing::info!(
                keys = loaded.keys.len(),
                token_secrets = loaded.secrets.len(),
                "authentication is on"
            );
            *auth.credentials.write().expect("not poisoned") = Arc::new(loaded);
            socialite_core::metrics::metrics().auth_checks.set(1);
        } else {
            socialite_core::metrics::metrics().auth_checks.set(0);
            tracing::warn!("authentication is OFF (--auth none): any client may act as any user");
        }
        Ok(auth)
    }

    /// User tokens are checked against account standings.
    pub fn with_accounts(mut self, accounts: Arc<Standings>) -> Authenticator {
        self.accounts = Some(accounts);
        self
    }

    /// Responses report what is left of these budgets.
    pub fn with_budgets(mut self, budgets: Arc<Budgets>) -> Authenticator {
        self.budgets = Some(budgets);
        self
    }

    /// The `RateLimit-Policy` and `RateLimit` fields for the caller, if it
    /// is metered at all ([`fields`]).
    pub fn limit_fields(&self, caller: &Caller) -> Option<[(HeaderName, HeaderValue); 2]> {
        let mut windows: Vec<Window> = self.limiter.window(caller).into_iter().collect();
        if let Some(budgets) = &self.budgets {
            windows.extend(budgets.windows_of(caller));
        }
        fields::limit_fields(&windows)
    }

    /// Whether requests are checked at all.
    pub fn checks(&self) -> bool {
        self.config.checks
    }

    /// Reads the keys and secrets. A malformed key line is skipped, named
    /// in the log and counted (`socialite_credential_lines_skipped`): the
    /// other lines are in force, and a removed line's key is not.
    fn load(&self) -> Result<Credentials, String> {
        let (keys, skipped) = parse_keys(&read_source(&self.config.api_keys, "API keys")?);
        for line in &skipped {
            tracing::error!(problem = %line, "API keys: a malformed entry is skipped");
        }
        socialite_core::metrics::metrics()
            .credential_lines_skipped
            .set(skipped.len() as i64);
        let secrets =
            tokens::parse_secrets(&read_source(&self.config.token_secrets, "token secrets")?)
                .map_err(|e| format!("token secrets: {e}"))?;
        Ok(Credentials { keys, secrets })
    }

    /// Rereads the files if either changed. A file that cannot be read, or
    /// secrets that no longer parse, leave the credentials as they were,
    /// with an error in the log; malformed key lines are skipped.
    pub fn reload_if_changed(&self) {
        let now = [
            modified(&self.config.api_keys),
            modified(&self.config.token_secrets),
        ];
        {
            let mut seen = self.seen.lock().expect("not poisoned");
            if *seen == now {
                return;
            }
            *seen = now;
        }
        match self.load() {
            Ok(loaded) => {
                tracing::info!(
                    keys = loaded.keys.len(),
                    token_secrets = loaded.secrets.len(),
                    "credentials reloaded"
                );
                *self.credentials.write().expect("not poisoned") = Arc::new(loaded);
            }
            Err(e) => {
                tracing::error!(error = %e, "credentials not reloaded; the previous ones stay")
            }
        }
    }

    /// Rereads changed files every `period` until `shutdown`.
    pub async fn watch(
        self: Arc<Self>,
        period: Duration,
        mut shutdown: socialite_core::shutdown::Shutdown,
    ) {
        if !self.config.checks {
            return;
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep(period) => self.reload_if_changed(),
                _ = shutdown.wait() => return,
            }
        }
    }

    /// The caller a request's headers name, with the credential it
    /// presented (for checks again later, by live streams).
    pub async fn caller(&self, headers: &HeaderMap) -> Result<(Identity, Option<String>), Error> {
        if !self.config.checks {
            let trusted = Identity {
                caller: Caller::Trusted,
                expires_at: None,
            };
            return Ok((trusted, None));
        }
        let Some(presented) = credential(headers)? else {
            let anonymous = Identity {
                caller: Caller::Anonymous,
                expires_at: None,
            };
            return Ok((anonymous, None));
        };
        let identity = self.identify(&presented).await?;
        Ok((identity, Some(presented)))
    }

    /// Who a presented credential is: a key that is configured now, or a
    /// token that verifies and whose account still stands.
    pub async fn identify(&self, presented: &str) -> Result<Identity, Error> {
        let credentials = self.credentials.read().expect("not poisoned").clone();
        if presented.starts_with(keys::KEY_PREFIX) {
            let key = find_key(&credentials.keys, presented).ok_or_else(|| {
                Error::new(
                    ErrorKind::Unauthenticated,
                    "invalid_api_key",
                    "no such API key",
                )
            })?;
            let caller = Caller::Server {
                key: key.name.clone(),
                scopes: key.scopes,
            };
            return Ok(Identity {
                caller,
                expires_at: None,
            });
        }
        let token = tokens::verify(&credentials.secrets, presented)?;
        if let Some(accounts) = &self.accounts {
            let standing = accounts.of(&token.user).await?;
            admit_token(&token.user, &standing, token.issued_at)?;
        }
        let caller = Caller::User {
            user: token.user,
            public_reads: self.config.public_reads,
        };
        Ok(Identity {
            caller,
            expires_at: Some(token.expires_at),
        })
    }

    /// The caller, admitted by its rate limit.
    async fn admit(self: &Arc<Self>, headers: &HeaderMap) -> Result<Grant, Error> {
        let (identity, presented) = self.caller(headers).await?;
        Ok(Grant {
            auth: self.clone(),
            presented: presented.map(Arc::from),
            identity,
        })
    }
}

/// What a request was granted: its identity, and the means to check its
/// credential again (a live stream does, every second, and ends when the
/// credential no longer holds).
#[derive(Clone)]
pub struct Grant {
    auth: Arc<Authenticator>,
    presented: Option<Arc<str>>,
    pub identity: Identity,
}

impl Grant {
    /// `Ok` while the credential still holds: the key is still configured,
    /// the token has not expired, its account's tokens were not revoked and
    /// the account is not suspended.
    pub async fn recheck(&self) -> Result<(), Error> {
        self.caller_now().await.map(drop)
    }

    /// The caller the credential makes now (its key's scopes as the keys
    /// file says them now), or why it no longer holds.
    pub async fn caller_now(&self) -> Result<Caller, Error> {
        match &self.presented {
            Some(p) => self.auth.identify(p).await.map(|i| i.caller),
            None => Ok(self.identity.caller.clone()),
        }
    }
}

/// The credential of `Authorization: Bearer X` or of Basic's password.
fn credential(headers: &HeaderMap) -> Result<Option<String>, Error> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Error::invalid(
            "duplicate_authorization",
            "send one Authorization header",
        ));
    }
    let malformed = || {
        Error::new(
            ErrorKind::Unauthenticated,
            "invalid_authorization",
            "Authorization must be `Bearer CREDENTIAL` (or Basic with the credential as password)",
        )
    };
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, rest) = value.split_once(' ').ok_or_else(malformed)?;
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("bearer") && !rest.is_empty() {
        return Ok(Some(rest.to_owned()));
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = Base64::decode_vec(rest).map_err(|_| malformed())?;
        let decoded = String::from_utf8(decoded).map_err(|_| malformed())?;
        let (_, password) = decoded.split_once(':').ok_or_else(malformed)?;
        if !password.is_empty() {
            return Ok(Some(password.to_owned()));
        }
    }
    Err(malformed())
}

/// The caller of a REST handler, as the authentication layer established it
/// (anonymous if no layer ran).
pub struct Auth(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Auth {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let caller = parts.extensions.get::<Caller>().cloned();
        Ok(Auth(caller.unwrap_or(Caller::Anonymous)))
    }
}

/// The grant of a REST request, for handlers that hold on to it (streams).
pub struct Granted(pub Option<Grant>);

impl<S: Send + Sync> FromRequestParts<S> for Granted {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Granted(parts.extensions.get::<Grant>().cloned()))
    }
}

/// A gRPC request's caller and message.
pub fn grpc_parts<T>(req: tonic::Request<T>) -> (Caller, T) {
    let caller = req.extensions().get::<Caller>().cloned();
    (caller.unwrap_or(Caller::Anonymous), req.into_inner())
}

/// gRPC: establishes the caller, or answers `UNAUTHENTICATED` or
/// `RESOURCE_EXHAUSTED` (with `retry-after` metadata). (REST's is part of
/// [`crate::front`].)
pub async fn authenticate_grpc(
    State(auth): State<Arc<Authenticator>>,
    mut req: Request,
    next: Next,
) -> Response {
    let admitted = auth.admit_into(&mut req).await;
    let caller = req.extensions().get::<Caller>().cloned();
    let resp = match admitted {
        Ok(()) => next.run(req).await,
        Err(r) => grpc_refusal(r),
    };
    auth.with_limit_fields(resp, caller.as_ref())
}

impl Authenticator {
    /// Puts the admitted caller (and its grant) in the request for the
    /// handler, or gives the refusal. A caller refused for its rate is in
    /// the request still, for [`Self::with_limit_fields`].
    pub async fn admit_into(self: &Arc<Self>, req: &mut Request) -> Result<(), Error> {
        let grant = self.admit(req.headers()).await?;
        req.extensions_mut().insert(grant.identity.caller.clone());
        self.limiter.admit(&grant.identity.caller)?;
        req.extensions_mut().insert(grant);
        Ok(())
    }

    /// The response with the caller's `RateLimit` fields, if it is metered.
    pub fn with_limit_fields(&self, mut resp: Response, caller: Option<&Caller>) -> Response {
        if let Some(fields) = caller.and_then(|c| self.limit_fields(c)) {
            resp.headers_mut().extend(fields);
        }
        resp
    }
}

fn grpc_refusal(e: Error) -> Response {
    to_status(e).into_http()
}
