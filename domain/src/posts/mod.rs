//! Posts: a post stored or deleted ([`post`]), whom it mentions
//! ([`mentions`]), and what a reply answers and reaches ([`replies`]).

pub mod mentions;
pub mod post;
pub mod replies;
