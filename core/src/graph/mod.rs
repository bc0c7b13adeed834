//! The follow graph, as the APIs act on it: follows, refilings and
//! unfollows, mutes and blocks, group memberships ([`ingest`]); followers,
//! followees, lists, relationships, suggestions and groups read as their
//! viewer sees them ([`reads`]). The rules and planners are the domain's
//! (`socialite_domain::graph`).

mod ingest;
mod reads;

pub use reads::Direction;
