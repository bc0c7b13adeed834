//! The JSON of webhook endpoints and their deliveries.

use serde::{Deserialize, Serialize};
use socialite_core::model::rfc3339_ms;
use socialite_core::webhooks::{Attempt, Edit, Endpoint, Settings};
use utoipa::{IntoParams, ToSchema};

/// A new endpoint.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookBody {
    /// `http://` or `https://`, at most 2,048 characters, without
    /// credentials; its host must resolve to public addresses only (unless
    /// the operator allows internal ones).
    #[schema(example = "https://hooks.example.com/socialite")]
    url: String,
    /// Kinds of acts delivered (`post`, `post_deleted`, `like`, `unlike`,
    /// `follow`, `unfollow`, `profile`, `account`); none: all.
    #[serde(default)]
    kinds: Vec<String>,
    /// Accounts whose acts are delivered, at most 10,000; none: all.
    #[serde(default)]
    authors: Vec<String>,
    /// At most 256 characters.
    #[serde(default)]
    description: String,
    /// Most events one request carries, 1 to 100 (default 1). Above 1 a
    /// body is a batch: `{"type": "batch", "data": {"events": [...]}}`.
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 100)]
    batch: u32,
}

fn one() -> u32 {
    1
}

impl WebhookBody {
    pub(super) fn settings(self) -> Settings {
        Settings {
            url: self.url,
            kinds: self.kinds,
            authors: self.authors,
            description: self.description,
            batch: self.batch,
        }
    }
}

/// What to change; absent fields are kept.
#[derive(Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct WebhookPatch {
    url: Option<String>,
    kinds: Option<Vec<String>>,
    authors: Option<Vec<String>>,
    description: Option<String>,
    #[schema(minimum = 1, maximum = 100)]
    batch: Option<u32>,
    /// `true` turns deliveries on (a pending retry is tried at once),
    /// `false` off.
    enabled: Option<bool>,
}

impl WebhookPatch {
    pub(super) fn edit(self) -> Edit {
        Edit {
            url: self.url,
            kinds: self.kinds,
            authors: self.authors,
            description: self.description,
            batch: self.batch,
            enabled: self.enabled,
        }
    }
}

#[derive(Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct RotateBody {
    /// How long the old secret signs beside the new one, at most 7 days
    /// (604,800 s); default 24 h.
    #[schema(maximum = 604800)]
    pub grace_seconds: Option<u64>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayBody {
    /// The cursor to deliver from (a firehose or delivery cursor).
    #[schema(example = "1042")]
    pub from: String,
    /// The cursor to deliver up to (the events before it); default: where
    /// live delivery is.
    pub until: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Attempts with `seq` below this (the `seq` of the last one of a
    /// page, for the next).
    pub before: Option<u64>,
    /// 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<usize>,
}

/// A replay under way.
#[derive(Serialize, ToSchema)]
pub struct ReplayJson {
    next: String,
    until: String,
}

/// A batch that failed, waiting for its next try.
#[derive(Serialize, ToSchema)]
pub struct RetryJson {
    attempts: u32,
    next_try_at: String,
    failing_since: String,
}

/// An endpoint. `secret` appears only in the answers that make it (create,
/// rotate-secret).
#[derive(Serialize, ToSchema)]
pub struct EndpointJson {
    #[schema(example = "wh_3f2a9c01b2d4e5f6")]
    id: String,
    url: String,
    kinds: Vec<String>,
    authors: Vec<String>,
    description: String,
    batch: u32,
    enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    disabled_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    disabled_at: Option<String>,
    /// The cursor of the next event to deliver.
    cursor: String,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<ReplayJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry: Option<RetryJson>,
    /// The signing secret (`whsec_...`): keep it; it is not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

impl EndpointJson {
    /// The endpoint, with its secret only when `show_secret`.
    pub(super) fn of(e: Endpoint, show_secret: bool) -> EndpointJson {
        let off = e.state.off();
        let (disabled_reason, disabled_at) = (
            off.map(|(reason, _)| reason.to_owned()),
            off.map(|(_, at)| rfc3339_ms(at)),
        );
        EndpointJson {
            id: e.id,
            url: e.settings.url,
            kinds: e.settings.kinds,
            authors: e.settings.authors,
            description: e.settings.description,
            batch: e.settings.batch,
            enabled: off.is_none(),
            disabled_reason,
            disabled_at,
            cursor: e.live,
            created_at: rfc3339_ms(e.created_ms),
            replay: e.replay.map(|r| ReplayJson {
                next: r.next,
                until: r.until,
            }),
            retry: e.retry.map(|r| RetryJson {
                attempts: r.attempts,
                next_try_at: rfc3339_ms(r.next_try_ms),
                failing_since: rfc3339_ms(r.since_ms),
            }),
            secret: show_secret.then_some(e.secrets.current),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct EndpointListJson {
    pub endpoints: Vec<EndpointJson>,
}

/// One delivery attempt.
#[derive(Serialize, ToSchema)]
pub struct AttemptJson {
    /// Orders the attempts (`before` pages by it).
    seq: u64,
    at: String,
    /// The `webhook-id` sent (the same on every try of a batch).
    message_id: String,
    /// The cursor before the batch's first event, and after its last.
    from: String,
    to: String,
    events: u32,
    replay: bool,
    /// 1 for the first try.
    attempt: u32,
    /// `delivered`, `retrying`, `exhausted` (tries ran out: turned off),
    /// `gone` (410: turned off) or `skipped` (events no longer on the log).
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    latency_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_try_at: Option<String>,
}

impl From<Attempt> for AttemptJson {
    fn from(a: Attempt) -> AttemptJson {
        AttemptJson {
            seq: a.seq,
            at: rfc3339_ms(a.at_ms),
            message_id: a.message_id,
            from: a.from,
            to: a.to,
            events: a.events,
            replay: a.replay,
            attempt: a.attempt,
            outcome: a.outcome.as_str(),
            status: a.status,
            error: a.error,
            latency_ms: a.latency_ms,
            next_try_at: a.next_try_ms.map(rfc3339_ms),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct DeliveriesJson {
    pub deliveries: Vec<AttemptJson>,
}
