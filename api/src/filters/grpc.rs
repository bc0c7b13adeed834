//! gRPC of keyword filters: `CreateFilter`, `UpdateFilter` and
//! `DeleteFilter` of the ingest service, `ListFilters` of the reads
//! service, whose impls call these.

use crate::auth::grpc_parts;
use crate::error::to_status;
use socialite_core::ids::now_ms;
use socialite_core::ingest::Ingest;
use socialite_core::model::filter::{Filter, FilterHit, Phrase};
use socialite_core::model::rfc3339_ms;
use socialite_core::reads::Reads;
use socialite_proto::v1 as pb;
use tonic::{Request, Response, Status};

pub fn filter(f: &Filter) -> pb::Filter {
    pb::Filter {
        id: f.id.to_string(),
        title: f.title.clone(),
        phrases: f
            .phrases
            .iter()
            .map(|p| pb::FilterPhrase {
                text: p.text.clone(),
                whole_word: p.whole_word,
            })
            .collect(),
        contexts: f.contexts.iter().map(|c| c.as_str().to_owned()).collect(),
        action: f.action.as_str().to_owned(),
        expires_at: f.expires_at_ms.map(rfc3339_ms).unwrap_or_default(),
        expired: f.expires_at_ms.is_some_and(|at| at <= now_ms()),
    }
}

/// What warning filters say of an entry.
pub fn hits(hits: &[FilterHit]) -> Vec<pb::FilterHit> {
    hits.iter()
        .map(|h| pb::FilterHit {
            filter_id: h.filter.to_string(),
            title: h.title.clone(),
            phrase: h.phrase.clone(),
        })
        .collect()
}

/// Makes a filter (`update` false) or changes the one the request names.
pub async fn put(
    ingest: &Ingest,
    req: Request<pb::FilterRequest>,
    update: bool,
) -> Result<Response<pb::Filter>, Status> {
    let (caller, r) = grpc_parts(req);
    let phrases = r.phrases.map(|p| {
        p.phrases
            .into_iter()
            .map(|p| Phrase {
                text: p.text,
                whole_word: p.whole_word,
            })
            .collect()
    });
    let expires = match (r.never_expires, r.expires_in) {
        (true, _) => Some(None),
        (false, given) => given.map(Some),
    };
    let contexts = r.contexts.map(|c| c.contexts);
    let change = super::change(
        r.title,
        phrases,
        contexts.as_deref(),
        r.action.as_deref(),
        expires,
    )
    .map_err(to_status)?;
    let id = update.then_some(r.filter_id.as_str());
    let made = ingest.put_filter(&caller, &r.user, id, &change).await;
    Ok(Response::new(filter(&made.map_err(to_status)?)))
}

pub async fn delete(
    ingest: &Ingest,
    req: Request<pb::FilterRef>,
) -> Result<Response<pb::DeleteFilterReply>, Status> {
    let (caller, r) = grpc_parts(req);
    let deleted = ingest.remove_filter(&caller, &r.user, &r.filter_id).await;
    Ok(Response::new(pb::DeleteFilterReply {
        deleted: deleted.map_err(to_status)?,
    }))
}

pub async fn list(
    reads: &Reads,
    req: Request<pb::UserRef>,
) -> Result<Response<pb::FilterList>, Status> {
    let (caller, r) = grpc_parts(req);
    let filters = reads.filters(&caller, &r.id).await.map_err(to_status)?;
    Ok(Response::new(pb::FilterList {
        filters: filters.iter().map(filter).collect(),
    }))
}
