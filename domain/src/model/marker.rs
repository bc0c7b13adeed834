//! A user's place in a timeline, as stored and carried on the log (the rule
//! of how it moves is [`crate::feed::markers`]).

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
