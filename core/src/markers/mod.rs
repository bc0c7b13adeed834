//! Markers: where a user stopped reading a timeline. Set through
//! [`Ingest::set_marker`] (forward only, back when forced; the rule is
//! `socialite_domain::feed::markers`), read with the timeline after them
//! ([`reads`]).

mod reads;

pub use reads::{ForwardPage, FORWARD_WINDOW};

use crate::budgets::Cost;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::ingest::Ingest;
use socialite_domain::accounts::access::Caller;
use socialite_domain::feed::marker::marker_now;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};

impl Ingest {
    /// Sets the user's marker of `timeline` to the post `last_read_id`:
    /// forward only, back too when `force`. Returns the marker the user has
    /// afterwards and whether it moved. The post need not still exist.
    pub async fn set_marker(
        &self,
        caller: &Caller,
        user: &str,
        timeline: &str,
        last_read_id: &str,
        force: bool,
    ) -> Result<(Marker, bool)> {
        let user = UserId::parse(user)?;
        let timeline = MarkerTimeline::parse(timeline)?;
        let last_read = PostId::parse(last_read_id)?;
        // A place past every post to come would hide them all as read.
        last_read.check_not_ahead("last_read_id", crate::ids::now_ms())?;
        self.acting_as(caller, &user).await?;
        let _write = self.enter(caller, Cost::Update)?;
        let to = marker_now(timeline, last_read);
        self.content.set_marker(&user, to, force).await
    }
}
