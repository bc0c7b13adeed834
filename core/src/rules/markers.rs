//! Markers: where a user stopped reading a timeline. A marker names the
//! newest post the user has read; it moves only forward (to a newer post
//! id) unless the client forces it back, so that two devices racing to
//! save their place keep the furthest one.

use crate::error::{Error, Result};
use crate::ids::PostId;

/// The timelines a marker may be kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MarkerTimeline {
    Home,
}

impl MarkerTimeline {
    pub const ALL: [MarkerTimeline; 1] = [MarkerTimeline::Home];

    pub fn parse(name: &str) -> Result<MarkerTimeline> {
        match name {
            "home" => Ok(MarkerTimeline::Home),
            other => Err(Error::invalid(
                "invalid_marker_timeline",
                format!("markers are kept for the timeline `home`; `{other}` is none"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MarkerTimeline::Home => "home",
        }
    }

    /// The code stores key a marker by.
    pub fn code(self) -> u8 {
        match self {
            MarkerTimeline::Home => 1,
        }
    }

    pub fn from_code(code: u8) -> Option<MarkerTimeline> {
        MarkerTimeline::ALL.into_iter().find(|t| t.code() == code)
    }
}

/// A user's place in a timeline: the newest post read, and when it was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub timeline: MarkerTimeline,
    pub last_read: PostId,
    pub at_ms: u64,
}

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
        let home = MarkerTimeline::Home;
        assert_eq!(MarkerTimeline::from_code(home.code()), Some(home));
    }
}
