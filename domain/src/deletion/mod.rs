//! Deleting a user: what it removes and tells the pipeline, in bounded
//! stages ([`cascade`]), and each stage planned as the writes it undoes
//! ([`plan`]).

pub mod cascade;
pub mod plan;
