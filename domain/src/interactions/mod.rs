//! What users do with others' posts: likes (the rules, [`likes`]; the
//! write, [`like`]) and reposts ([`reposts`], [`repost`]).

pub mod like;
pub mod likes;
pub mod repost;
pub mod reposts;
