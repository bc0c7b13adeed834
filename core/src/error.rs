//! One error type for every port and service. Its [`ErrorKind`] decides, in one
//! place each, the HTTP status, the gRPC code and whether a retry can help.

use std::fmt;

/// What went wrong, from the caller's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is malformed or breaks a documented limit.
    Invalid,
    /// The request body is larger than the documented limit.
    TooLarge,
    /// The request body is not of a media type the API takes (JSON).
    UnsupportedMediaType,
    /// The request's URL is longer than the documented limit.
    UriTooLong,
    /// The request's headers are larger than the documented limit.
    HeadersTooLarge,
    /// No credential, or one that is unknown, malformed or expired.
    Unauthenticated,
    /// The credential is valid but does not allow this call.
    Forbidden,
    /// The credential sent more requests than its rate allows.
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

impl ErrorKind {
    /// Whether retrying the same operation later can succeed.
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorKind::Unavailable)
    }

    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::Invalid => 400,
            ErrorKind::Unauthenticated => 401,
            ErrorKind::Forbidden => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::Conflict => 409,
            ErrorKind::TooLarge => 413,
            ErrorKind::UnsupportedMediaType => 415,
            ErrorKind::UriTooLong => 414,
            ErrorKind::RateLimited => 429,
            ErrorKind::HeadersTooLarge => 431,
            ErrorKind::Unavailable => 503,
            ErrorKind::Internal => 500,
        }
    }
}

/// An error with a stable machine-readable `code` (e.g. `invalid_user_id`), a
/// message for people, and the underlying cause where there is one.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    code: &'static str,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        Error {
            kind,
            code,
            message: message.into(),
            source: None,
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
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, "internal", message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, "unavailable", message)
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
        Error::new(self.kind, self.code, self.chain())
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
