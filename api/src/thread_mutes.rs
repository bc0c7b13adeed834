//! Muted threads over REST (`/users/{id}/muted-threads`) and gRPC
//! (`MuteThread`, `UnmuteThread` of the ingest service, `ListMutedThreads`
//! of the reads service), mapped onto `socialite_core::notifications`.

use crate::auth::{grpc_parts, Auth};
use crate::error::to_status;
use crate::extract::{Path, Query};
use crate::responses::{InvalidUserOrPostId, UserNotFound, UserOrPostNotFound};
use crate::schema::{ErrorBody, ThreadPath, UserPageQuery, UserPath};
use crate::ApiError;
use axum::extract::{FromRef, State};
use serde::{Deserialize, Serialize};
use socialite_core::ids::PostId;
use socialite_core::ingest::Ingest;
use socialite_core::model::Page;
use socialite_core::reads::Reads;
use socialite_proto::v1 as pb;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The writes, served with the ingest routes.
pub fn ingest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new().routes(routes!(mute_thread, unmute_thread))
}

/// The reads, served with the read routes.
pub fn reads_router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Reads>: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(muted_threads))
}

/// Whether the thread is muted after the request, whether the request
/// changed it, and the thread's first post, which names it.
#[derive(Serialize, ToSchema)]
pub struct ThreadMuteJson {
    pub muted: bool,
    pub changed: bool,
    #[schema(example = "0550f1a2b3c40000")]
    pub thread: String,
}

/// A page of the threads a user muted (their first posts), in id order.
#[derive(Serialize, ToSchema)]
pub struct ThreadPageJson {
    pub threads: Vec<String>,
    pub next_cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageParams {
    limit: Option<u64>,
    cursor: Option<String>,
}

fn page_json(page: Page<PostId, String>) -> ThreadPageJson {
    ThreadPageJson {
        threads: page.items.iter().map(PostId::to_string).collect(),
        next_cursor: page.next_cursor,
    }
}

/// Mutes the thread of `post_id` for the user's notifications
/// (idempotent): from now on its replies, the likes and reposts of its
/// posts and the mentions in them notify the user no more (live streams
/// included); what they notified before stays. A thread is named by its
/// first post, found by going up the replies from `post_id` (at most 50
/// posts; one deleted since ends the chain at its id). A user mutes at
/// most 1,000 threads.
#[utoipa::path(
    put, path = "/users/{id}/muted-threads/{post_id}", tag = "timelines", params(ThreadPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Muted", body = ThreadMuteJson),
        (status = 409, description = "`too_many_thread_mutes`: the user mutes 1,000", body = ErrorBody),
        InvalidUserOrPostId, UserOrPostNotFound,
    )
)]
async fn mute_thread(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<ThreadMuteJson>, ApiError> {
    let (changed, thread) = ingest.mute_thread(&caller, &id, &post, true).await?;
    Ok(axum::Json(reply(true, changed, thread)))
}

/// Unmutes the thread of `post_id` (idempotent): it notifies the user
/// again from now on. `post_id` may name a thread whose first post is gone.
#[utoipa::path(
    delete, path = "/users/{id}/muted-threads/{post_id}", tag = "timelines", params(ThreadPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not muted", body = ThreadMuteJson),
        InvalidUserOrPostId, UserNotFound,
    )
)]
async fn unmute_thread(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<axum::Json<ThreadMuteJson>, ApiError> {
    let (changed, thread) = ingest.mute_thread(&caller, &id, &post, false).await?;
    Ok(axum::Json(reply(false, changed, thread)))
}

fn reply(muted: bool, changed: bool, thread: PostId) -> ThreadMuteJson {
    ThreadMuteJson {
        muted,
        changed,
        thread: thread.to_string(),
    }
}

/// The threads the user muted (their first posts), in id order: the
/// user's own to read.
#[utoipa::path(
    get, path = "/users/{id}/muted-threads", tag = "timelines", params(UserPath, UserPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of muted threads", body = ThreadPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_post_id` (a bad cursor), `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn muted_threads(
    State(reads): State<Arc<Reads>>,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<axum::Json<ThreadPageJson>, ApiError> {
    let cursor = q.cursor.as_deref().filter(|c| !c.is_empty());
    let page = reads.muted_threads(&caller, &id, q.limit, cursor).await?;
    Ok(axum::Json(page_json(page)))
}

/// gRPC `MuteThread` (`make`) and `UnmuteThread`.
pub async fn mute(
    ingest: &Ingest,
    req: Request<pb::ThreadMuteRequest>,
    make: bool,
) -> Result<Response<pb::ThreadMuteReply>, Status> {
    let (caller, r) = grpc_parts(req);
    let done = ingest.mute_thread(&caller, &r.user, &r.post_id, make).await;
    let (changed, thread) = done.map_err(to_status)?;
    Ok(Response::new(pb::ThreadMuteReply {
        muted: make,
        changed,
        thread: thread.to_string(),
    }))
}

/// gRPC `ListMutedThreads`.
pub async fn list(
    reads: &Reads,
    req: Request<pb::ListMutedThreadsRequest>,
) -> Result<Response<pb::ThreadList>, Status> {
    let (caller, r) = grpc_parts(req);
    let limit = (r.limit > 0).then_some(u64::from(r.limit));
    let cursor = Some(r.cursor.as_str()).filter(|c| !c.is_empty());
    let page = reads.muted_threads(&caller, &r.user, limit, cursor).await;
    let page = page_json(page.map_err(to_status)?);
    Ok(Response::new(pb::ThreadList {
        threads: page.threads,
        next_cursor: page.next_cursor.unwrap_or_default(),
    }))
}
