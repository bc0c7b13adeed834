//! The gRPC `Firehose` service: the network's public acts as a server
//! stream.

use super::state::{forward, Firehose, Out, QUEUED};
use crate::auth::{grpc_parts, Grant};
use crate::error::to_status;
use crate::guard::FIREHOSE_BODY_BYTES;
use socialite_core::firehose::filter::Filter;
use socialite_core::firehose::PublicAct;
use socialite_core::model::rfc3339_ms;
use socialite_proto::v1 as pb;
use socialite_proto::v1::firehose_server::FirehoseServer;
use std::pin::Pin;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// The gRPC service name, as health checks report it.
pub const GRPC_NAME: &str = <FirehoseServer<FirehoseGrpc> as tonic::server::NamedService>::NAME;

pub fn grpc_service(firehose: Firehose) -> FirehoseServer<FirehoseGrpc> {
    FirehoseServer::new(FirehoseGrpc(firehose)).max_decoding_message_size(FIREHOSE_BODY_BYTES)
}

pub struct FirehoseGrpc(Firehose);

type Events = Pin<Box<dyn Stream<Item = Result<pb::FirehoseEvent, Status>> + Send>>;

#[tonic::async_trait]
impl pb::firehose_server::Firehose for FirehoseGrpc {
    type SubscribeStream = Events;

    async fn subscribe(
        &self,
        req: Request<pb::FirehoseRequest>,
    ) -> Result<Response<Events>, Status> {
        let grant = req.extensions().get::<Grant>().cloned();
        let (caller, r) = grpc_parts(req);
        Firehose::may(&caller).map_err(to_status)?;
        let filter = Filter::new(
            r.kinds.iter().map(String::as_str),
            r.authors.iter().map(String::as_str),
        )
        .map_err(to_status)?;
        let cursor = Some(r.cursor.as_str()).filter(|c| !c.is_empty());
        let opened = self
            .0
            .open(&caller, cursor, filter)
            .await
            .map_err(to_status)?;
        let (tx, rx) = tokio::sync::mpsc::channel(QUEUED);
        forward(&self.0, opened, grant, tx, None, message);
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// An act, or the status the stream ends with when the server ends it.
fn message(out: Out) -> Result<pb::FirehoseEvent, Status> {
    let d = match out {
        Out::Act(d) => d,
        Out::End(e) => return Err(to_status(e)),
        // Only a WebSocket changes its filters.
        Out::Applied(_) => {
            return Ok(pb::FirehoseEvent {
                kind: "filters".into(),
                ..Default::default()
            })
        }
    };
    let mut m = pb::FirehoseEvent {
        cursor: d.cursor,
        kind: "checkpoint".into(),
        ..Default::default()
    };
    let Some(act) = d.act else {
        return Ok(m);
    };
    m.kind = act.kind().as_str().into();
    m.actor = act.actor().to_string();
    m.at = act.at_ms().map(rfc3339_ms).unwrap_or_default();
    match act {
        PublicAct::Post(p) => m.post = Some(crate::pb::post(&p)),
        PublicAct::PostDeleted { post, .. } => m.post_id = post.to_string(),
        PublicAct::Like { post, author, .. } | PublicAct::Unlike { post, author, .. } => {
            m.post_id = post.to_string();
            m.target = author.to_string();
        }
        PublicAct::Follow { target, .. } | PublicAct::Unfollow { target, .. } => {
            m.target = target.to_string()
        }
        PublicAct::Profile { profile, .. } => {
            m.profile_json = profile
                .map(|p| serde_json::Value::Object(p).to_string())
                .unwrap_or_default()
        }
        PublicAct::Account { status, .. } => m.status = status.as_str().into(),
    }
    Ok(m)
}
