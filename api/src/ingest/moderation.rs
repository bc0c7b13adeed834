//! REST routes of moderation: suspending an account and lifting it, and
//! revoking one account's user tokens. An `admin` key only.

use crate::auth::Auth;
use crate::extract::Path;
use crate::schema::{ErrorBody, UserPath};
use crate::ApiError;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use socialite_core::ingest::Ingest;
use socialite_core::rules::access::Caller;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new()
        .routes(routes!(suspend, unsuspend))
        .routes(routes!(revoke_tokens))
}

/// Whether the account is suspended after the request, and whether the
/// request changed it.
#[derive(Serialize, ToSchema)]
pub struct SuspensionJson {
    pub suspended: bool,
    pub changed: bool,
}

/// Suspends the account (idempotent): its tokens issued so far are refused
/// (401 `token_revoked`), and it can no longer act (403
/// `account_suspended`, also to a server key acting for it); it and its
/// posts are hidden from every reader and timeline (404 to reads); its id
/// cannot be taken; its edges and the mutes and blocks on it stay. The id
/// need not exist: a deleted account's id can be kept from being taken.
#[utoipa::path(
    put, path = "/users/{id}/suspension", tag = "moderation", params(UserPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 200, description = "Suspended", body = SuspensionJson),
        (status = 400, description = "`invalid_user_id`", body = ErrorBody),
        (status = 503, description = "`unavailable`", body = ErrorBody),
    )
)]
async fn suspend(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<axum::Json<SuspensionJson>, ApiError> {
    suspension(&ingest, &caller, &id, true).await
}

/// Lifts a suspension (idempotent): the account and its posts are back
/// everywhere; tokens issued before the suspension stay refused.
#[utoipa::path(
    delete, path = "/users/{id}/suspension", tag = "moderation", params(UserPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 200, description = "Not suspended", body = SuspensionJson),
        (status = 400, description = "`invalid_user_id`", body = ErrorBody),
        (status = 503, description = "`unavailable`", body = ErrorBody),
    )
)]
async fn unsuspend(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<axum::Json<SuspensionJson>, ApiError> {
    suspension(&ingest, &caller, &id, false).await
}

async fn suspension(
    ingest: &Ingest,
    caller: &Caller,
    id: &str,
    on: bool,
) -> Result<axum::Json<SuspensionJson>, ApiError> {
    let changed = ingest.suspend(caller, id, on).await?;
    Ok(axum::Json(SuspensionJson {
        suspended: on,
        changed,
    }))
}

/// Revokes every user token of the account issued up to now (and in this
/// second), on every replica within a second; tokens minted afterwards
/// act. Live streams opened with a revoked token end.
#[utoipa::path(
    delete, path = "/users/{id}/tokens", tag = "moderation", params(UserPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, description = "`invalid_user_id`", body = ErrorBody),
        (status = 503, description = "`unavailable`", body = ErrorBody),
    )
)]
async fn revoke_tokens(
    State(ingest): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    ingest.revoke_tokens(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
