//! REST routes of a reader's feed preferences: their priority for an
//! account in their ranked timelines (docs/ranking.md).

use crate::auth::Auth;
use crate::extract::{Json, Path};
use crate::responses::{
    EitherUserNotFound, InvalidUserId, InvalidUserOrPostId, UserNotFound, UserOrPostNotFound,
};
use crate::schema::{ErrorBody, PreferencePath, ShownLessPath};
use crate::ApiError;
use axum::extract::State;
use serde::Serialize;
use socialite_core::ingest::Ingest;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new()
        .routes(routes!(set_preference, clear_preference))
        .routes(routes!(show_less, show_less_undone))
}

/// The reader's priority for the account.
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferenceBody {
    /// -2 to 2: each step up doubles the account's score in the balanced
    /// and catch-up orders, each step down halves it; 0 clears it.
    #[schema(minimum = -2, maximum = 2, example = 2)]
    priority: i64,
}

/// A reader's preference for an account, after the request.
#[derive(Serialize, ToSchema)]
pub struct PreferenceJson {
    #[schema(example = "carol")]
    pub author: String,
    #[schema(example = 2)]
    pub priority: i64,
    /// Whether the request changed it.
    pub changed: bool,
}

/// Sets the user's priority for `author` in their ranked timelines (`order=balanced`,
/// `catchup`): from -2 (a quarter of the score) to 2 (four times it); 0
/// clears it. The newest-first order is not changed by it. A user gives
/// at most 1,000 accounts each level.
#[utoipa::path(
    put, path = "/users/{id}/feed-preferences/{author}", tag = "timelines", params(PreferencePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = PreferenceBody, content_type = "application/json"),
    responses(
        (status = 200, description = "The preference afterwards", body = PreferenceJson),
        (status = 400, description = "`invalid_user_id`, `invalid_priority`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 409, description = "`cannot_prioritize_self`, `too_many_relations`", body = ErrorBody),
        EitherUserNotFound,
    )
)]
async fn set_preference(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, author)): Path<(String, String)>,
    Json(body): Json<PreferenceBody>,
) -> Result<axum::Json<PreferenceJson>, ApiError> {
    let changed = ingest
        .set_priority(&caller, &id, &author, body.priority)
        .await?;
    Ok(axum::Json(PreferenceJson {
        author,
        priority: body.priority,
        changed,
    }))
}

/// Clears the user's priority for `author` (idempotent).
#[utoipa::path(
    delete, path = "/users/{id}/feed-preferences/{author}", tag = "timelines", params(PreferencePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "No priority", body = PreferenceJson),
        InvalidUserId, EitherUserNotFound,
    )
)]
async fn clear_preference(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, author)): Path<(String, String)>,
) -> Result<axum::Json<PreferenceJson>, ApiError> {
    let changed = ingest.set_priority(&caller, &id, &author, 0).await?;
    Ok(axum::Json(PreferenceJson {
        author,
        priority: 0,
        changed,
    }))
}

/// Whether a "show less" changed anything.
#[derive(Serialize, ToSchema)]
pub struct ShownLessJson {
    #[schema(example = "0550f1a2b3c40000")]
    pub post: String,
    /// Whether the post is marked afterwards.
    pub shown_less: bool,
    /// False when the request changed nothing.
    pub changed: bool,
}

/// "Show less like this" (idempotent): the post leaves the user's ranked
/// timelines (`order=balanced`, `catchup`), and each such post lowers its
/// author there by one step of priority, to -2 at most. The newest-first
/// order is not changed by it. Kept as a collection of the user's (at most
/// 10,000 posts).
#[utoipa::path(
    put, path = "/users/{id}/shown-less/{post_id}", tag = "timelines", params(ShownLessPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Marked", body = ShownLessJson),
        (status = 409, description = "`collection_full`: the user has 10,000 such posts", body = ErrorBody),
        InvalidUserOrPostId, UserOrPostNotFound,
    )
)]
async fn show_less(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<ShownLessJson>, ApiError> {
    shown_less(&ingest, &caller, id, post, true).await
}

/// Takes a "show less" back (idempotent).
#[utoipa::path(
    delete, path = "/users/{id}/shown-less/{post_id}", tag = "timelines", params(ShownLessPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not marked", body = ShownLessJson),
        InvalidUserOrPostId, UserNotFound,
    )
)]
async fn show_less_undone(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<ShownLessJson>, ApiError> {
    shown_less(&ingest, &caller, id, post, false).await
}

async fn shown_less(
    ingest: &Ingest,
    caller: &socialite_domain::accounts::access::Caller,
    id: String,
    post: String,
    on: bool,
) -> Result<axum::Json<ShownLessJson>, ApiError> {
    let changed = ingest.show_less(caller, &id, &post, on).await?;
    Ok(axum::Json(ShownLessJson {
        post,
        shown_less: on,
        changed,
    }))
}
