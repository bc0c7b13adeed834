//! The shared proof that a backend does what the rules decide: the ports'
//! conformance suite and the differential feed test (every timeline against
//! its read-time oracle over random histories), for any backend.
//!
//! A backend crate runs them on its own ports with one macro call each,
//! given an [`Opener`]: a function that opens a fresh backend for one test.
//!
//! ```ignore
//! async fn open(feed: FeedConfig, test: &'static str) -> Option<Opened> { ... }
//! fn opener(feed: FeedConfig, test: &'static str) -> Opening {
//!     Box::pin(open(feed, test))
//! }
//! socialite_testkit::conformance_suite!(my_backend, opener);
//! socialite_testkit::differential_suite!(my_backend_differential, opener, 1..=12);
//! ```
//!
//! # Layout
//!
//! - [`conformance`]: one check per port concern, each a `pub async fn`
//!   taking the opener.
//! - [`differential`]: the oracle ([`differential::Model`]), the harness that
//!   drives a backend through ingest, relay, fanout and reads, and the
//!   random histories.

pub mod conformance;
pub mod differential;

mod open;

pub use open::{eventually, Opened, Opener, Opening};

/// Runs the whole conformance suite on the backend `$open` opens, as a
/// module of tests named `$name`.
#[macro_export]
macro_rules! conformance_suite {
    ($name:ident, $open:expr) => {
        mod $name {
            $crate::conformance_suite!(@tests $open;
                users_posts_and_outbox, follow_graph, caches_expire_when_not_read,
                deletion_in_steps, follow_times, groups, mentions, lists_on_edges,
                activation_racing_a_deletion, event_log, timeline_caches_linked,
                timeline_caches_embedded, timeline_versions, likes, concurrent_likes, markers, reposts,
                replies, notifications, reads_by_name, writes_wake_the_relay, collections,
                transfer_modes, export_leaves_out_users_being_deleted);
        }
    };
    (@tests $open:expr; $($test:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                $crate::conformance::$test($open).await
            }
        )*
    };
}

/// Runs the differential test on the backend `$open` opens: every feed
/// model, linked and embedded, over the random histories of `$seeds`
/// (`SOCIALITE_SEED` picks one).
#[macro_export]
macro_rules! differential_suite {
    ($name:ident, $open:expr, $seeds:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $crate::differential::every_model_matches_the_oracle($open, $seeds).await
        }
    };
}

/// Runs the export format's property on the backend `$open` opens: the
/// random histories of `$seeds` export, import into a fresh store and
/// export again unchanged (`SOCIALITE_SEED` picks one).
#[macro_export]
macro_rules! round_trip_suite {
    ($name:ident, $open:expr, $seeds:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $crate::differential::histories_export_import_and_export_the_same($open, $seeds).await
        }
    };
}
