//! What the live routes of both transports share.

use socialite_core::live::hub::LiveHub;
use socialite_core::reads::Reads;
use std::sync::Arc;

/// What the live routes need: the reads (checks and resumes) and the hub.
#[derive(Clone)]
pub struct Live {
    pub reads: Arc<Reads>,
    pub hub: Arc<LiveHub>,
}
