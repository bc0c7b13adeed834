//! gRPC of bookmarks: `Bookmark` and `Unbookmark` of the ingest service,
//! `ListBookmarks` of the reads service, whose impls call these.

use crate::auth::grpc_parts;
use crate::error::to_status;
use crate::pb::{limit, optional, post};
use socialite_core::ingest::Ingest;
use socialite_core::model::rfc3339_ms;
use socialite_core::reads::Reads;
use socialite_proto::v1 as pb;
use tonic::{Request, Response, Status};

/// Bookmarks the post (`on`) or removes the bookmark.
pub async fn bookmark(
    ingest: &Ingest,
    req: Request<pb::BookmarkRequest>,
    on: bool,
) -> Result<Response<pb::BookmarkReply>, Status> {
    let (caller, r) = grpc_parts(req);
    let changed = ingest.bookmark(&caller, &r.user, &r.post_id, on).await;
    Ok(Response::new(pb::BookmarkReply {
        bookmarked: on,
        changed: changed.map_err(to_status)?,
    }))
}

/// A page of the user's bookmarks.
pub async fn list(
    reads: &Reads,
    req: Request<pb::ListBookmarksRequest>,
) -> Result<Response<pb::BookmarkList>, Status> {
    let (caller, r) = grpc_parts(req);
    let page = reads.bookmarks(&caller, &r.user, limit(r.limit), optional(&r.cursor));
    let page = page.await.map_err(to_status)?;
    Ok(Response::new(pb::BookmarkList {
        bookmarked_at: page.items.iter().map(|(_, at)| rfc3339_ms(*at)).collect(),
        posts: page.items.iter().map(|(p, _)| post(p)).collect(),
        next_cursor: page.next_cursor.unwrap_or_default(),
    }))
}
