//! The allocator of every Socialite binary (they all link this crate):
//! mimalloc serves the many small, short-lived objects of the request and
//! fanout paths faster than the system allocator (+23% on cached HTTP reads
//! in an A/B, BENCHMARKS.md).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc commits its arenas eagerly on Linux by default, and memory in an
/// eagerly committed arena is never returned: pages freed after a burst of
/// activations stayed resident (259 MiB added by activating 100,000 users,
/// against 173 MiB with this off; BENCHMARKS.md). The option must be set
/// before the first arena is reserved, that is before the first allocation,
/// so it is set from the executable's initializers, ahead of `main`.
/// `MIMALLOC_ARENA_EAGER_COMMIT` in the environment is overridden.
#[cfg(target_os = "linux")]
mod options {
    use std::ffi::{c_int, c_long};

    /// `mi_option_arena_eager_commit` in mimalloc.h (v2).
    const ARENA_EAGER_COMMIT: c_int = 4;

    extern "C" {
        fn mi_option_set(option: c_int, value: c_long);
    }

    extern "C" fn configure() {
        // SAFETY: writes one entry of mimalloc's option table; initializers
        // run on the main thread before any other thread exists.
        unsafe { mi_option_set(ARENA_EAGER_COMMIT, 0) }
    }

    #[used]
    #[link_section = ".init_array"]
    static CONFIGURE: extern "C" fn() = configure;
}

/// A thread's allocator heap keeps the pages it freed, and mimalloc returns
/// them to the system only on a later call into it: a runtime thread that
/// goes idle after a burst (a flood of connections closing) would hold them
/// for as long as it sleeps. So each runtime thread, as it parks, returns
/// what it freed, at most once a second so that a busy thread, which parks
/// often, pays next to nothing.
pub fn release_when_idle() {
    use std::cell::Cell;
    use std::time::{Duration, Instant};
    const EVERY: Duration = Duration::from_secs(1);
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    LAST.with(|last| {
        let now = Instant::now();
        if last.get().is_some_and(|at| now.duration_since(at) < EVERY) {
            return;
        }
        last.set(Some(now));
        collect();
    });
}

fn collect() {
    extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: collects the calling thread's own heap (and segments other,
    // ended threads abandoned); no pointer crosses the call.
    unsafe { mi_collect(true) }
}
