//! A marker set: the user must exist; it moves as
//! [`crate::feed::markers::moves`] decides, and the event records it.

use crate::checks::user_not_found;
use crate::event::Event;
use crate::feed::markers::{moves, Marker, MarkerTimeline};
use crate::ids::{PostId, UserId};
use crate::plan::{Step, Txn};

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
    move_marker(txn, user, to, force).await
}

/// [`set_marker`] once `user` is known to exist (a transfer decides what a
/// marker of a user not here does: `crate::transfer::mode`).
pub async fn move_marker<T: Txn>(
    txn: &mut T,
    user: &UserId,
    to: Marker,
    force: bool,
) -> Result<(Marker, bool), T::Error> {
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
