//! In `socialite up`, the fanout worker runs beside the request path on the
//! same cores, and it is background work: when both want the CPU, reads and acknowledgements
//! must win, and when the request path is idle, fanout may take every core.
//! So the worker gets a runtime of its own whose threads run at nice 10: the
//! kernel's scheduler then gives each of them about a tenth of the CPU time
//! of a request thread at nice 0 while both are runnable, and all of it
//! otherwise. Helper threads that a delivery starts inherit the nice value.

use socialite_core::error::{Error, Result};
use std::future::Future;

/// How much lower than the request path's (0) the worker's priority is.
const NICE: i32 = 10;

/// Runs `work` on a runtime of lower-priority threads, one per core;
/// resolves to its result on the caller's runtime.
pub fn spawn_background<F>(name: &str, work: F) -> tokio::task::JoinHandle<Result<()>>
where
    F: Future<Output = Result<()>> + Send + 'static,
{
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .thread_name(format!("{name}-bg"))
        .on_thread_start(lower_priority)
        .on_thread_park(crate::allocator::release_when_idle)
        .enable_all()
        .build();
    let runtime = match runtime {
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

#[cfg(unix)]
fn lower_priority() {
    // SAFETY: setpriority has no memory effects; on Linux, `who = 0` with
    // PRIO_PROCESS names the calling thread only.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, NICE) };
    if rc != 0 {
        tracing::debug!("could not lower the background thread's priority");
    }
}

#[cfg(not(unix))]
fn lower_priority() {}
