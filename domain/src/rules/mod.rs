//! Every rule that decides what the stores hold, decided here once for every
//! backend: which checks refuse a write ([`checks`]), what deleting a user
//! removes and tells the pipeline ([`cascade`]), and which entries a stored
//! timeline accepts and keeps ([`accept`]), which users a post mentions
//! ([`mentions`]), who may like a post and how its count moves
//! ([`likes`]), who may repost a post and where a reposted post sits
//! ([`reposts`]), whom a reply reaches ([`replies`]), what a user is
//! notified of and how it groups ([`notifications`]), how a reading marker moves ([`markers`]), whose posts mutes and blocks hide ([`relations`]), which
//! authors are not fanned out ([`hybrid`]), when an account may act and its
//! tokens count ([`accounts`]), how many backups are made and kept
//! ([`backups`]), and who may do what ([`access`]).
//!
//! Adapters persist what these functions decide. Where a backend must
//! express a rule as an atomic update (a MongoDB filter, say), it derives
//! the update from the same function, and the conformance suite in
//! `tests/tests/conformance.rs` proves every backend does what the rule says.
//!
//! This module knows the domain (ids, posts, entries, events) and nothing of
//! ports, services or backends.

pub mod accept;
pub mod access;
pub mod accounts;
pub mod backups;
pub mod cascade;
pub mod checks;
pub mod hybrid;
pub mod likes;
pub mod markers;
pub mod mentions;
pub mod notices;
pub mod notifications;
pub mod relations;
pub mod replies;
pub mod reposts;
