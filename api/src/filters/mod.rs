//! Keyword filters over REST ([`rest`]: `/users/{id}/filters`) and gRPC
//! ([`grpc`]: `CreateFilter`, `UpdateFilter`, `DeleteFilter` of the
//! ingest service, `ListFilters` of the reads service), mapped onto
//! `socialite_core::filters`; what a warning filter adds to an entry is
//! written with the entry (`crate::json`, `crate::pb`, `crate::fragments`).

pub mod grpc;
pub mod rest;

use socialite_core::error::Result;
use socialite_core::filters::FilterChange;
use socialite_core::model::filter::{FilterAction, FilterContext, Phrase};

/// A change as a transport names it: its strings parsed, the rules left to
/// [`FilterChange::apply`].
pub(crate) fn change(
    title: Option<String>,
    phrases: Option<Vec<Phrase>>,
    contexts: Option<&[String]>,
    action: Option<&str>,
    expires_in_s: Option<Option<u64>>,
) -> Result<FilterChange> {
    let contexts = contexts
        .map(|c| c.iter().map(|n| FilterContext::parse(n)).collect())
        .transpose()?;
    Ok(FilterChange {
        title,
        phrases,
        contexts,
        action: action.map(FilterAction::parse).transpose()?,
        expires_in_s,
    })
}
