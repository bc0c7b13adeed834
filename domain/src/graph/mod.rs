//! Who follows, mutes and blocks whom, and who is in which group: a follow,
//! refiling or unfollow ([`edge`]), many at once ([`edges`]), mutes and blocks, their rules
//! ([`relations`]) and their writes ([`relate`]), exclusive lists
//! ([`exclusive`]), when mutes end
//! ([`mute_ends`]), and group membership ([`membership`]).

pub mod edge;
pub mod edges;
pub mod exclusive;
pub mod membership;
pub mod mute_ends;
pub mod relate;
pub mod relations;
