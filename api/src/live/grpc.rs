//! The gRPC `Live` service: the home timeline as a server stream.

use super::state::{self, Live, Out};
use crate::auth::{grpc_parts, Grant};
use crate::error::to_status;
use crate::pb::entry;
use socialite_core::live::LiveEvent;
use socialite_proto::v1 as pb;
use socialite_proto::v1::live_server::LiveServer;
use socialite_proto::v1::timeline_event::Kind;
use std::pin::Pin;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// The gRPC service name, as health checks report it.
pub const GRPC_NAME: &str = <LiveServer<LiveGrpc> as tonic::server::NamedService>::NAME;

pub fn grpc_service(live: Live) -> LiveServer<LiveGrpc> {
    LiveServer::new(LiveGrpc(live))
}

pub struct LiveGrpc(Live);

type Events = Pin<Box<dyn Stream<Item = Result<pb::TimelineEvent, Status>> + Send>>;

#[tonic::async_trait]
impl pb::live_server::Live for LiveGrpc {
    type StreamTimelineStream = Events;

    async fn stream_timeline(
        &self,
        req: Request<pb::StreamTimelineRequest>,
    ) -> Result<Response<Events>, Status> {
        let grant = req.extensions().get::<Grant>().cloned();
        let (caller, r) = grpc_parts(req);
        let last = Some(r.last_event_id.as_str()).filter(|s| !s.is_empty());
        let live = &self.0;
        let opened = state::open(live, &caller, &r.user, last)
            .await
            .map_err(to_status)?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        state::forward(live, opened, grant, tx, message);
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// An event, or the status the stream ends with when the server ends it.
fn message(out: Out) -> Result<pb::TimelineEvent, Status> {
    let event = match out {
        Out::Event(e) => e,
        Out::End(e) => return Err(to_status(e)),
    };
    let (id, kind) = match &event {
        LiveEvent::Entry(i) => (i.position.to_string(), Kind::Entry(entry(i))),
        LiveEvent::Retracted(id) => (String::new(), Kind::Retracted(id.to_string())),
        LiveEvent::Purged(a) => (String::new(), Kind::Purged(a.to_string())),
        LiveEvent::Reload => (String::new(), Kind::Reload(true)),
        LiveEvent::Notified(n) => (
            String::new(),
            Kind::Notification(pb::Notification {
                kind: n.key.kind.as_str().to_owned(),
                post_id: n.key.post.map(|p| p.to_string()).unwrap_or_default(),
                actors: vec![n.key.actor.to_string()],
                count: 1,
                latest_at: socialite_core::model::rfc3339_ms(n.id.unix_ms()),
                id: n.id.to_string(),
                filtered: Vec::new(),
            }),
        ),
    };
    Ok(pb::TimelineEvent {
        id,
        kind: Some(kind),
    })
}
