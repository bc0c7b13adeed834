//! Posts, as the APIs act on them: a post or a reply made under a new id,
//! a post deleted ([`ingest`]), and a post's thread: what it answers and
//! its replies ([`thread`]). The rules and planners are the domain's
//! (`socialite_domain::posts`); a post read by id and a user's posts are
//! [`crate::reads`]'.

mod ingest;
mod thread;

pub use thread::Thread;
