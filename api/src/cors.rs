//! CORS, off unless origins are configured (`--cors-origins`): browsers on
//! those origins may call the API with a credential in `Authorization`, and
//! read the request id, the timeline source and `Retry-After`. Preflight
//! requests are answered here, before authentication, as browsers send
//! them without credentials.

use axum::http::{header, HeaderName, HeaderValue, Method};
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The layer for `origins` (`*` allows any), or none when the list is empty.
pub fn layer(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok()),
        )
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::PUT,
                Method::POST,
                Method::DELETE,
                Method::PATCH,
            ])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_static("x-request-id"),
            ])
            .expose_headers([
                HeaderName::from_static("x-request-id"),
                HeaderName::from_static("x-timeline-source"),
                header::RETRY_AFTER,
                header::LOCATION,
                crate::auth::fields::RATELIMIT_POLICY.clone(),
                crate::auth::fields::RATELIMIT.clone(),
            ])
            .max_age(Duration::from_secs(600)),
    )
}
