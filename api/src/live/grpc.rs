//! The gRPC `Live` service: the home timeline as a server stream.

use super::state::Live;
use crate::auth::grpc_parts;
use crate::error::to_status;
use crate::pb::post;
use socialite_core::live::stream::LiveStream;
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
        let (caller, r) = grpc_parts(req);
        let last = Some(r.last_event_id.as_str()).filter(|s| !s.is_empty());
        let live = &self.0;
        let mut stream = LiveStream::open(&live.hub, &live.reads, &caller, &r.user, last)
            .await
            .map_err(to_status)?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            // Ends when the client leaves, even while no event comes.
            while let Some(event) = tokio::select! {
                event = stream.next() => event,
                _ = tx.closed() => None,
            } {
                if tx.send(Ok(message(&event))).await.is_err() {
                    break;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

fn message(event: &LiveEvent) -> pb::TimelineEvent {
    let (id, kind) = match event {
        LiveEvent::Entry(p) => (p.id.to_string(), Kind::Entry(post(p))),
        LiveEvent::Retracted(id) => (String::new(), Kind::Retracted(id.to_string())),
        LiveEvent::Purged(a) => (String::new(), Kind::Purged(a.to_string())),
        LiveEvent::Reload => (String::new(), Kind::Reload(true)),
    };
    pb::TimelineEvent {
        id,
        kind: Some(kind),
    }
}
