//! The follow graph, as the APIs act on it: follows, refilings and
//! unfollows, mutes and blocks, group memberships ([`ingest`]); followers,
//! followees, lists, relationships, suggestions and groups read as their
//! viewer sees them ([`reads`]); mutes that end by themselves
//! ([`mute_sweep`]). The rules and planners are the domain's
//! (`socialite_domain::graph`).

mod ingest;
mod mute_sweep;
mod reads;

pub use mute_sweep::run_mute_ends;
pub use reads::Direction;
