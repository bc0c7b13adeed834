//! REST routes of reads.

use crate::extract::{PageParams, Path, Query};
use crate::{json, ApiError};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use socialite_core::reads::{Direction, Reads};
use std::sync::Arc;

type App = State<Arc<Reads>>;

pub fn rest_routes(reads: Arc<Reads>) -> Router {
    Router::new()
        .route("/users/{id}", get(get_user))
        .route("/users/{id}/followers", get(followers))
        .route("/users/{id}/following", get(following))
        .route("/users/{id}/follower_count", get(follower_count))
        .route("/users/{id}/following_count", get(following_count))
        .route("/users/{id}/posts", get(posts_by))
        .route("/users/{id}/timeline", get(timeline))
        .route("/posts/{id}", get(get_post))
        .with_state(reads)
}

async fn get_user(State(reads): App, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(json::user(&reads.user(&id).await?)).into_response())
}

async fn followers(
    State(reads): App,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads
        .edges(&id, Direction::Followers, q.limit, q.cursor())
        .await?;
    Ok(Json(json::user_page(&page)).into_response())
}

async fn following(
    State(reads): App,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads
        .edges(&id, Direction::Following, q.limit, q.cursor())
        .await?;
    Ok(Json(json::user_page(&page)).into_response())
}

async fn follower_count(State(reads): App, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(json::count(reads.user(&id).await?.followers)).into_response())
}

async fn following_count(State(reads): App, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(json::count(reads.user(&id).await?.following)).into_response())
}

async fn posts_by(
    State(reads): App,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads.posts_by(&id, q.limit, q.before()).await?;
    Ok(Json(json::post_page(&page)).into_response())
}

/// The home timeline. `X-Timeline-Source` tells whether the cache served it
/// (`cache`), the cache and a merge below it (`past_cache`), or a read-time
/// merge (`merge`).
async fn timeline(
    State(reads): App,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let (page, source) = reads.timeline(&id, q.limit, q.before()).await?;
    let mut resp = Json(json::post_page(&page)).into_response();
    resp.headers_mut().insert(
        "x-timeline-source",
        HeaderValue::from_static(source.as_str()),
    );
    Ok(resp)
}

async fn get_post(State(reads): App, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(json::post(&reads.post(&id).await?)).into_response())
}
