//! A marker set: the user must exist; it moves as
//! [`crate::rules::markers::moves`] decides, and the event records it.

use super::{Step, Txn};
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::rules::checks::user_not_found;
use crate::rules::markers::{moves, Marker, MarkerTimeline};

/// Sets `user`'s marker of `timeline` to `last_read` at `at_ms` if it
/// moves there (`force`: also back); returns the marker the user has
/// afterwards and whether it moved.
pub async fn set_marker<T: Txn>(
    txn: &mut T,
    user: &UserId,
    to: Marker,
    force: bool,
) -> Result<(Marker, bool), T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let held = txn.marker(user, to.timeline).await?;
    if !moves(held.map(|m| m.last_read), to.last_read, force) {
        return Ok((held.unwrap_or(to), false));
    }
    let put = Step::PutMarker {
        user: user.clone(),
        marker: to,
    };
    let event = Event::MarkerSet {
        user: user.clone(),
        marker: to,
    };
    txn.apply(&[put, Step::Emit(event)]).await?;
    Ok((to, true))
}

/// The marker `user` asks for: `timeline` at `last_read`, now.
pub fn marker_now(timeline: MarkerTimeline, last_read: PostId) -> Marker {
    Marker {
        timeline,
        last_read,
        at_ms: crate::ids::now_ms(),
    }
}
