//! REST routes of a user's notifications: their entries, and how many
//! are unread.

use crate::auth::Auth;
use crate::extract::{PageParams, Path, Query};
use crate::json::{NotificationPageJson, UnreadJson};
use crate::responses::{InvalidUserId, UserNotFound};
use crate::schema::{ErrorBody, PostPageQuery, UserPath};
use crate::{json, ApiError};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use socialite_core::reads::Reads;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Reads>>;

pub fn rest_router() -> OpenApiRouter<super::state::ReadsState> {
    OpenApiRouter::new()
        .routes(routes!(notifications))
        .routes(routes!(unread))
}

/// The user's notifications, newest first: follows, mentions, replies,
/// reposts and likes addressed to them, grouped by kind and post within a
/// UTC day ("bob and 4 others liked your post"), without what their mutes
/// and blocks hide; paged by `limit` and `before` (an entry's `id`).
#[utoipa::path(
    get, path = "/users/{id}/notifications", tag = "notifications", params(UserPath, PostPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of notifications", body = NotificationPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_post_id`, `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn notifications(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads
        .notifications(&caller, &id, q.limit, q.before())
        .await?;
    Ok(Json(json::notification_page(&page)).into_response())
}

/// How many of the user's notification entries are newer than their
/// notifications marker (`PUT /users/{id}/markers/notifications`), or all
/// without one: counted up to 1,000.
#[utoipa::path(
    get, path = "/users/{id}/notifications/unread", tag = "notifications", params(UserPath),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "The unread count", body = UnreadJson),
        InvalidUserId, UserNotFound,
    )
)]
async fn unread(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (unread, more) = reads.unread_notifications(&caller, &id).await?;
    Ok(Json(UnreadJson { unread, more }).into_response())
}
