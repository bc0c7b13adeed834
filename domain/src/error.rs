//! One error type for every port and service. Its [`ErrorKind`] says what
//! went wrong from the caller's side and whether a retry can help; each
//! transport maps the kinds to its own statuses, in one place each (the API
//! crate's `error` module). Core knows no transport.

use std::fmt;

/// What went wrong, from the caller's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is malformed or breaks a documented limit.
    Invalid,
    /// No credential, or one that is unknown, malformed or expired.
    Unauthenticated,
    /// The credential is valid but does not allow this call.
    Forbidden,
    /// The caller used up a quota: more requests than its rate allows, or
    /// more streams than it may hold.
    RateLimited,
    /// A user or post that the request names does not exist.
    NotFound,
    /// The request conflicts with the current state (e.g. following oneself).
    Conflict,
    /// A backend is unreachable or overloaded; the same request may succeed later.
    Unavailable,
    /// A bug or a corrupt store: not the caller's fault, not worth retrying.
    Internal,
}

/// An error with a stable machine-readable `code` (e.g. `invalid_user_id`), a
/// message for people, and the underlying cause where there is one.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    code: &'static str,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// Seconds after which the same request may succeed: a quota's refill
    /// or an overload's expected end (REST `Retry-After`, gRPC
    /// `retry-after` metadata).
    retry_after: Option<u64>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        Error {
            kind,
            code,
            message: message.into(),
            source: None,
            retry_after: None,
        }
    }

    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, code, message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, code, message)
    }

    /// A backend failure; the cause is kept for logs, never shown to clients.
    pub fn backend(
        kind: ErrorKind,
        what: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let code = if kind == ErrorKind::Unavailable {
            "unavailable"
        } else {
            "internal"
        };
        Error {
            kind,
            code,
            message: format!("{what} failed"),
            source: Some(Box::new(source)),
            retry_after: None,
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, "internal", message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, "unavailable", message)
    }

    /// The same error, telling the caller to retry after `secs` seconds
    /// (at least 1).
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs.max(1));
        self
    }

    /// Seconds to wait before the same request may succeed, when known.
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.retry_after
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn code(&self) -> &'static str {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message and its cause chain, for logs.
    pub fn chain(&self) -> String {
        let mut out = self.message.clone();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            out.push_str(": ");
            out.push_str(&c.to_string());
            cause = c.source();
        }
        out
    }

    /// A copy for fanning one failure out to several waiters (the cause is
    /// flattened into the message).
    pub fn duplicate(&self) -> Error {
        Error {
            retry_after: self.retry_after,
            ..Error::new(self.kind, self.code, self.chain())
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
