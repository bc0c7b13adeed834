//! The home timeline in a ranked order over REST (`order=balanced` or
//! `catchup` on `GET /users/{id}/timeline`).

use crate::extract::PageParams;
use crate::pages::TIMELINE_SOURCE;
use crate::{json, ApiError};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;
use socialite_core::reads::ranked::Order;
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::Caller;

pub(super) async fn timeline(
    reads: &Reads,
    caller: &Caller,
    id: &str,
    order: Order,
    q: &PageParams,
) -> Result<Response, ApiError> {
    if q.before().is_some() || q.after().is_some() {
        return Err(socialite_core::Error::invalid(
            "invalid_query",
            "a ranked order pages with `cursor`, not `before` or `after`",
        )
        .into());
    }
    let page = reads
        .ranked_timeline(caller, id, order, q.limit, q.cursor(), q.since())
        .await?;
    let explain = q.explain.unwrap_or(false);
    let mut resp = Json(json::ranked_page(&page, order, explain)).into_response();
    let source = HeaderValue::from_static(page.source.as_str());
    resp.headers_mut().insert(TIMELINE_SOURCE, source);
    Ok(resp)
}
