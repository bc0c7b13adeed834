//! Logging with `tracing`: human-readable by default, JSON on request.
//! `RUST_LOG` filters (default `info`).

use tracing_subscriber::EnvFilter;

pub fn init_logging(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
