//! What stands between a hostile client and the handlers, as
//! [`crate::front`] applies it: a request id on every request, limits
//! checked before any body is read (URL and header sizes, a declared body
//! over the limit, so `Expect: 100-continue` is answered 413 rather than
//! 100), a cap on requests in flight, and a deadline per request. Every
//! refusal is the API's JSON error, carrying the request id.
//!
//! A request that runs out of time while the server waits for its body
//! ([`Paced`]) is the client's doing (it sends too slowly, or stalls): it
//! is answered 408 `body_timeout` and counted, and logged at most once per
//! [`SLOW_BODY_LOG_EVERY`] with how many there were, so a crowd of slow
//! clients cannot flood the log. A request that runs out of time in the
//! server is a failure of the server's: 503 `request_timeout`, logged.

use crate::error::ApiError;
use crate::MAX_BODY_BYTES;
use axum::body::{to_bytes, Body, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use socialite_core::reads_first::ReadsFirst;
use socialite_core::ErrorKind;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The longest URL (path and query) the API accepts.
pub const MAX_URI_BYTES: usize = 4096;
/// The most header bytes (names and values) a request may carry.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// How long a request may take, reading its body included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a backup may take: it copies the whole store (an admin key's
/// call, one at a time per operator).
pub const BACKUP_TIMEOUT: Duration = Duration::from_secs(3600);

/// The time limit of a call to `path` (a REST path or a gRPC method's),
/// where a request may take `request_timeout` ([`REQUEST_TIMEOUT`] unless
/// the process's [`crate::limits::Limits`] say otherwise).
pub fn time_limit(path: &str, request_timeout: Duration) -> Duration {
    match path {
        "/admin/backup" | "/socialite.v1.Ingest/Backup" => BACKUP_TIMEOUT,
        _ => request_timeout,
    }
}
/// Largest `POST /firehose` body: its filters name up to 10,000 accounts
/// of the longest ids.
pub const FIREHOSE_BODY_BYTES: usize = 1 << 20;

/// The largest body a request to `path` may declare: [`MAX_BODY_BYTES`],
/// but [`FIREHOSE_BODY_BYTES`] for a firehose's filters and a webhook
/// endpoint's (each names up to 10,000 authors).
pub fn body_limit(path: &str) -> usize {
    match path {
        "/firehose" => FIREHOSE_BODY_BYTES,
        p if p.starts_with("/admin/webhooks") || p.starts_with("/socialite.v1.Webhooks/") => {
            FIREHOSE_BODY_BYTES
        }
        _ => MAX_BODY_BYTES,
    }
}

/// Requests handled at once by one process; more are refused, not queued.
pub const MAX_IN_FLIGHT: usize = 2048;

/// How long a create refused for the reads' latency is held before it is
/// answered: a client that does not wait as `Retry-After` tells is held on
/// its connection, not served refusals as fast as it can ask (a timer
/// costs nothing; each request it makes does).
pub(crate) const REFUSAL_PACE: Duration = Duration::from_millis(250);
/// Error bodies are small; a larger one is passed through untouched.
const MAX_ERROR_BODY: usize = 64 * 1024;

pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A client's id is kept if it is 1 to 64 visible ASCII characters;
/// otherwise one is made: the process start and a counter, unique per
/// process and cheap.
pub(crate) fn request_id(req: &Request) -> HeaderValue {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(v) = req.headers().get(&REQUEST_ID) {
        let b = v.as_bytes();
        if (1..=64).contains(&b.len()) && b.iter().all(|b| b.is_ascii_graphic()) {
            return v.clone();
        }
    }
    let prefix = PREFIX.get_or_init(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        format!("{:x}{:x}", t, std::process::id())
    });
    let id = format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    HeaderValue::try_from(id).expect("hex digits and a dash are a header value")
}

fn refusal(status: StatusCode, code: &'static str, message: String) -> Response {
    ApiError::http(status, code, message).into_response()
}

fn unavailable(code: &'static str, message: String) -> Response {
    ApiError::new(ErrorKind::Unavailable, code, message).into_response()
}

/// Checks what can be checked before the handler runs.
pub(crate) fn precheck(req: &Request) -> Option<Response> {
    let uri = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri > MAX_URI_BYTES {
        return Some(refusal(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the URL is {uri} bytes; the limit is {MAX_URI_BYTES}"),
        ));
    }
    let headers: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len())
        .sum();
    if headers > MAX_HEADER_BYTES {
        return Some(refusal(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            format!("the headers are {headers} bytes; the limit is {MAX_HEADER_BYTES}"),
        ));
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let limit = body_limit(req.uri().path());
    if declared.is_some_and(|n| n > limit as u64) {
        return Some(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body is over the limit of {limit} bytes"),
        ));
    }
    if let Some(enc) = req.headers().get(header::CONTENT_ENCODING) {
        if enc.as_bytes() != b"identity" {
            return Some(refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_content_encoding",
                "request bodies are taken uncompressed (no Content-Encoding)".into(),
            ));
        }
    }
    None
}

/// Refuses a request over the in-flight cap.
pub(crate) fn overloaded() -> Response {
    let mut r = unavailable(
        "overloaded",
        format!("more than {MAX_IN_FLIGHT} requests are in flight; retry shortly"),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// Refuses a request past its time limit.
pub(crate) fn timed_out(limit: Duration) -> Response {
    unavailable(
        "request_timeout",
        format!("the request took longer than {} s", limit.as_secs()),
    )
}

/// Refuses a request that ran out of time while its body was awaited from
/// the client (see the module's overview).
pub(crate) fn body_timed_out(limit: Duration) -> Response {
    note_slow_body();
    let mut r = refusal(
        StatusCode::REQUEST_TIMEOUT,
        "body_timeout",
        format!(
            "the request's body did not arrive within {} s: send it faster",
            limit.as_secs()
        ),
    );
    // The rest of the body will not be read: the connection cannot serve
    // another request.
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The longest a slow client goes unlogged.
pub const SLOW_BODY_LOG_EVERY: Duration = Duration::from_secs(60);

/// Counts a body that came too slowly, and logs the count at most once per
/// [`SLOW_BODY_LOG_EVERY`] (the first at once).
fn note_slow_body() {
    static SINCE_LOGGED: AtomicU64 = AtomicU64::new(0);
    static LOGGED_AT: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);
    SINCE_LOGGED.fetch_add(1, Ordering::Relaxed);
    let mut at = LOGGED_AT.lock().unwrap_or_else(|p| p.into_inner());
    if at.is_some_and(|t| t.elapsed() < SLOW_BODY_LOG_EVERY) {
        return;
    }
    *at = Some(std::time::Instant::now());
    let n = SINCE_LOGGED.swap(0, Ordering::Relaxed);
    tracing::warn!(
        requests = n,
        "clients sent request bodies too slowly: answered 408 body_timeout (logged at most once a minute)"
    );
}

/// A request's body that tells whether the server is waiting on the client
/// for it: its last poll found nothing yet.
pub(crate) struct Paced {
    inner: Body,
    waiting: Arc<AtomicBool>,
}

impl Paced {
    /// `req` with its body watched; the flag reads true while the server
    /// waits for the client's bytes.
    pub(crate) fn watch(req: Request) -> (Request, Arc<AtomicBool>) {
        let waiting = Arc::new(AtomicBool::new(false));
        let (parts, inner) = req.into_parts();
        let body = Body::new(Paced {
            inner,
            waiting: waiting.clone(),
        });
        (Request::from_parts(parts, body), waiting)
    }
}

impl http_body::Body for Paced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        self.waiting.store(polled.is_pending(), Ordering::Relaxed);
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Echoes the id in `x-request-id` and, in an error body, as
/// `error.request_id`, so a client can quote it.
pub(crate) async fn with_request_id(resp: Response, id: &HeaderValue) -> Response {
    let (mut parts, body) = resp.into_parts();
    parts.headers.insert(REQUEST_ID.clone(), id.clone());
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if parts.status < StatusCode::BAD_REQUEST || !is_json {
        return Response::from_parts(parts, body);
    }
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let mut value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) => return Response::from_parts(parts, Body::from(bytes)),
    };
    if let Some(error) = value.get_mut("error").and_then(|e| e.as_object_mut()) {
        let id = String::from_utf8_lossy(id.as_bytes());
        error.insert("request_id".into(), id.into());
    }
    let bytes = serde_json::to_vec(&value).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}

/// The routes whose act always makes something: while the reads' latency
/// holds writes back, a flood of them is answered before its credential
/// and body are read, since a refusal made further in costs nearly what
/// the write would have (deletions and every other act are left to the
/// write gate, which knows their cost).
const CREATES: [(Method, &str); 5] = [
    (Method::POST, "/users/{id}/posts"),
    (Method::PUT, "/users/{id}/likes/{post_id}"),
    (Method::PUT, "/users/{id}/reposts/{post_id}"),
    (Method::PUT, "/users/{id}/following/{target}"),
    (Method::PUT, "/users/{id}/bookmarks/{post_id}"),
];

/// The refusal of a create that the reads' latency would refuse anyway.
pub(crate) fn refused_early(guard: &ReadsFirst, req: &Request) -> Option<socialite_core::Error> {
    let route = req.extensions().get::<MatchedPath>()?.as_str();
    CREATES
        .iter()
        .any(|(m, r)| m == req.method() && *r == route)
        .then(|| guard.refuses_creates())?
}
