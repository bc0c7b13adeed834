//! The gRPC `Webhooks` service, for an `admin` key.

use super::rest::{checked_grace, checked_limit};
use crate::auth::grpc_parts;
use crate::error::to_status;
use socialite_core::webhooks::{Attempt, Edit, Endpoint, Settings, WebhookAdmin};
use socialite_proto::v1 as pb;
use socialite_proto::v1::webhooks_server::WebhooksServer;
use std::time::Duration;
use tonic::{Request, Response, Status};

/// The gRPC service name, as health checks report it.
pub const GRPC_NAME: &str = <WebhooksServer<WebhooksGrpc> as tonic::server::NamedService>::NAME;

pub fn grpc_service(admin: WebhookAdmin) -> WebhooksServer<WebhooksGrpc> {
    WebhooksServer::new(WebhooksGrpc(admin))
        .max_decoding_message_size(crate::guard::FIREHOSE_BODY_BYTES)
}

pub struct WebhooksGrpc(WebhookAdmin);

type Answer<T> = Result<Response<T>, Status>;

fn settings(s: pb::WebhookSettings) -> Settings {
    Settings {
        url: s.url,
        kinds: s.kinds,
        authors: s.authors,
        description: s.description,
        batch: s.batch.max(1),
    }
}

fn endpoint(e: Endpoint, show_secret: bool) -> pb::WebhookEndpoint {
    let off = e.state.off();
    let (disabled_reason, disabled_at_ms) =
        off.map_or((String::new(), 0), |(r, at)| (r.to_owned(), at));
    pb::WebhookEndpoint {
        id: e.id,
        settings: Some(pb::WebhookSettings {
            url: e.settings.url,
            kinds: e.settings.kinds,
            authors: e.settings.authors,
            description: e.settings.description,
            batch: e.settings.batch,
        }),
        enabled: off.is_none(),
        disabled_reason,
        disabled_at_ms,
        cursor: e.live,
        secret: if show_secret {
            e.secrets.current
        } else {
            String::new()
        },
        created_ms: e.created_ms,
        replay: e.replay.map(|r| pb::WebhookReplay {
            next: r.next,
            until: r.until,
        }),
        retry: e.retry.map(|r| pb::WebhookRetry {
            attempts: r.attempts,
            next_try_ms: r.next_try_ms,
            since_ms: r.since_ms,
        }),
    }
}

fn attempt(a: Attempt) -> pb::WebhookAttempt {
    pb::WebhookAttempt {
        seq: a.seq,
        at_ms: a.at_ms,
        message_id: a.message_id,
        from: a.from,
        to: a.to,
        events: a.events,
        replay: a.replay,
        attempt: a.attempt,
        outcome: a.outcome.as_str().into(),
        status: a.status.unwrap_or(0).into(),
        error: a.error.unwrap_or_default(),
        latency_ms: a.latency_ms,
        next_try_ms: a.next_try_ms.unwrap_or(0),
    }
}

#[tonic::async_trait]
impl pb::webhooks_server::Webhooks for WebhooksGrpc {
    async fn create(&self, req: Request<pb::WebhookSettings>) -> Answer<pb::WebhookEndpoint> {
        let (caller, r) = grpc_parts(req);
        let made = self
            .0
            .create(&caller, settings(r))
            .await
            .map_err(to_status)?;
        Ok(Response::new(endpoint(made, true)))
    }

    async fn list(&self, req: Request<pb::ListWebhooksRequest>) -> Answer<pb::WebhookList> {
        let (caller, _) = grpc_parts(req);
        let all = self.0.list(&caller).await.map_err(to_status)?;
        let endpoints = all.into_iter().map(|e| endpoint(e, false)).collect();
        Ok(Response::new(pb::WebhookList { endpoints }))
    }

    async fn get(&self, req: Request<pb::WebhookRef>) -> Answer<pb::WebhookEndpoint> {
        let (caller, r) = grpc_parts(req);
        let found = self.0.get(&caller, &r.id).await.map_err(to_status)?;
        Ok(Response::new(endpoint(found, false)))
    }

    async fn update(&self, req: Request<pb::UpdateWebhookRequest>) -> Answer<pb::WebhookEndpoint> {
        let (caller, r) = grpc_parts(req);
        let edit = Edit {
            url: r.url,
            kinds: r.set_kinds.then_some(r.kinds),
            authors: r.set_authors.then_some(r.authors),
            description: r.description,
            batch: r.batch,
            enabled: r.enabled,
        };
        let after = self
            .0
            .update(&caller, &r.id, edit)
            .await
            .map_err(to_status)?;
        Ok(Response::new(endpoint(after, false)))
    }

    async fn delete(&self, req: Request<pb::WebhookRef>) -> Answer<pb::DeleteWebhookReply> {
        let (caller, r) = grpc_parts(req);
        self.0.delete(&caller, &r.id).await.map_err(to_status)?;
        Ok(Response::new(pb::DeleteWebhookReply {}))
    }

    async fn rotate_secret(
        &self,
        req: Request<pb::RotateWebhookSecretRequest>,
    ) -> Answer<pb::WebhookEndpoint> {
        let (caller, r) = grpc_parts(req);
        WebhookAdmin::may(&caller).map_err(to_status)?;
        let grace = checked_grace(r.grace_seconds.map(Duration::from_secs)).map_err(to_status)?;
        let after = self
            .0
            .rotate(&caller, &r.id, grace)
            .await
            .map_err(to_status)?;
        Ok(Response::new(endpoint(after, true)))
    }

    async fn replay(&self, req: Request<pb::ReplayWebhookRequest>) -> Answer<pb::WebhookEndpoint> {
        let (caller, r) = grpc_parts(req);
        let until = Some(r.until.as_str()).filter(|u| !u.is_empty());
        let after = self
            .0
            .replay(&caller, &r.id, &r.from, until)
            .await
            .map_err(to_status)?;
        Ok(Response::new(endpoint(after, false)))
    }

    async fn deliveries(
        &self,
        req: Request<pb::WebhookDeliveriesRequest>,
    ) -> Answer<pb::WebhookDeliveries> {
        let (caller, r) = grpc_parts(req);
        WebhookAdmin::may(&caller).map_err(to_status)?;
        let limit = checked_limit(Some(r.limit as usize).filter(|l| *l > 0)).map_err(to_status)?;
        let before = Some(r.before).filter(|b| *b > 0);
        let found = self
            .0
            .deliveries(&caller, &r.id, before, limit)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::WebhookDeliveries {
            attempts: found.into_iter().map(attempt).collect(),
        }))
    }
}
