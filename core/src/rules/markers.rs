//! Markers: where a user stopped reading a timeline. A marker names the
//! newest entry the user has read (the home timeline's position of a post;
//! the notifications' place of an entry, its newest notice); it moves only
//! forward (to a newer id) unless the client forces it back, so that two
//! devices racing to save their place keep the furthest one.

use crate::error::{Error, Result};
use crate::ids::PostId;

/// The timelines a marker may be kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MarkerTimeline {
    Home,
    Notifications,
}

impl MarkerTimeline {
    pub const ALL: [MarkerTimeline; 2] = [MarkerTimeline::Home, MarkerTimeline::Notifications];

    pub fn parse(name: &str) -> Result<MarkerTimeline> {
        match name {
            "home" => Ok(MarkerTimeline::Home),
            "notifications" => Ok(MarkerTimeline::Notifications),
            other => Err(Error::invalid(
                "invalid_marker_timeline",
                format!(
                    "markers are kept for the timelines `home` and `notifications`; `{other}` is none"
                ),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MarkerTimeline::Home => "home",
            MarkerTimeline::Notifications => "notifications",
        }
    }

    /// The code stores key a marker by.
    pub fn code(self) -> u8 {
        match self {
            MarkerTimeline::Home => 1,
            MarkerTimeline::Notifications => 2,
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
        for t in MarkerTimeline::ALL {
            assert_eq!(MarkerTimeline::from_code(t.code()), Some(t));
            assert_eq!(MarkerTimeline::parse(t.as_str()).unwrap(), t);
        }
    }
}
