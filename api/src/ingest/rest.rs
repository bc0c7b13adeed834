//! REST routes of ingestion.

use crate::auth::Auth;
use crate::extract::{optional_json_body, Json, Path};
use crate::json::{FollowJson, MemberJson, PostJson, RelationJson, UserJson};
use crate::responses::{EitherUserNotFound, InvalidUserId, UserNotFound};
use crate::schema::{EdgePath, ErrorBody, MemberPath, PostPath, RelationPath, UserPath};
use crate::{json, ApiError};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use socialite_core::checks::EdgeTransition;
use socialite_core::ingest::Ingest;
use socialite_core::model::rfc3339_ms;
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::{FollowOption, Relation};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

/// The routes and their contract, before the state is given.
pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new()
        .routes(routes!(put_user, delete_user))
        .routes(routes!(follow, unfollow))
        .routes(routes!(super::bulk::change_follows))
        .routes(routes!(mute, unmute))
        .routes(routes!(block, unblock))
        .routes(routes!(join_group, leave_group))
        .routes(routes!(create_post))
        .routes(routes!(delete_post))
        .merge(super::likes::rest_router())
        .merge(super::lists::rest_router())
        .merge(super::reposts::rest_router())
        .merge(super::markers::rest_router())
        .merge(super::preferences::rest_router())
        .merge(crate::bookmarks::rest::ingest_router())
        .merge(crate::filters::rest::ingest_router())
        .merge(crate::thread_mutes::ingest_router())
        .merge(super::moderation::rest_router())
}

pub fn rest_routes(ingest: Arc<Ingest>) -> OpenApiRouter {
    rest_router().with_state(ingest)
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct PutUserBody {
    /// Any JSON object of at most 16 KiB; absent keeps the current profile.
    #[schema(value_type = Option<Object>)]
    profile: Option<Value>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct MuteBody {
    /// Seconds until the mute ends by itself (1 to 31,622,400: a year);
    /// absent: it lasts until lifted.
    #[schema(minimum = 1, maximum = 31_622_400, example = 86_400)]
    expires_in: Option<u64>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct FollowBody {
    /// The lists to file the account under, replacing those it is filed
    /// under; absent keeps them. At most 8 names of 1 to 32 characters of
    /// `[A-Za-z0-9_-]`; a user has at most 50 lists.
    #[schema(max_items = 8, example = json!(["work"]))]
    lists: Option<Vec<String>>,
    /// Show this account's reposts (a follow shows them); absent keeps the
    /// setting.
    reposts: Option<bool>,
    /// Show all of this account's replies, also to accounts you do not
    /// follow (a follow shows only those the replies rule lets through);
    /// absent keeps the setting.
    replies: Option<bool>,
    /// A notification when this account posts or replies; absent keeps the
    /// setting.
    notify: Option<bool>,
}

impl FollowBody {
    /// The follow options the body turns on or off.
    fn options(&self) -> Vec<(FollowOption, bool)> {
        FollowOption::changes(self.reposts, self.replies, self.notify)
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CreatePostBody {
    /// 1 to 4096 bytes of UTF-8, not blank. `@id` mentions a user (at most
    /// 10 distinct `@id`s per message).
    #[schema(min_length = 1, max_length = 4096, example = "hello @bob")]
    message: String,
    /// Any JSON object of at most 16 KiB, returned with the post.
    #[schema(value_type = Option<Object>)]
    data: Option<Value>,
    /// A reply: the post it answers (16 hex digits). It reaches the home
    /// timelines of the author's followers who also follow the author
    /// answered, and counts in that post's `replies`.
    #[schema(pattern = "^[0-9A-Fa-f]{16}$", example = "0550f1a2b3c40000")]
    in_reply_to: Option<String>,
}

/// Creates the user (201) or replaces their profile (200). The body is
/// optional. A caller that may not read users (a `write`-only key) gets
/// back the id and the profile it sent, with counts of 0.
#[utoipa::path(
    put, path = "/users/{id}", tag = "users", params(UserPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = Option<PutUserBody>, content_type = "application/json"),
    responses(
        (status = 201, description = "Created", body = UserJson),
        (status = 200, description = "Profile replaced", body = UserJson),
        (status = 400, description = "`invalid_user_id`, `invalid_json`, `invalid_body`, `invalid_json_field`, `json_field_too_large`", body = ErrorBody),
        (status = 403, description = "`account_suspended`: the id is suspended; `missing_scope`, `not_your_account`", body = ErrorBody),
        (status = 409, description = "`user_being_deleted`: the id's earlier user was still being deleted after 5 s", body = ErrorBody),
    )
)]
async fn put_user(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: Option<PutUserBody> = optional_json_body(&headers, &body)?;
    let (user, created) = ingest
        .put_user(&caller, &id, body.and_then(|b| b.profile))
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(json::user(&user))).into_response())
}

/// Deletes the user, their posts and their edges; their posts leave every
/// timeline. The user is gone at once; a large account's edges and posts go
/// in bounded steps before this answers, and a crash midway resumes them.
#[utoipa::path(
    delete, path = "/users/{id}", tag = "users", params(UserPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 204, description = "Deleted"),
        InvalidUserId, UserNotFound,
    )
)]
async fn delete_user(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    ingest.delete_user(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Follows `target` (idempotent), filed under the body's `lists` when it
/// names them (the body is optional; sending it again refiles the
/// account); their recent posts are copied into the follower's home
/// timeline and those lists.
#[utoipa::path(
    put, path = "/users/{id}/following/{target}", tag = "graph", params(EdgePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = Option<FollowBody>, content_type = "application/json"),
    responses(
        (status = 200, description = "Following", body = FollowJson),
        (status = 400, description = "`invalid_user_id`, `invalid_list_name`, `too_many_lists`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 403, description = "`blocked`: one of the two blocks the other", body = ErrorBody),
        (status = 409, description = "`cannot_follow_self`, `too_many_lists`: the user would have more than 50 lists", body = ErrorBody),
        EitherUserNotFound,
    )
)]
async fn follow(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, target)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: Option<FollowBody> = optional_json_body(&headers, &body)?;
    let options = body.as_ref().map(FollowBody::options).unwrap_or_default();
    let lists = body.and_then(|b| b.lists);
    let names: Option<Vec<&str>> = lists
        .as_ref()
        .map(|l| l.iter().map(String::as_str).collect());
    let (t, options_changed) = ingest
        .follow_with_options(&caller, &id, &target, names.as_deref(), &options)
        .await?;
    let mut reply = edge_json(&t);
    reply.changed |= options_changed;
    Ok(axum::Json(reply).into_response())
}

/// Unfollows `target` (idempotent); their posts leave the follower's
/// timeline.
#[utoipa::path(
    delete, path = "/users/{id}/following/{target}", tag = "graph", params(EdgePath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not following", body = FollowJson),
        InvalidUserId, EitherUserNotFound,
    )
)]
async fn unfollow(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let t = ingest.unfollow(&caller, &id, &target).await?;
    Ok(edge_reply(&t))
}

fn edge_reply(t: &EdgeTransition) -> Response {
    axum::Json(edge_json(t)).into_response()
}

fn edge_json(t: &EdgeTransition) -> FollowJson {
    FollowJson {
        following: t.after.is_some(),
        changed: t.changed(),
        lists: json::names(t.after.as_deref().unwrap_or_default()),
    }
}

/// Mutes `target` (idempotent): their posts leave the user's home, list
/// and group timelines and are no longer delivered there; the follow edge
/// stays. With `expires_in` (the body is optional) the mute ends by itself
/// then (within about a second), and the account's posts come back as
/// after an unmute; muting again replaces the end (no `expires_in`: for
/// good). A user mutes at most 1,000 accounts.
#[utoipa::path(
    put, path = "/users/{id}/mutes/{target}", tag = "graph", params(RelationPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = Option<MuteBody>, content_type = "application/json"),
    responses(
        (status = 200, description = "Muting", body = RelationJson),
        (status = 400, description = "`invalid_user_id`, `invalid_expires_in`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 409, description = "`cannot_mute_self`, `too_many_relations`", body = ErrorBody),
        EitherUserNotFound,
    )
)]
async fn mute(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, target)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let body: Option<MuteBody> = optional_json_body(&headers, &body)?;
    let Some(expires_in) = body.and_then(|b| b.expires_in) else {
        return relation(&ingest, &caller, &id, &target, Relation::Mute, true).await;
    };
    let (t, until) = ingest.mute_for(&caller, &id, &target, expires_in).await?;
    Ok(axum::Json(RelationJson {
        active: t.active,
        changed: t.changed,
        expires_at: Some(rfc3339_ms(until)),
    })
    .into_response())
}

/// Lifts the mute (idempotent): the target's recent posts come back into
/// the timelines that follow them, within what those timelines store.
#[utoipa::path(
    delete, path = "/users/{id}/mutes/{target}", tag = "graph", params(RelationPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not muting", body = RelationJson),
        InvalidUserId, EitherUserNotFound,
    )
)]
async fn unmute(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    relation(&ingest, &caller, &id, &target, Relation::Mute, false).await
}

/// Blocks `target` (idempotent): what a mute does, both ways, and the
/// follow edges between the two go both ways (counts move); neither can
/// follow the other (403 `blocked`) and neither's posts appear in the
/// other's mentions. A user blocks at most 1,000 accounts.
#[utoipa::path(
    put, path = "/users/{id}/blocks/{target}", tag = "graph", params(RelationPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Blocking", body = RelationJson),
        (status = 409, description = "`cannot_block_self`, `too_many_relations`", body = ErrorBody),
        InvalidUserId, EitherUserNotFound,
    )
)]
async fn block(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    relation(&ingest, &caller, &id, &target, Relation::Block, true).await
}

/// Lifts the block (idempotent); the edges it removed stay removed.
#[utoipa::path(
    delete, path = "/users/{id}/blocks/{target}", tag = "graph", params(RelationPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not blocking", body = RelationJson),
        InvalidUserId, EitherUserNotFound,
    )
)]
async fn unblock(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, target)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    relation(&ingest, &caller, &id, &target, Relation::Block, false).await
}

async fn relation(
    ingest: &Ingest,
    caller: &Caller,
    id: &str,
    target: &str,
    kind: Relation,
    make: bool,
) -> Result<Response, ApiError> {
    let t = ingest.relation(caller, id, target, kind, make).await?;
    Ok(axum::Json(RelationJson {
        active: t.active,
        changed: t.changed,
        expires_at: None,
    })
    .into_response())
}

/// Joins the group (idempotent); the user's recent posts enter its
/// timeline. A group exists while it has members. A user is in at most 100
/// groups.
#[utoipa::path(
    put, path = "/groups/{group}/members/{id}", tag = "groups", params(MemberPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A member", body = MemberJson),
        (status = 400, description = "`invalid_group_name`, `invalid_user_id`", body = ErrorBody),
        (status = 409, description = "`too_many_groups`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn join_group(
    State(ingest): App,
    Auth(caller): Auth,
    Path((group, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let changed = ingest.membership(&caller, &group, &id, true).await?;
    Ok(axum::Json(MemberJson {
        member: true,
        changed,
    })
    .into_response())
}

/// Leaves the group (idempotent); the user's posts leave its timeline.
#[utoipa::path(
    delete, path = "/groups/{group}/members/{id}", tag = "groups", params(MemberPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Not a member", body = MemberJson),
        (status = 400, description = "`invalid_group_name`, `invalid_user_id`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn leave_group(
    State(ingest): App,
    Auth(caller): Auth,
    Path((group, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let changed = ingest.membership(&caller, &group, &id, false).await?;
    Ok(axum::Json(MemberJson {
        member: false,
        changed,
    })
    .into_response())
}

/// Posts as the user; followers' timelines receive it. With `in_reply_to`,
/// a reply: refused while the user or the author answered blocks the other.
#[utoipa::path(
    post, path = "/users/{id}/posts", tag = "posts", params(UserPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = CreatePostBody, content_type = "application/json"),
    responses(
        (status = 201, description = "Created; `Location: /posts/{id}`", body = PostJson),
        (status = 400, description = "`invalid_user_id`, `invalid_json`, `invalid_body`, `empty_message`, `message_too_long`, `control_character`, `too_many_mentions`, `invalid_json_field`, `json_field_too_large`, `invalid_post_id`", body = ErrorBody),
        (status = 403, description = "`blocked`: a reply, and the user or the author answered blocks the other", body = ErrorBody),
        (status = 404, description = "`user_not_found`, `post_not_found`: the post answered", body = ErrorBody),
        (status = 409, description = "`post_id_taken`: every new id tried was held by a post stored under an id ahead of the clock (by an older version); retry later", body = ErrorBody),
    )
)]
async fn create_post(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Json(body): Json<CreatePostBody>,
) -> Result<Response, ApiError> {
    let post = ingest
        .create_reply(
            &caller,
            &id,
            body.message,
            body.data,
            body.in_reply_to.as_deref(),
        )
        .await?;
    let location = format!("/posts/{}", post.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json::counted_post(&post, Default::default())),
    )
        .into_response())
}

/// Deletes the post; it leaves every timeline.
#[utoipa::path(
    delete, path = "/posts/{id}", tag = "posts", params(PostPath),
    security(("api_key" = ["write"]), ("api_key" = ["admin"]), ("user_token" = ["author"])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`invalid_post_id`", body = ErrorBody),
        (status = 404, description = "`post_not_found`", body = ErrorBody),
    )
)]
async fn delete_post(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    ingest.delete_post(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
