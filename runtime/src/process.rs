//! The process around the services: parsing settings (file included),
//! the async runtime, listeners, signals and the exit code.

use crate::app::{start, AppConfig, Service};
use tokio::net::TcpListener;

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// Binds a listener, naming the setting in the error.
pub async fn bind(what: &str, addr: std::net::SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for {what} on {addr}: {e}"))
}

/// A binary's exit: success, or the error on stderr and a failure code.
pub fn exit_code(binary: &str, result: Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{binary}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The `main` of every binary: applies the settings file, parses the command
/// line, then runs `body` on a multi-threaded runtime and turns its result
/// into the exit code.
pub fn run_main<C, F, Fut>(binary: &str, body: F) -> std::process::ExitCode
where
    C: clap::Parser,
    F: FnOnce(C) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    // Before any thread exists: the file's values become environment variables.
    if let Err(e) = crate::settings_file::load_settings_file::<C>() {
        return exit_code(binary, Err(e));
    }
    let cli = C::parse();
    raise_descriptor_limit();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .on_thread_park(crate::allocator::release_when_idle)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return exit_code(binary, Err(format!("cannot start the runtime: {e}"))),
    };
    exit_code(binary, runtime.block_on(body(cli)))
}

/// Raises the soft limit of open files to the hard one, as servers do: the
/// connection caps derive from it (`socialite_api::conn::Gate`), and a
/// soft limit of 1,024 would hold a server to a few hundred clients.
fn raise_descriptor_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: reads and writes a struct this function owns.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
}

/// Where a binary listens: REST (with the operators' endpoints) under the
/// flag that sets it, and gRPC if it serves any.
pub struct Listen {
    pub rest: std::net::SocketAddr,
    pub rest_flag: &'static str,
    pub grpc: Option<std::net::SocketAddr>,
}

/// A service binary's life: logging, listeners, the services, then an
/// ordered shutdown on SIGINT or SIGTERM.
pub async fn serve_until_signal(
    binary: &str,
    services: &[Service],
    listen: Listen,
    config: AppConfig,
    log: &crate::settings::LogArgs,
) -> Result<(), String> {
    crate::telemetry::init(binary, log.log_json, log.otlp_endpoint.as_deref())?;
    let rest = bind(&format!("REST ({})", listen.rest_flag), listen.rest).await?;
    let grpc = match listen.grpc {
        Some(addr) => Some(bind("gRPC (--grpc-addr)", addr).await?),
        None => None,
    };
    let app = start(services, &config, rest, grpc)
        .await
        .map_err(|e| e.chain())?;
    let grpc = app
        .grpc_addr
        .map_or(String::new(), |a| format!(" gRPC {a}"));
    let ops = app
        .ops_addr
        .map_or(String::new(), |a| format!(" operators http://{a}"));
    println!(
        "{binary} is up: REST http://{}{grpc}{ops} store {} event log {} (data directory {})",
        app.rest_addr,
        socialite_core::redact::uri(&config.storage.store),
        socialite_core::redact::uri(&config.storage.event_log),
        config.storage.embedded.data_dir.display()
    );
    shutdown_signal().await;
    tracing::info!("shutting down");
    watchdog(binary);
    app.shutdown().await;
    crate::telemetry::flush();
    Ok(())
}

/// Ends the process once the grace period is over, whatever still runs:
/// the ordered shutdown keeps to it, and this holds when something it does
/// not bound (a thread stuck in a system call, closing a client) would
/// not. Acknowledged writes are durable; what was in progress is redone at
/// the next start.
fn watchdog(binary: &str) {
    let binary = binary.to_owned();
    let spawned = std::thread::Builder::new()
        .name("shutdown-watchdog".into())
        .spawn(move || {
            std::thread::sleep(socialite_core::shutdown::GRACE);
            tracing::error!("the shutdown did not finish within its grace period; exiting now");
            eprintln!(
                "{binary}: the shutdown did not finish within {} s; exiting (acknowledged writes are durable; the rest is redone at the next start)",
                socialite_core::shutdown::GRACE.as_secs()
            );
            std::process::exit(1);
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no shutdown watchdog");
    }
}
