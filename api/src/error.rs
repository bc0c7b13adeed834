//! Errors as responses: `{"error":{"code":"...","message":"..."}}` with the
//! status the error's kind decides (and `WWW-Authenticate` on 401), and the
//! matching gRPC status.

use crate::schema::{ErrorBody, ErrorDetail};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use socialite_core::{Error, ErrorKind};

/// An error on its way to a REST client.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl ApiError {
    pub fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        ApiError(Error::new(kind, code, message))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let e = self.0;
        if matches!(e.kind(), ErrorKind::Internal | ErrorKind::Unavailable) {
            tracing::error!(code = e.code(), error = %e.chain(), "request failed");
        }
        let status = StatusCode::from_u16(e.kind().http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = ErrorBody {
            error: ErrorDetail {
                code: e.code(),
                message: e.message().to_owned(),
                request_id: None,
            },
        };
        let mut resp = (status, Json(body)).into_response();
        if e.kind() == ErrorKind::Unauthenticated {
            // Basic too, so that a browser asks (the status page).
            resp.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer, Basic realm=\"Socialite\""),
            );
        }
        resp
    }
}

/// The gRPC status for an error; the code is carried in the message prefix.
pub fn to_status(e: Error) -> tonic::Status {
    use tonic::Code;
    let code = match e.kind() {
        ErrorKind::Invalid
        | ErrorKind::TooLarge
        | ErrorKind::UnsupportedMediaType
        | ErrorKind::UriTooLong
        | ErrorKind::HeadersTooLarge => Code::InvalidArgument,
        ErrorKind::Unauthenticated => Code::Unauthenticated,
        ErrorKind::Forbidden => Code::PermissionDenied,
        ErrorKind::RateLimited => Code::ResourceExhausted,
        ErrorKind::NotFound => Code::NotFound,
        ErrorKind::Conflict => Code::FailedPrecondition,
        ErrorKind::Unavailable => Code::Unavailable,
        ErrorKind::Internal => Code::Internal,
    };
    if matches!(e.kind(), ErrorKind::Internal | ErrorKind::Unavailable) {
        tracing::error!(code = e.code(), error = %e.chain(), "grpc request failed");
    }
    tonic::Status::new(code, format!("{}: {}", e.code(), e.message()))
}
