//! The home timeline in a ranked order over REST (`order=balanced` or
//! `catchup` on `GET /users/{id}/timeline`), and the reader's priorities
//! that rank it.

use crate::auth::Auth;
use crate::extract::{PageParams, Path};
use crate::pages::TIMELINE_SOURCE;
use crate::responses::{InvalidUserId, UserNotFound};
use crate::schema::UserPath;
use crate::ApiError;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;
use socialite_core::reads::ranked::Order;
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::Caller;
use std::sync::Arc;

pub(super) async fn timeline(
    reads: &Reads,
    caller: &Caller,
    id: &str,
    list: Option<&str>,
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
        .ranked_timeline(caller, id, list, order, q.limit, q.cursor(), q.since())
        .await?;
    let explain = q.explain.unwrap_or(false);
    let mut resp = Json(crate::json_ranked::ranked_page(&page, order, explain)).into_response();
    let source = HeaderValue::from_static(page.source.as_str());
    resp.headers_mut().insert(TIMELINE_SOURCE, source);
    Ok(resp)
}

/// A reader's priorities for accounts.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct PreferencesJson {
    preferences: Vec<PriorityJson>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct PriorityJson {
    #[schema(example = "carol")]
    author: String,
    #[schema(example = 2)]
    priority: i8,
}

/// The user's priorities for accounts (set with `PUT
/// /users/{id}/feed-preferences/{author}`), in account id order.
#[utoipa::path(
    get, path = "/users/{id}/feed-preferences", tag = "timelines", params(UserPath),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "The priorities", body = PreferencesJson),
        InvalidUserId, UserNotFound,
    )
)]
pub(super) async fn feed_preferences(
    State(reads): State<Arc<Reads>>,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<Json<PreferencesJson>, ApiError> {
    let all = reads.feed_preferences(&caller, &id).await?;
    let preferences = all
        .into_iter()
        .map(|(a, priority)| PriorityJson {
            author: a.as_str().to_owned(),
            priority,
        })
        .collect();
    Ok(Json(PreferencesJson { preferences }))
}
