//! The toy third backend (`toy/`), an in-memory store built only from the
//! primitives core's planners need, runs the whole conformance suite and
//! the differential test: the rules live in one place.

mod toy;

socialite_testkit::conformance_suite!(toy_conformance, crate::toy::open);
socialite_testkit::differential_suite!(
    toy_matches_the_oracle_on_random_histories,
    crate::toy::open,
    1..=12
);
