//! In `socialite up`, the fanout worker runs beside the request path on the
//! same cores, and it is background work: when both want the CPU, reads and acknowledgements
//! must win, and when the request path is idle, fanout may take every core.
//! So the worker gets a runtime of its own whose threads run at nice 10: the
//! kernel's scheduler then gives each of them about a tenth of the CPU time
//! of a request thread at nice 0 while both are runnable, and all of it
//! otherwise. Helper threads that a delivery starts inherit the nice value.

use socialite_core::error::{Error, Result};
use socialite_core::priority::{lower_this_thread, BACKGROUND_NICE, WRITES_NICE};
use std::future::Future;

/// How much lower than the request path's (0) the worker's priority is.
const NICE: i32 = BACKGROUND_NICE;

/// Runs `work` on a runtime of lower-priority threads, one per core;
/// resolves to its result on the caller's runtime.
pub fn spawn_background<F>(name: &str, work: F) -> tokio::task::JoinHandle<Result<()>>
where
    F: Future<Output = Result<()>> + Send + 'static,
{
    let runtime = match niced_runtime(&format!("{name}-bg"), NICE) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "no background runtime; {name} runs at normal priority");
            return tokio::spawn(work);
        }
    };
    let (done, result) = tokio::sync::oneshot::channel();
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            // `block_on` runs `work` itself on this thread.
            lower_priority();
            let _ = done.send(runtime.block_on(work));
        });
    let name = name.to_string();
    tokio::spawn(async move {
        thread.map_err(|e| Error::internal(format!("cannot start the {name} thread: {e}")))?;
        result
            .await
            .map_err(|_| Error::internal(format!("the {name} thread ended without a result")))?
    })
}

/// Where the write requests of a process that also serves reads are
/// handled: a runtime whose threads run at nice [`WRITES_NICE`], between
/// the reads' 0 and fanout's [`NICE`], so that a write flood takes the CPU
/// the reads leave and leaves some to fanout. It lives until the returned
/// [`Apart`] is dropped.
pub fn writes_runtime() -> Option<(tokio::runtime::Handle, Apart)> {
    let runtime = match niced_runtime("writes", WRITES_NICE) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "no runtime for writes; they are handled beside the reads");
            return None;
        }
    };
    let handle = runtime.handle().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let owner = std::thread::Builder::new()
        .name("writes".into())
        .spawn(move || {
            runtime.block_on(async {
                let _ = stopped.await;
            });
            runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        });
    match owner {
        Ok(_) => Some((handle, Apart { _stop: stop })),
        Err(e) => {
            tracing::warn!(error = %e, "no thread for the writes' runtime; they are handled beside the reads");
            None
        }
    }
}

/// Keeps the writes' runtime until dropped.
pub struct Apart {
    _stop: tokio::sync::oneshot::Sender<()>,
}

fn lower_priority() {
    lower_this_thread(NICE)
}

/// A runtime of one thread per core, named `name`, each at nice `nice`.
fn niced_runtime(name: &str, nice: i32) -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .thread_name(name)
        .on_thread_start(move || lower_this_thread(nice))
        .on_thread_park(crate::allocator::release_when_idle)
        .enable_all()
        .build()
}
