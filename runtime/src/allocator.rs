//! The allocator of every Socialite binary (they all link this crate):
//! mimalloc serves the many small, short-lived objects of the request and
//! fanout paths faster than the system allocator (+23% on cached HTTP reads
//! in an A/B, BENCHMARKS.md).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Two settings made before the first allocation, from the executable's
/// initializers, ahead of `main`.
///
/// mimalloc commits its arenas eagerly on Linux by default, and memory in an
/// eagerly committed arena is never returned: pages freed after a burst of
/// activations stayed resident (259 MiB added by activating 100,000 users,
/// against 173 MiB with this off; BENCHMARKS.md). So arenas are committed
/// on demand. `MIMALLOC_ARENA_EAGER_COMMIT` in the environment is overridden.
///
/// Memory is first taken from one region the kernel is asked to back with
/// transparent huge pages. The fanout worker writes into timelines spread
/// over the whole heap, one or two cache lines each, so with 4 KiB pages
/// nearly every write also misses the processor's address translations
/// (BENCHMARKS.md, row 1). mimalloc asks for huge pages only for arenas it
/// commits eagerly, which the first setting rules out; a region of our own
/// has both. It is reserved, not committed: untouched pages cost nothing,
/// and what mimalloc frees is returned as from any arena. When the region
/// is used up mimalloc reserves ordinary arenas. Where the system has
/// transparent huge pages off (`never`), the advice is ignored.
#[cfg(target_os = "linux")]
mod options {
    use std::ffi::{c_int, c_long, c_void};

    /// `mi_option_arena_eager_commit` in mimalloc.h.
    const ARENA_EAGER_COMMIT: c_int = 4;
    /// The region is handed over in parts of this size: mimalloc refuses
    /// larger ones (their bookkeeping would exceed its largest object).
    const PART: usize = 8 << 30;
    /// At most this many parts, whatever the machine's memory.
    const MAX_PARTS: usize = 16;
    const HUGE_PAGE: usize = 2 << 20;

    extern "C" {
        fn mi_option_set(option: c_int, value: c_long);
        fn mi_manage_os_memory(
            start: *mut c_void,
            size: usize,
            is_committed: bool,
            is_large: bool,
            is_zero: bool,
            numa_node: c_int,
        ) -> bool;
    }

    /// The machine's memory in whole parts, at least one: address space
    /// only, so it costs nothing until touched.
    fn region_size() -> usize {
        // SAFETY: sysconf reads system constants.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let memory = usize::try_from(pages.max(0) * page.max(0)).unwrap_or(0);
        memory.div_ceil(PART).clamp(1, MAX_PARTS) * PART
    }

    /// Maps the region, aligned to a huge page, and advises huge pages for
    /// it; `None` if the system refuses the mapping.
    fn huge_region(size: usize) -> Option<*mut c_void> {
        // SAFETY: a fresh private anonymous mapping at an address the
        // kernel picks; nothing else refers to it yet.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size + HUGE_PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let skip = (HUGE_PAGE - base as usize % HUGE_PAGE) % HUGE_PAGE;
        let start = base.cast::<u8>().wrapping_add(skip).cast::<c_void>();
        // SAFETY: advice on the range just mapped; refused advice leaves
        // ordinary pages, which is still correct.
        unsafe { libc::madvise(start, size, libc::MADV_HUGEPAGE) };
        Some(start)
    }

    extern "C" fn configure() {
        // SAFETY: writes one entry of mimalloc's option table, and hands
        // mimalloc parts of a region that is readable, writable, zeroed
        // and ours alone; initializers run on the main thread before any
        // other thread exists, and nothing here allocates.
        unsafe {
            mi_option_set(ARENA_EAGER_COMMIT, 0);
            let size = region_size();
            if let Some(start) = huge_region(size) {
                for part in (0..size).step_by(PART) {
                    let at = start.cast::<u8>().wrapping_add(part).cast::<c_void>();
                    mi_manage_os_memory(at, PART, true, false, true, -1);
                }
            }
        }
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
