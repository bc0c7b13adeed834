//! REST routes of moderation: suspending an account and lifting it, and
//! revoking one account's user tokens. An `admin` key only.

use crate::auth::Auth;
use crate::extract::Path;
use crate::responses::InvalidUserId;
use crate::schema::{ErrorBody, UserPath};
use crate::ApiError;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use socialite_core::ingest::Ingest;
use socialite_domain::accounts::access::Caller;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new()
        .routes(routes!(suspend, unsuspend))
        .routes(routes!(revoke_tokens))
        .routes(routes!(backup))
        .routes(routes!(read_only))
}

/// Whether the deployment takes writes, and where it was moved.
#[derive(serde::Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadOnlyJson {
    pub read_only: bool,
    /// With `read_only`: the deployment was moved to this address (no
    /// credentials), and account safety acts stop too, refused with 503
    /// `moved` naming it. 1 to 1,024 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "mongodb://db.example:27017/socialite")]
    pub moved_to: Option<String>,
}

/// Stops taking writes (`{"read_only": true}`): every write from then on is
/// refused with 503 `read_only`, and the call returns once the writes
/// already under way have finished, so a backup taken after it holds every
/// acknowledged write. Reads go on, and so do account safety acts
/// (revoking a user's tokens, suspending an account): a stolen token can be
/// revoked while a move is under way. `{"read_only": true, "moved_to":
/// ADDRESS}` marks the move final: safety acts stop too (503 `moved`,
/// naming where to act), and the call returns once those under way have
/// finished. `socialite migrate` sends the first at its switch-over and
/// the second before its very last copy, which carries every safety act
/// acknowledged before it; `{"read_only": false}` takes writes again (a
/// move called off). A data directory migrate moved starts as moved.
#[utoipa::path(
    put, path = "/admin/read-only", tag = "moderation",
    security(("api_key" = ["admin"])),
    request_body(content = ReadOnlyJson, content_type = "application/json"),
    responses(
        (status = 200, description = "Set", body = ReadOnlyJson),
        (status = 400, description = "`invalid_json`, `invalid_body` (also `moved_to` without `read_only`, or empty, over 1,024 characters, or with control characters)", body = ErrorBody),
    )
)]
async fn read_only(
    State(ingest): App,
    Auth(caller): Auth,
    crate::extract::Json(body): crate::extract::Json<ReadOnlyJson>,
) -> Result<axum::Json<ReadOnlyJson>, ApiError> {
    let moved_to = body.moved_to.as_deref();
    ingest
        .set_read_only(&caller, body.read_only, moved_to)
        .await?;
    // Echoed as it is kept: without the address's credentials.
    let moved_to = body.moved_to.as_deref().map(socialite_core::redact::uri);
    Ok(axum::Json(ReadOnlyJson { moved_to, ..body }))
}

#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupBody {
    /// The backup's name: a new directory under the server's backup
    /// directory (`DATA_DIR/backups`), 1 to 64 characters of
    /// `[A-Za-z0-9_.-]`.
    #[schema(
        example = "before-upgrade",
        pattern = r"^(?!\.{1,2}$)[A-Za-z0-9_.\-]{1,64}$"
    )]
    name: String,
    /// Only the event log's entries after this sequence, into
    /// `log-tail.redb` (a *log tail*, as `socialite migrate` takes after
    /// its first copy): no content, so not something `socialite restore`
    /// takes. Its `position.json` says whether it is `settled`: nothing
    /// was in flight towards the log when it was read, so with writes
    /// stopped it holds every acknowledged write's event. A tail takes no
    /// turn among backups and removes none; one tail is made at a time.
    #[serde(default)]
    #[schema(minimum = 0)]
    log_after: Option<u64>,
}

/// Where the backup went and how many rows it holds.
#[derive(Serialize, ToSchema)]
pub struct BackupJson {
    /// The backup's directory on the server's machine.
    pub path: String,
    pub rows: u64,
}

/// Backs the embedded stores up while the server runs: each database from
/// one snapshot, the content before the log, into a new directory under
/// `DATA_DIR/backups`, readable by its owner only (`socialite restore`
/// makes a data directory from it). Every write acknowledged before the
/// call is in it. `socialite backup` calls this. It answers when the copy
/// is made: its time limit is an hour, not the 30 s of other calls. One
/// backup is made at a time; after each, the newest `--max-backups`
/// (default 3) are kept in `DATA_DIR/backups` and older ones removed
/// (those named `migrate-…` are `socialite migrate`'s, which removes them).
#[utoipa::path(
    post, path = "/admin/backup", tag = "moderation",
    security(("api_key" = ["admin"])),
    request_body(content = BackupBody, content_type = "application/json"),
    responses(
        (status = 201, description = "Backed up", body = BackupJson),
        (status = 400, description = "`invalid_backup_name`; `invalid_backup_path`: the directory cannot be made; `backup_unsupported`: the stores are MongoDB and Kafka; `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 409, description = "`backup_exists`: a backup of that name exists; `backup_in_progress`: another backup (or, for a log tail, another tail) is being made (one at a time): ask again once it ends", body = ErrorBody),
    )
)]
async fn backup(
    State(ingest): App,
    Auth(caller): Auth,
    crate::extract::Json(body): crate::extract::Json<BackupBody>,
) -> Result<(StatusCode, axum::Json<BackupJson>), ApiError> {
    let (path, rows) = ingest.backup(&caller, &body.name, body.log_after).await?;
    let path = path.to_string_lossy().into_owned();
    Ok((StatusCode::CREATED, axum::Json(BackupJson { path, rows })))
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
/// An account safety act: taken also while writes are stopped for a move,
/// until the move is final.
#[utoipa::path(
    put, path = "/users/{id}/suspension", tag = "moderation", params(UserPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 200, description = "Suspended", body = SuspensionJson),
        (status = 503, description = "`unavailable`; `moved`: the deployment was moved (the message names where): suspend there", body = ErrorBody),
        InvalidUserId,
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
        (status = 503, description = "`unavailable`, `read_only`: writes are stopped (lifting is not a safety act)", body = ErrorBody),
        InvalidUserId,
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
/// act. Live streams opened with a revoked token end. An account safety
/// act: taken also while writes are stopped for a move, until the move is
/// final.
#[utoipa::path(
    delete, path = "/users/{id}/tokens", tag = "moderation", params(UserPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 204, description = "Revoked"),
        (status = 503, description = "`unavailable`; `moved`: the deployment was moved (the message names where): revoke there", body = ErrorBody),
        InvalidUserId,
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
