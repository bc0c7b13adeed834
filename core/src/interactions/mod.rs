//! Likes and reposts, as the APIs act on them ([`ingest`]), and a post's
//! counts and likers ([`reads`]). The rules and planners are the domain's
//! (`socialite_domain::interactions`).

mod ingest;
mod reads;
