//! Which work a process favours when its cores are all busy: reads first,
//! then writes, then fanout. Reads run at the default priority (nice 0);
//! the write path (write handlers and the stores' commit threads) at
//! [`WRITES_NICE`]; fanout at [`BACKGROUND_NICE`]. The kernel's scheduler
//! gives a thread at nice 5 about a third, and at nice 10 about a tenth,
//! of the CPU time of one at nice 0 while both are runnable, and each all
//! of it while nothing higher is: the priorities order the work under
//! load and cost nothing when idle.

/// Write handlers and the threads that commit writes.
pub const WRITES_NICE: i32 = 5;
/// Fanout and other background work.
pub const BACKGROUND_NICE: i32 = 10;

/// Lowers the calling thread's priority to `nice`; threads it starts
/// inherit it. Where the system refuses, the thread keeps its priority
/// (logged at debug level: the work is done either way).
#[cfg(unix)]
pub fn lower_this_thread(nice: i32) {
    // SAFETY: setpriority has no memory effects; on Linux, `who = 0` with
    // PRIO_PROCESS names the calling thread only.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if rc != 0 {
        tracing::debug!(nice, "could not lower the thread's priority");
    }
}

#[cfg(not(unix))]
pub fn lower_this_thread(_: i32) {}
