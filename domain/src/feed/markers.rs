//! Markers: where a user stopped reading a timeline. A marker names the
//! newest entry the user has read (the home timeline's position of a post;
//! the notifications' place of an entry, its newest notice); it moves only
//! forward (to a newer id) unless the client forces it back, so that two
//! devices racing to save their place keep the furthest one.

use crate::ids::PostId;

pub use crate::model::marker::{Marker, MarkerTimeline};

/// Whether a marker at `held` moves to `to`: forward always, back only
/// when forced.
pub fn moves(held: Option<PostId>, to: PostId, force: bool) -> bool {
    match held {
        None => true,
        Some(h) => h != to && (to > h || force),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_moves_forward_and_back_only_when_forced() {
        let (a, b) = (PostId(10), PostId(20));
        assert!(moves(None, a, false));
        assert!(moves(Some(a), b, false));
        assert!(!moves(Some(b), a, false));
        assert!(moves(Some(b), a, true));
        assert!(!moves(Some(b), b, true), "the same place changes nothing");
        assert_eq!(MarkerTimeline::parse("home").unwrap(), MarkerTimeline::Home);
        assert_eq!(
            MarkerTimeline::parse("notes").unwrap_err().code(),
            "invalid_marker_timeline"
        );
        for t in MarkerTimeline::ALL {
            assert_eq!(MarkerTimeline::from_code(t.code()), Some(t));
            assert_eq!(MarkerTimeline::parse(t.as_str()).unwrap(), t);
        }
    }
}
