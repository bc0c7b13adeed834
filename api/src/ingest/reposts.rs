//! REST routes of reposts: a user reposts a post, or undoes it.

use crate::auth::Auth;
use crate::extract::Path;
use crate::json::RepostJson;
use crate::responses::{Blocked, InvalidUserOrPostId, UserNotFound, UserOrPostNotFound};
use crate::schema::{ErrorBody, RepostPath};
use crate::ApiError;
use axum::extract::State;
use socialite_core::ingest::Ingest;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new().routes(routes!(repost, unrepost))
}

/// Reposts the post (idempotent): it enters the home and list timelines
/// of the user's followers at the top, once however many of their
/// followees reposted it, naming them in `reposted_by`; the post's
/// `reposts` count grows by one the first time. Refused for one's own
/// post, and while the user or the post's author blocks the other.
#[utoipa::path(
    put, path = "/users/{id}/reposts/{post_id}", tag = "posts", params(RepostPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Reposted", body = RepostJson),
        (status = 409, description = "`cannot_repost_own`", body = ErrorBody),
        (status = 503, description = "`unavailable`, `read_only`", body = ErrorBody),
        InvalidUserOrPostId, Blocked, UserOrPostNotFound,
    )
)]
async fn repost(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<RepostJson>, ApiError> {
    let done = ingest.repost(&caller, &id, &post, true).await?;
    Ok(axum::Json(RepostJson {
        reposted: true,
        changed: done.changed,
    }))
}

/// Undoes the repost (idempotent): it leaves the timelines it brought the
/// post into (the post stays where its author, or another repost, placed
/// it), and the count drops by one.
#[utoipa::path(
    delete, path = "/users/{id}/reposts/{post_id}", tag = "posts", params(RepostPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not reposted", body = RepostJson),
        (status = 503, description = "`unavailable`, `read_only`", body = ErrorBody),
        InvalidUserOrPostId, UserNotFound,
    )
)]
async fn unrepost(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<RepostJson>, ApiError> {
    let done = ingest.repost(&caller, &id, &post, false).await?;
    Ok(axum::Json(RepostJson {
        reposted: false,
        changed: done.changed,
    }))
}
