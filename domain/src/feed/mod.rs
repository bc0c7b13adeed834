//! What timelines hold: which entries a stored timeline accepts and keeps
//! ([`accept`]), which authors are not fanned out ([`hybrid`]), what the
//! timelines must do about each event of the log ([`timeline_change`]), and
//! where a reader stopped: how a marker moves ([`markers`]) and a marker
//! set ([`marker`]); the orders a reader may choose besides the newest
//! first ([`rank`]).

pub mod accept;
pub mod hybrid;
pub mod marker;
pub mod markers;
pub mod rank;
pub mod rank_inputs;
pub mod snapshot;
pub mod timeline_change;
