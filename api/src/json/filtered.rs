//! What a reader's warning filters say of an entry, in every JSON shape
//! that shows posts (entries, thread posts, notifications).

use serde::Serialize;
use socialite_core::model::filter::FilterHit;
use utoipa::ToSchema;

/// A warning filter that matched, and its phrase that did.
#[derive(Serialize, ToSchema)]
pub struct FilterHitJson<'a> {
    #[schema(example = "1")]
    filter: String,
    #[schema(value_type = String, example = "Spoilers")]
    title: &'a str,
    #[schema(value_type = String, example = "spoiler")]
    phrase: &'a str,
}

/// What warning filters say of an entry; `None` for none.
pub fn hits(hits: &[FilterHit]) -> Option<Vec<FilterHitJson<'_>>> {
    (!hits.is_empty()).then(|| {
        hits.iter()
            .map(|h| FilterHitJson {
                filter: h.filter.to_string(),
                title: &h.title,
                phrase: &h.phrase,
            })
            .collect()
    })
}
