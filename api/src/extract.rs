//! Extractors whose rejections speak the API's error format.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use serde::de::DeserializeOwned;
use socialite_core::model::check_json_integers;
use socialite_core::ErrorKind;

/// A JSON body. Malformed JSON, a wrong shape, a missing content type, an
/// integer that JSON parsing would not keep exactly and an oversized body
/// are refused with a 4xx naming the problem.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(req.headers()) {
            return Err(unsupported_media_type());
        }
        let body = Bytes::from_request(req, state)
            .await
            .map_err(|r| match r.status() {
                StatusCode::PAYLOAD_TOO_LARGE => body_too_large(),
                _ => ApiError::new(ErrorKind::Invalid, "invalid_body", r.body_text()),
            })?;
        check_json_integers(&body)?;
        match axum::Json::<T>::from_bytes(&body) {
            Ok(axum::Json(v)) => Ok(Json(v)),
            Err(r) => Err(json_rejection(r)),
        }
    }
}

fn body_too_large() -> ApiError {
    ApiError::http(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!(
            "the request body is over the limit of {} bytes",
            crate::MAX_BODY_BYTES
        ),
    )
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let detail = r.body_text();
    match r {
        JsonRejection::JsonSyntaxError(_) => {
            ApiError::new(ErrorKind::Invalid, "invalid_json", detail)
        }
        JsonRejection::JsonDataError(_) => {
            ApiError::new(ErrorKind::Invalid, "invalid_body", detail)
        }
        JsonRejection::MissingJsonContentType(_) => unsupported_media_type(),
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => body_too_large(),
        other => ApiError::new(ErrorKind::Invalid, "invalid_body", other.body_text()),
    }
}

fn unsupported_media_type() -> ApiError {
    ApiError::http(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "the body must be JSON with Content-Type: application/json",
    )
}

/// Whether the request says its body is JSON (`application/json`, or a
/// `+json` type), as every body of the API must.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .is_some_and(|t| {
            t == "application/json" || (t.starts_with("application/") && t.ends_with("+json"))
        })
}

/// A body that may be empty; when present it must be JSON of shape `T`,
/// declared as such (`415 unsupported_media_type` otherwise).
pub fn optional_json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Option<T>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if !is_json(headers) {
        return Err(unsupported_media_type());
    }
    check_json_integers(body)?;
    // `null` is no body, as the contract's optional body allows.
    if body.trim_ascii() == b"null" {
        return Ok(None);
    }
    serde_json::from_slice(body).map(Some).map_err(|e| {
        let code = if e.is_data() {
            "invalid_body"
        } else {
            "invalid_json"
        };
        ApiError::new(
            ErrorKind::Invalid,
            code,
            format!("the body is not valid: {e}"),
        )
    })
}

/// Path parameters; a malformed one is refused with `invalid_path`.
pub struct Path<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(Path(v)),
            Err(r) => Err(ApiError::new(
                ErrorKind::Invalid,
                "invalid_path",
                r.body_text(),
            )),
        }
    }
}

/// Query parameters; a malformed one is refused with `invalid_query`.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(Query(v)),
            Err(r) => Err(query_rejection(r)),
        }
    }
}

fn query_rejection(r: QueryRejection) -> ApiError {
    ApiError::new(ErrorKind::Invalid, "invalid_query", r.body_text())
}

/// The authors of `GET /posts`, with the paging of post lists (fields
/// spelled out: a flattened struct would take `limit` as text).
#[derive(Debug, serde::Deserialize)]
pub struct AuthorsParams {
    pub authors: String,
    pub limit: Option<u64>,
    pub before: Option<String>,
    pub viewer: Option<String>,
}

impl AuthorsParams {
    pub fn before(&self) -> Option<&str> {
        self.before.as_deref().filter(|s| !s.is_empty())
    }

    pub fn viewer(&self) -> Option<&str> {
        self.viewer.as_deref().filter(|s| !s.is_empty())
    }
}

/// `limit` plus a cursor, the parameters of every list.
#[derive(Debug, Default, serde::Deserialize)]
pub struct PageParams {
    pub limit: Option<u64>,
    pub cursor: Option<String>,
    pub before: Option<String>,
    /// Filters the accounts followed to one list.
    pub list: Option<String>,
    /// Follower and following pages carry each edge's follow time.
    pub followed_at: Option<bool>,
    /// Who reads: whose mutes and blocks apply to a group's timeline or a
    /// thread, whose blocks to an account or a post asked for by name.
    pub viewer: Option<String>,
    /// The home timeline forward from this post, oldest first.
    pub after: Option<String>,
    /// The home timeline's order: `latest` (the default), `balanced`,
    /// `catchup`.
    pub order: Option<String>,
    /// Catch-up from after this post instead of the home marker.
    pub since: Option<String>,
    /// Ranked entries carry their score and its parts.
    pub explain: Option<bool>,
}

impl PageParams {
    /// An empty parameter counts as absent.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref().filter(|s| !s.is_empty())
    }

    pub fn before(&self) -> Option<&str> {
        self.before.as_deref().filter(|s| !s.is_empty())
    }

    pub fn list(&self) -> Option<&str> {
        self.list.as_deref().filter(|s| !s.is_empty())
    }

    pub fn viewer(&self) -> Option<&str> {
        self.viewer.as_deref().filter(|s| !s.is_empty())
    }

    pub fn after(&self) -> Option<&str> {
        self.after.as_deref().filter(|s| !s.is_empty())
    }

    pub fn order(&self) -> Option<&str> {
        self.order.as_deref().filter(|s| !s.is_empty())
    }

    pub fn since(&self) -> Option<&str> {
        self.since.as_deref().filter(|s| !s.is_empty())
    }
}
