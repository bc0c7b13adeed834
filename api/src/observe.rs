//! Request telemetry: gRPC's span and metrics per call, and what REST's
//! [`crate::front`] shares with it (joining a caller's trace, the method
//! label). Labels come from fixed sets (route templates, gRPC method names,
//! status codes).

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use prost::Message;
use socialite_core::reads_first::ReadsFirst;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tracing::Instrument;

/// With traces exported: continues the caller's trace (a W3C `traceparent`
/// header, or gRPC metadata of that name), and puts the trace id on the
/// request's log lines.
pub(crate) fn join_trace(span: &tracing::Span, headers: &axum::http::HeaderMap) {
    let Some(hooks) = socialite_core::trace::hooks() else {
        return;
    };
    let parent = headers.get("traceparent").and_then(|v| v.to_str().ok());
    if let Some(parent) = parent.map(socialite_core::trace::Trace::from_header) {
        if let Some(parent) = parent.parent() {
            (hooks.set_parent)(span, parent);
        }
    }
    if let Some(id) = (hooks.trace_id)(span) {
        span.record("trace_id", tracing::field::display(id));
    }
}

/// The method label: a client may send any method token, so anything but the
/// standard methods is `other`, keeping the series bounded.
pub(crate) fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 7] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
    ];
    KNOWN
        .iter()
        .find(|m| *m == method)
        .map_or("other", Method::as_str)
}

/// The gRPC methods there are: those the compiled descriptors define, with
/// health and reflection. Only these are metric labels.
fn known_methods() -> &'static HashSet<String> {
    static KNOWN: OnceLock<HashSet<String>> = OnceLock::new();
    KNOWN.get_or_init(|| {
        let set = prost_types::FileDescriptorSet::decode(socialite_proto::FILE_DESCRIPTOR_SET)
            .expect("the compiled descriptors decode");
        let mut known: HashSet<String> = set
            .file
            .iter()
            .flat_map(|f| {
                f.service.iter().flat_map(move |s| {
                    s.method
                        .iter()
                        .map(move |m| format!("/{}.{}/{}", f.package(), s.name(), m.name()))
                })
            })
            .collect();
        known.extend(
            [
                "/grpc.health.v1.Health/Check",
                "/grpc.health.v1.Health/Watch",
                "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            ]
            .map(str::to_owned),
        );
        known
    })
}

/// gRPC: labels by method; the code is the trailers-only `grpc-status` of a
/// failed call, `0` otherwise. A path is a label only when it is a method
/// the descriptors define and a service here implements it (any other
/// answers `UNIMPLEMENTED`, 12): clients choose paths, and labels must come
/// from a fixed set, whether or not the call was refused before routing.
/// A call of the `Reads` service tells `reads_first` how long it took.
pub async fn track_grpc(
    State(reads_first): State<Option<Arc<ReadsFirst>>>,
    req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path().to_owned();
    let ours = known_methods().contains(&path);
    let method = if ours { path.as_str() } else { "other" };
    let span = tracing::info_span!("grpc_request", %method, trace_id = tracing::field::Empty);
    join_trace(&span, req.headers());
    let start = Instant::now();
    let refused = reads_first
        .as_ref()
        .filter(|_| GRPC_CREATES.contains(&method))
        .and_then(|g| g.refuses_creates());
    let resp = match refused {
        Some(e) => {
            tokio::time::sleep(crate::guard::REFUSAL_PACE).await;
            crate::error::to_status(e).into_http()
        }
        None => next.run(req).instrument(span.clone()).await,
    };
    let code = match resp
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .map(str::parse::<u8>)
    {
        None => 0,
        Some(Ok(c)) if c <= 16 => c,
        Some(_) => 2, // UNKNOWN
    };
    let method = if ours && code != 12 {
        path
    } else {
        "other".to_owned()
    };
    let took = start.elapsed();
    if let Some(guard) = reads_first.filter(|_| method.starts_with(READS_SERVICE)) {
        guard.observe(took);
    }
    crate::metrics::transport().observe_grpc(method, &code.to_string(), took);
    span.in_scope(
        || tracing::debug!(%code, micros = start.elapsed().as_micros() as u64, "request finished"),
    );
    resp
}

/// The methods that only read.
const READS_SERVICE: &str = "/socialite.v1.Reads/";

/// The methods whose act always makes something, answered before their
/// credential and message are read while the reads' latency holds writes
/// back (as REST's, [`crate::front`]).
const GRPC_CREATES: [&str; 5] = [
    "/socialite.v1.Ingest/CreatePost",
    "/socialite.v1.Ingest/Like",
    "/socialite.v1.Ingest/Repost",
    "/socialite.v1.Ingest/Follow",
    "/socialite.v1.Ingest/Bookmark",
];

#[cfg(test)]
mod tests {
    #[test]
    fn only_defined_methods_are_known() {
        let known = super::known_methods();
        assert!(known.contains("/socialite.v1.Ingest/CreatePost"));
        assert!(known.contains("/socialite.v1.Live/StreamTimeline"));
        assert!(known.contains("/grpc.health.v1.Health/Check"));
        assert!(!known.contains("/socialite.v1.rX/x"));
        assert!(!known.contains("/socialite.v1.Ingest/Nope"));
    }
}
