//! REST routes of bookmarks: a user bookmarks a post, removes the
//! bookmark, and pages through their bookmarks.

use crate::auth::Auth;
use crate::extract::{PageParams, Path, Query};
use crate::responses::{InvalidUserOrPostId, UserNotFound, UserOrPostNotFound};
use crate::schema::{ErrorBody, LikePath, UserPageQuery, UserPath};
use crate::{json, ApiError};
use axum::extract::{FromRef, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use socialite_core::ingest::Ingest;
use socialite_core::model::{rfc3339_ms, Page, Post};
use socialite_core::reads::Reads;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The writes, served with the ingest routes.
pub fn ingest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new().routes(routes!(bookmark, unbookmark))
}

/// The read, served with the read routes (whatever their state, as long
/// as it holds the reads).
pub fn reads_router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Reads>: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(bookmarks))
}

/// Whether the post is bookmarked afterwards.
#[derive(Serialize, ToSchema)]
pub struct BookmarkJson {
    bookmarked: bool,
    /// False when the request changed nothing.
    changed: bool,
}

/// A page of bookmarks, newest bookmarked first.
#[derive(Serialize, ToSchema)]
pub struct BookmarkPageJson<'a> {
    bookmarks: Vec<BookmarkEntryJson<'a>>,
    /// The `cursor` of the next page; absent on the last.
    next_cursor: Option<&'a str>,
}

/// A bookmarked post, and when it was bookmarked.
#[derive(Serialize, ToSchema)]
pub struct BookmarkEntryJson<'a> {
    post: json::PostJson<'a>,
    /// RFC 3339, UTC, milliseconds.
    #[schema(example = "2026-11-23T09:17:11.107Z")]
    bookmarked_at: String,
}

fn page_json(page: &Page<(Post, u64), String>) -> BookmarkPageJson<'_> {
    BookmarkPageJson {
        bookmarks: page
            .items
            .iter()
            .map(|(p, at)| BookmarkEntryJson {
                post: json::post(p),
                bookmarked_at: rfc3339_ms(*at),
            })
            .collect(),
        next_cursor: page.next_cursor.as_deref(),
    }
}

/// Bookmarks the post for the user (idempotent): private to the user. A
/// repost bookmarks the post it carries. A post the user may not see (its
/// author suspended, or a block between them) is `post_not_found`.
#[utoipa::path(
    put, path = "/users/{id}/bookmarks/{post_id}", tag = "posts", params(LikePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Bookmarked", body = BookmarkJson),
        (status = 409, description = "`collection_full`: the user has 10,000 bookmarks", body = ErrorBody),
        InvalidUserOrPostId, UserOrPostNotFound,
    )
)]
async fn bookmark(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<Json<BookmarkJson>, ApiError> {
    let changed = ingest.bookmark(&caller, &id, &post, true).await?;
    Ok(Json(BookmarkJson {
        bookmarked: true,
        changed,
    }))
}

/// Removes the bookmark (idempotent).
#[utoipa::path(
    delete, path = "/users/{id}/bookmarks/{post_id}", tag = "posts", params(LikePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not bookmarked", body = BookmarkJson),
        InvalidUserOrPostId, UserOrPostNotFound,
    )
)]
async fn unbookmark(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, post)): Path<(String, String)>,
) -> Result<Json<BookmarkJson>, ApiError> {
    let changed = ingest.bookmark(&caller, &id, &post, false).await?;
    Ok(Json(BookmarkJson {
        bookmarked: false,
        changed,
    }))
}

/// The user's bookmarks, newest bookmarked first, a page at a time (the
/// cursor is the page's last bookmark, so pages stay stable as bookmarks
/// are added). Only the user reads them: a user token of another user is
/// refused, a server key reads them for the user. A post hidden from the
/// user since it was bookmarked (its author suspended, a block) is left
/// out; a deleted post is no longer bookmarked.
#[utoipa::path(
    get, path = "/users/{id}/bookmarks", tag = "posts", params(UserPath, UserPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of bookmarks", body = BookmarkPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn bookmarks(
    State(reads): State<Arc<Reads>>,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads.bookmarks(&caller, &id, q.limit, q.cursor()).await?;
    Ok(Json(page_json(&page)).into_response())
}
