//! REST routes of what readers keep and follow: a post's likers and
//! thread, and a user's markers.

use crate::auth::Auth;
use crate::extract::{PageParams, Path, Query};
use crate::json::{LikerPageJson, MarkersJson, ThreadJson};
use crate::responses::{InvalidUserId, NotYourViewer, UserNotFound};
use crate::schema::{ErrorBody, PostPath, ThreadQuery, UserPageQuery, UserPath, ViewerQuery};
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
        .routes(routes!(likers))
        .routes(routes!(thread))
        .routes(routes!(markers))
}

/// The post's thread: the posts it answers (`ancestors`, root first, at
/// most 50), the post, and its direct replies oldest first, a page at a
/// time; every post with its counts (`replies` tells which replies have a
/// thread of their own). What the viewer's mutes and blocks hide is left
/// out; a repost's id stands for its post. The post itself answers as
/// `GET /posts/{id}` does: 404 across a block, not for a mute.
#[utoipa::path(
    get, path = "/posts/{id}/thread", tag = "posts", params(PostPath, ThreadQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The thread", body = ThreadJson),
        (status = 400, description = "`invalid_post_id`, `invalid_user_id`, `invalid_limit`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`post_not_found`, `user_not_found`: the viewer", body = ErrorBody),
        NotYourViewer,
    )
)]
async fn thread(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let thread = reads
        .thread(&caller, &id, q.viewer(), q.limit, q.cursor())
        .await?;
    Ok(Json(json::thread(&thread)).into_response())
}

/// Who likes the post, newest like first (stable under concurrent likes:
/// the cursor is the last like's time and id).
#[utoipa::path(
    get, path = "/posts/{id}/likes", tag = "posts", params(PostPath, UserPageQuery, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of likers", body = LikerPageJson),
        (status = 400, description = "`invalid_post_id`, `invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`post_not_found`: none, or hidden from the viewer as `GET /posts/{id}` says", body = ErrorBody),
        NotYourViewer,
    )
)]
async fn likers(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads
        .likers(&caller, &id, q.viewer(), q.limit, q.cursor())
        .await?;
    Ok(Json(json::liker_page(&page)).into_response())
}

/// The user's markers: where they stopped reading each timeline.
#[utoipa::path(
    get, path = "/users/{id}/markers", tag = "timelines", params(UserPath),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "The markers", body = MarkersJson),
        InvalidUserId, UserNotFound,
    )
)]
async fn markers(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let held = reads.markers(&caller, &id).await?;
    let markers = held.iter().map(json::marker).collect();
    Ok(Json(MarkersJson { markers }).into_response())
}
