//! The toy third backend (`toy/`), every port in memory, built only from
//! the primitives core's planners need and core's rules of what a timeline
//! holds, runs the whole conformance suite, the differential test and the
//! export round trip: the rules live in one place.

mod toy;

socialite_testkit::conformance_suite!(toy_conformance, crate::toy::open);
socialite_testkit::differential_suite!(
    toy_matches_the_oracle_on_random_histories,
    crate::toy::open,
    1..=12
);
socialite_testkit::round_trip_suite!(
    toy_histories_export_import_and_export_the_same,
    crate::toy::open,
    1..=10
);
