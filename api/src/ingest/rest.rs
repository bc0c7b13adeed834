//! REST routes of ingestion.

use crate::extract::{optional_json_body, Json, Path};
use crate::{json, ApiError};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, post, put};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};
use socialite_core::ingest::Ingest;
use std::sync::Arc;

type App = State<Arc<Ingest>>;

pub fn rest_routes(ingest: Arc<Ingest>) -> Router {
    Router::new()
        .route("/users/{id}", put(put_user).delete(delete_user))
        .route(
            "/users/{id}/following/{target}",
            put(follow).delete(unfollow),
        )
        .route("/users/{id}/posts", post(create_post))
        .route("/posts/{id}", delete(delete_post))
        .with_state(ingest)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PutUserBody {
    profile: Option<Value>,
}

/// Creates the user (201) or replaces their profile (200). The body,
/// `{"profile": {...}}`, is optional.
async fn put_user(
    State(ingest): App,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: Option<PutUserBody> = optional_json_body(&body)?;
    let (user, created) = ingest.put_user(&id, body.and_then(|b| b.profile)).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(json::user(&user))).into_response())
}

async fn delete_user(State(ingest): App, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    ingest.delete_user(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn follow(
    State(ingest): App,
    Path((id, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let changed = ingest.follow(&id, &target).await?;
    Ok(axum::Json(json!({ "following": true, "changed": changed })).into_response())
}

async fn unfollow(
    State(ingest): App,
    Path((id, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let changed = ingest.unfollow(&id, &target).await?;
    Ok(axum::Json(json!({ "following": false, "changed": changed })).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreatePostBody {
    message: String,
    data: Option<Value>,
}

async fn create_post(
    State(ingest): App,
    Path(id): Path<String>,
    Json(body): Json<CreatePostBody>,
) -> Result<Response, ApiError> {
    let post = ingest.create_post(&id, body.message, body.data).await?;
    let location = format!("/posts/{}", post.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json::post(&post)),
    )
        .into_response())
}

async fn delete_post(State(ingest): App, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    ingest.delete_post(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
