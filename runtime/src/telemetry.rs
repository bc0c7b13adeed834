//! Logs and traces. Logs go through `tracing`: human-readable by default,
//! JSON on request, `RUST_LOG` filters (default `info`). With an OTLP
//! endpoint, Socialite's spans are also exported as OpenTelemetry traces
//! (gRPC, batched), and the core's trace hooks are installed, so a post's
//! trace context rides with its event from the producer to the workers.

use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry::Context;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use std::sync::OnceLock;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The exporter's provider, flushed when the process ends.
static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Starts logging, and trace export when `otlp_endpoint` is set (an
/// `http://host:port` OTLP/gRPC receiver), naming the process `service`.
/// Runs inside the Tokio runtime (the exporter's client needs it).
pub fn init(service: &str, json: bool, otlp_endpoint: Option<&str>) -> Result<(), String> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let fmt = if json {
        fmt.json().boxed()
    } else {
        fmt.boxed()
    };
    let traces = match otlp_endpoint {
        Some(endpoint) => Some(otlp_layer(service, endpoint)?),
        None => None,
    };
    let _ = tracing_subscriber::registry()
        .with(fmt.with_filter(filter))
        .with(traces)
        .try_init();
    Ok(())
}

/// Logging only, for commands that serve nothing.
pub fn init_logging(json: bool) {
    let _ = init("socialite", json, None);
}

fn otlp_layer<S>(service: &str, endpoint: &str) -> Result<impl Layer<S>, String>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use opentelemetry_otlp::WithExportConfig;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| format!("--otlp-endpoint {endpoint}: {e}"))?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(service.to_owned())
                .build(),
        )
        .build();
    let tracer = provider.tracer("socialite");
    let _ = PROVIDER.set(provider);
    socialite_core::trace::install(socialite_core::trace::Hooks {
        current,
        set_parent,
        link,
        trace_id,
    });
    // Socialite's own spans: not the drivers' or the HTTP stack's.
    let ours = Targets::new()
        .with_target("socialite", LevelFilter::INFO)
        .with_default(LevelFilter::OFF);
    Ok(tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(ours))
}

/// Sends the spans still buffered; called when the process ends.
pub fn flush() {
    if let Some(provider) = PROVIDER.get() {
        let _ = provider.force_flush();
    }
}

fn current() -> Option<String> {
    let cx = tracing::Span::current().context();
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        )
    })
}

/// The span context a `traceparent` names (already checked well formed).
fn remote(traceparent: &str) -> Option<SpanContext> {
    let mut parts = traceparent.split('-').skip(1);
    let trace = TraceId::from_hex(parts.next()?).ok()?;
    let span = SpanId::from_hex(parts.next()?).ok()?;
    let flags = u8::from_str_radix(parts.next()?, 16).ok()?;
    let sc = SpanContext::new(trace, span, TraceFlags::new(flags), true, TraceState::NONE);
    sc.is_valid().then_some(sc)
}

fn set_parent(span: &tracing::Span, traceparent: &str) {
    if let Some(sc) = remote(traceparent) {
        let _ = span.set_parent(Context::new().with_remote_span_context(sc));
    }
}

fn link(span: &tracing::Span, traceparent: &str) {
    if let Some(sc) = remote(traceparent) {
        span.add_link(sc);
    }
}

fn trace_id(span: &tracing::Span) -> Option<String> {
    let cx = span.context();
    let id = cx.span().span_context().trace_id();
    (id != TraceId::INVALID).then(|| id.to_string())
}
