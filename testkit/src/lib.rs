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
                transfer_modes, runs_read_ahead, runs_of_posts, runs_of_members, export_leaves_out_users_being_deleted, ranked_orders, ranked_window, ranked_lists, rank_snapshot_store, ranked_pages_across_processes, follow_options, keyword_filters, timed_mutes, thread_mutes, exclusive_lists,
                firehose, webhook_store, webhook_delivery);
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
/// (`SOCIALITE_SEED` picks one), as a module of tests named `$name`: for
/// each model and way, one test for each half of the seeds, so that they
/// run side by side (`<name>::cache_linked::first_half`).
#[macro_export]
macro_rules! differential_suite {
    ($name:ident, $open:expr, $seeds:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::differential_suite!(@tests $open, $seeds;
                fanout_on_read_linked: FanoutOnRead, false;
                fanout_on_read_embedded: FanoutOnRead, true;
                time_buckets_linked: TimeBuckets, false;
                time_buckets_embedded: TimeBuckets, true;
                sized_buckets_linked: SizedBuckets, false;
                sized_buckets_embedded: SizedBuckets, true;
                cache_linked: Cache, false;
                cache_embedded: Cache, true);
            // A feed model added to core fails to compile here until it
            // has its tests above.
            #[allow(dead_code)]
            fn every_model_is_tested(model: $crate::differential::FeedModel) {
                use $crate::differential::FeedModel::*;
                match model {
                    FanoutOnRead | TimeBuckets | SizedBuckets | Cache => {}
                }
            }
        }
    };
    (@tests $open:expr, $seeds:expr; $($test:ident: $model:ident, $embed:expr);*) => {
        $(
            mod $test {
                #[allow(unused_imports)]
                use super::*;
                $crate::differential_suite!(@halves $open, $seeds, $model, $embed;
                    first_half: 0, second_half: 1);
            }
        )*
    };
    (@halves $open:expr, $seeds:expr, $model:ident, $embed:expr; $($half:ident: $part:expr),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $half() {
                $crate::differential::model_matches_the_oracle(
                    $open,
                    $seeds,
                    ($part, 2),
                    $crate::differential::FeedModel::$model,
                    $embed,
                )
                .await
            }
        )*
    };
}

/// Runs the export format's property on the backend `$open` opens: the
/// random histories of `$seeds` export, import into a fresh store and
/// export again unchanged (`SOCIALITE_SEED` picks one). On a slow backend,
/// name a test for each seed instead, so that they run side by side:
/// `round_trip_suite!(name, open; seed_1: 1, seed_2: 2)` makes the module
/// `name` of tests `seed_1` and `seed_2`.
#[macro_export]
macro_rules! round_trip_suite {
    ($name:ident, $open:expr, $seeds:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $crate::differential::histories_export_import_and_export_the_same($open, $seeds).await
        }
    };
    ($name:ident, $open:expr; $($test:ident: $seed:expr),+ $(,)?) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    $crate::differential::histories_export_import_and_export_the_same(
                        $open,
                        [$seed],
                    )
                    .await
                }
            )+
        }
    };
}
