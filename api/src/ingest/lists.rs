//! REST and gRPC of a list's setting: marking it exclusive (its accounts
//! leave the owner's home timeline and are read in the list only).

use crate::auth::{grpc_parts, Auth};
use crate::error::to_status;
use crate::extract::{Json, Path};
use crate::schema::{ErrorBody, ListPath};
use crate::ApiError;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use socialite_core::ingest::Ingest;
use socialite_proto::v1 as pb;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new().routes(routes!(set_list))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListBody {
    /// Take the accounts filed under the list out of the home timeline
    /// (read in the list only), or put them back.
    exclusive: bool,
}

/// A list's setting after the request, and whether the request changed it.
#[derive(Serialize, ToSchema)]
pub struct ListSettingJson {
    #[schema(example = "work")]
    pub list: String,
    pub exclusive: bool,
    pub changed: bool,
}

/// Marks the list exclusive, or not (idempotent): the accounts filed under
/// an exclusive list leave the user's home timeline (every feed model,
/// entries stored already included, and the live home stream) from the
/// next read, and are read in the list's own timeline, which keeps them.
/// Refiling an account in or out of the list moves it too. The list must
/// exist (an account filed under it) to be marked; the mark stays while it
/// empties. At most 50 lists marked.
#[utoipa::path(
    put, path = "/users/{id}/lists/{list}", tag = "graph", params(ListPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = ListBody, content_type = "application/json"),
    responses(
        (status = 200, description = "Set", body = ListSettingJson),
        (status = 400, description = "`invalid_user_id`, `invalid_list_name`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 404, description = "`user_not_found`, `list_not_found`: no account is filed under it", body = ErrorBody),
        (status = 409, description = "`too_many_lists`: the user marks 50", body = ErrorBody),
    )
)]
async fn set_list(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, list)): Path<(String, String)>,
    Json(body): Json<ListBody>,
) -> Result<axum::Json<ListSettingJson>, ApiError> {
    let changed = ingest
        .set_list_exclusive(&caller, &id, &list, body.exclusive)
        .await?;
    Ok(axum::Json(ListSettingJson {
        list,
        exclusive: body.exclusive,
        changed,
    }))
}

/// gRPC `SetListExclusive`.
pub async fn set_exclusive(
    ingest: &Ingest,
    req: Request<pb::ListExclusiveRequest>,
) -> Result<Response<pb::ListExclusiveReply>, Status> {
    let (caller, r) = grpc_parts(req);
    let changed = ingest.set_list_exclusive(&caller, &r.user, &r.list, r.exclusive);
    let changed = changed.await.map_err(to_status)?;
    Ok(Response::new(pb::ListExclusiveReply {
        exclusive: r.exclusive,
        changed,
    }))
}
