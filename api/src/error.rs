//! Errors as responses: `{"error":{"code":"...","message":"..."}}` with the
//! status the error's kind decides (and `WWW-Authenticate` on 401), and the
//! matching gRPC status: the one place where core's error kinds become a
//! transport's statuses. Refusals only HTTP makes (a body, URL or headers
//! too large, a body that is not JSON) carry their status themselves.

use crate::schema::{ErrorBody, ErrorDetail};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use socialite_core::{Error, ErrorKind};

/// An error on its way to a REST client.
#[derive(Debug)]
pub struct ApiError {
    error: Error,
    /// The status of a refusal only HTTP makes; otherwise the kind's.
    status: Option<StatusCode>,
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError {
            error,
            status: None,
        }
    }
}

impl ApiError {
    pub fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        Error::new(kind, code, message).into()
    }

    /// A refusal of the request's HTTP form (its size or media type), with
    /// its own `status`; to gRPC it would be an invalid argument.
    pub fn http(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            error: Error::invalid(code, message),
            status: Some(status),
        }
    }

    pub fn error(&self) -> &Error {
        &self.error
    }
}

/// Whether the error is the server's failure, worth a log line: an
/// internal error, or a store unavailable; not a refusal the server makes
/// on purpose with a time to retry after (a write shed under load: one
/// line each would flood the log just when it matters).
fn is_failure(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Internal => true,
        ErrorKind::Unavailable => e.retry_after_secs().is_none(),
        _ => false,
    }
}

/// The REST status of each kind of error.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Invalid => StatusCode::BAD_REQUEST,
        ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let e = self.error;
        let status = self.status.unwrap_or_else(|| status_of(e.kind()));
        let body = ErrorBody {
            error: ErrorDetail {
                code: e.code(),
                message: e.message().to_owned(),
                request_id: None,
            },
        };
        let mut resp = (status, Json(body)).into_response();
        if let Some(secs) = e.retry_after_secs() {
            resp.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        if e.kind() == ErrorKind::Unauthenticated {
            // Basic too, so that a browser asks (the status page).
            resp.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer, Basic realm=\"Socialite\""),
            );
        }
        if is_failure(&e) {
            resp.extensions_mut().insert(Failure {
                code: e.code(),
                chain: e.chain(),
            });
        }
        resp
    }
}

/// A failure on the server's side (internal or unavailable), carried on
/// its response for [`crate::front`] to log with the request's id and
/// route.
#[derive(Clone)]
pub struct Failure {
    pub code: &'static str,
    pub chain: String,
}

/// The gRPC status for an error; the code is carried in the message prefix.
pub fn to_status(e: Error) -> tonic::Status {
    use tonic::Code;
    let code = match e.kind() {
        ErrorKind::Invalid => Code::InvalidArgument,
        ErrorKind::Unauthenticated => Code::Unauthenticated,
        ErrorKind::Forbidden => Code::PermissionDenied,
        ErrorKind::RateLimited => Code::ResourceExhausted,
        ErrorKind::NotFound => Code::NotFound,
        ErrorKind::Conflict => Code::FailedPrecondition,
        ErrorKind::Unavailable => Code::Unavailable,
        ErrorKind::Internal => Code::Internal,
    };
    if is_failure(&e) {
        tracing::error!(code = e.code(), error = %e.chain(), "grpc request failed");
    }
    let mut status = tonic::Status::new(code, format!("{}: {}", e.code(), e.message()));
    if let Some(secs) = e.retry_after_secs() {
        status.metadata_mut().insert("retry-after", secs.into());
    }
    status
}
