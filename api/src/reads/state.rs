//! What the read routes share, as their router state.

use crate::fragments::PostFragments;
use crate::pages::PageCache;
use axum::extract::FromRef;
use socialite_core::reads::Reads;
use std::sync::Arc;

/// What the read routes share: the use cases, serialized posts and kept
/// first pages. Handed to the routes as their state rather than as request
/// extensions, which would cost every request a layer of its own.
#[derive(Clone)]
pub struct ReadsState {
    pub(super) reads: Arc<Reads>,
    pub(super) fragments: Arc<PostFragments>,
    pub(super) pages: Arc<PageCache>,
}

impl FromRef<ReadsState> for Arc<Reads> {
    fn from_ref(s: &ReadsState) -> Arc<Reads> {
        s.reads.clone()
    }
}

impl FromRef<ReadsState> for Arc<PostFragments> {
    fn from_ref(s: &ReadsState) -> Arc<PostFragments> {
        s.fragments.clone()
    }
}

impl FromRef<ReadsState> for Arc<PageCache> {
    fn from_ref(s: &ReadsState) -> Arc<PageCache> {
        s.pages.clone()
    }
}
