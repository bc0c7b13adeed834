//! REST routes of likes: a user likes a post, or undoes it.

use crate::auth::Auth;
use crate::extract::Path;
use crate::json::LikeJson;
use crate::responses::{Blocked, InvalidUserOrPostId, UserOrPostNotFound};
use crate::schema::LikePath;
use crate::ApiError;
use axum::extract::State;
use socialite_core::ingest::Ingest;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new().routes(routes!(like, unlike))
}

/// Likes the post (idempotent): the post's `likes` count grows by one the
/// first time, and the user heads its list of likers. Refused while the
/// user or the post's author blocks the other.
#[utoipa::path(
    put, path = "/users/{id}/likes/{post_id}", tag = "posts", params(LikePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Liked", body = LikeJson),
        InvalidUserOrPostId, Blocked, UserOrPostNotFound,
    )
)]
async fn like(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<LikeJson>, ApiError> {
    let changed = ingest.like(&caller, &id, &post, true).await?;
    Ok(axum::Json(LikeJson {
        liked: true,
        changed,
    }))
}

/// Undoes the like (idempotent): the count drops by one if the user liked
/// the post.
#[utoipa::path(
    delete, path = "/users/{id}/likes/{post_id}", tag = "posts", params(LikePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not liked", body = LikeJson),
        InvalidUserOrPostId, UserOrPostNotFound,
    )
)]
async fn unlike(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<LikeJson>, ApiError> {
    let changed = ingest.like(&caller, &id, &post, false).await?;
    Ok(axum::Json(LikeJson {
        liked: false,
        changed,
    }))
}
