//! Following and unfollowing many accounts in one call, over REST
//! (`POST /users/{id}/following`) and gRPC (`ChangeFollows`): each edge is
//! changed as one follow or unfollow is (`Ingest::change_edges`), and each
//! gets its own answer, the edge after it or the error that refused it.

use crate::auth::{grpc_parts, Auth};
use crate::error::{status_of, to_status};
use crate::extract::{Json, Path};
use crate::schema::{ErrorBody, UserPath};
use crate::{json, ApiError};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use socialite_core::checks::{EdgeOp, EdgeRequest, EdgeTransition};
use socialite_core::error::{Error, Result};
use socialite_core::ingest::Ingest;
use socialite_domain::graph::relations::FollowOption;
use socialite_proto::v1 as pb;
use std::sync::Arc;
use utoipa::ToSchema;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct EdgesBody {
    /// 1 to 100 edges, changed in order.
    #[schema(min_items = 1, max_items = 100)]
    edges: Vec<EdgeBody>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct EdgeBody {
    /// The account to follow or unfollow.
    #[schema(example = "bob")]
    target: String,
    /// `false` unfollows; `true`, the default, follows.
    #[serde(default = "follows")]
    follow: bool,
    /// A follow's lists, replacing those the account is filed under;
    /// absent keeps them. At most 8 names of 1 to 32 characters of
    /// `[A-Za-z0-9_-]`.
    #[schema(max_items = 8, example = json!(["work"]))]
    lists: Option<Vec<String>>,
    /// A follow's options, as on `PUT /users/{id}/following/{target}`;
    /// each absent keeps it.
    reposts: Option<bool>,
    replies: Option<bool>,
    notify: Option<bool>,
}

fn follows() -> bool {
    true
}

/// One answer per edge, in the order asked.
#[derive(Serialize, ToSchema)]
pub(super) struct EdgesJson {
    results: Vec<EdgeResultJson>,
}

/// The edge after its change, or why it was refused (`error`, with the
/// HTTP status one follow or unfollow of it would have answered).
#[derive(Serialize, ToSchema)]
struct EdgeResultJson {
    target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    following: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>)]
    lists: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<crate::schema::ErrorDetail>,
}

/// An edge asked for: its target, whether it follows, its lists and the
/// follow options it sets (`reposts`, `replies`, `notify`).
type Asked = (String, bool, Option<Vec<String>>, [Option<bool>; 3]);

fn requests(edges: impl Iterator<Item = Asked>) -> Vec<EdgeRequest> {
    edges
        .map(
            |(target, follow, lists, [reposts, replies, notify])| EdgeRequest {
                target,
                op: if follow {
                    EdgeOp::Follow
                } else {
                    EdgeOp::Unfollow
                },
                lists: lists.filter(|_| follow),
                options: match follow {
                    true => FollowOption::changes(reposts, replies, notify),
                    false => Vec::new(),
                },
            },
        )
        .collect()
}

fn lists_of(t: &EdgeTransition) -> Vec<String> {
    json::names(t.after.as_deref().unwrap_or_default())
}

fn result_json(target: String, result: Result<(EdgeTransition, bool)>) -> EdgeResultJson {
    let mut out = EdgeResultJson {
        target,
        following: None,
        changed: None,
        lists: None,
        status: None,
        error: None,
    };
    match result {
        Ok((t, options_changed)) => {
            out.following = Some(t.after.is_some());
            out.changed = Some(t.changed() || options_changed);
            out.lists = Some(lists_of(&t));
        }
        Err(e) => {
            out.status = Some(status_of(e.kind()).as_u16());
            out.error = Some(detail(&e));
        }
    }
    out
}

fn detail(e: &Error) -> crate::schema::ErrorDetail {
    crate::schema::ErrorDetail {
        code: e.code(),
        message: e.message().to_owned(),
        request_id: None,
    }
}

/// Follows and unfollows many accounts as the user, in order: each edge as
/// one `PUT` or `DELETE /users/{id}/following/{target}` changes it, with the
/// same checks and events, and its own answer. A refused edge does not stop
/// the others.
#[utoipa::path(
    post, path = "/users/{id}/following", tag = "graph", params(UserPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = EdgesBody, content_type = "application/json"),
    responses(
        (status = 200, description = "One answer per edge: the edge after it, or its `error` and `status`", body = EdgesJson),
        (status = 400, description = "`invalid_user_id`, `invalid_edge_count`: 1 to 100 edges, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 403, description = "`forbidden`: the caller may not act as the user; `account_suspended`", body = ErrorBody),
    )
)]
pub(super) async fn change_follows(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Json(body): Json<EdgesBody>,
) -> std::result::Result<Response, ApiError> {
    let edges = requests(body.edges.into_iter().map(|e| {
        (
            e.target,
            e.follow,
            e.lists,
            [e.reposts, e.replies, e.notify],
        )
    }));
    let results = ingest.change_edges(&caller, &id, &edges).await?;
    let results = edges
        .into_iter()
        .zip(results)
        .map(|(e, r)| result_json(e.target, r))
        .collect();
    Ok(axum::Json(EdgesJson { results }).into_response())
}

/// The gRPC `ChangeFollows`.
pub(super) async fn change_follows_grpc(
    ingest: &Ingest,
    req: tonic::Request<pb::ChangeFollowsRequest>,
) -> std::result::Result<tonic::Response<pb::ChangeFollowsReply>, tonic::Status> {
    let (caller, r) = grpc_parts(req);
    let asked = r.edges.into_iter().map(|e| {
        let lists = e.set_lists.then_some(e.lists);
        (
            e.target,
            !e.unfollow,
            lists,
            [e.reposts, e.replies, e.notify],
        )
    });
    let edges = requests(asked);
    let results = ingest
        .change_edges(&caller, &r.user, &edges)
        .await
        .map_err(to_status)?;
    let results = edges
        .into_iter()
        .zip(results)
        .map(|(e, r)| {
            let outcome = match r {
                Ok((t, options_changed)) => pb::edge_result::Outcome::Edge(pb::FollowReply {
                    changed: t.changed() || options_changed,
                    following: t.after.is_some(),
                    lists: lists_of(&t),
                }),
                Err(err) => pb::edge_result::Outcome::Error(pb::EdgeError {
                    code: err.code().to_owned(),
                    message: err.message().to_owned(),
                    grpc_code: to_status(err).code() as i32,
                }),
            };
            pb::EdgeResult {
                target: e.target,
                outcome: Some(outcome),
            }
        })
        .collect();
    Ok(tonic::Response::new(pb::ChangeFollowsReply { results }))
}
