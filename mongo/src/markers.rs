//! Markers on MongoDB: one document per user and timeline in `markers`
//! (`{_id: "USER#T", u, t, p, at}`: the user, the timeline's code, the
//! newest post read, when it was set), found per user on `{u}`.

use crate::db::{db_err, TxnError};
use crate::store::{get_i64, id_bson, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::PostId;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};

fn marker_id(user: &str, timeline: MarkerTimeline) -> String {
    format!("{user}#{}", timeline.code())
}

/// The marker a `markers` document holds.
pub(crate) fn to_marker(d: &Document) -> Option<Marker> {
    Some(Marker {
        timeline: MarkerTimeline::from_code(u8::try_from(get_i64(d, "t")).ok()?)?,
        last_read: PostId(get_i64(d, "p") as u64),
        at_ms: get_i64(d, "at").max(0) as u64,
    })
}

impl MongoStore {
    pub(crate) async fn marker_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        timeline: MarkerTimeline,
    ) -> Result<Option<Marker>, TxnError> {
        let found = self
            .db
            .markers
            .find_one(doc! { "_id": marker_id(user, timeline) });
        Ok(found.session(&mut *s).await?.as_ref().and_then(to_marker))
    }

    pub(crate) async fn put_marker_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        m: &Marker,
    ) -> Result<(), TxnError> {
        let set = doc! { "$set": {
            "u": user,
            "t": i32::from(m.timeline.code()),
            "p": id_bson(m.last_read),
            "at": m.at_ms as i64,
        } };
        let filter = doc! { "_id": marker_id(user, m.timeline) };
        let put = self.db.markers.update_one(filter, set).upsert(true);
        put.session(&mut *s).await?;
        Ok(())
    }

    /// Forgets a deleted user's markers.
    pub(crate) async fn forget_markers_in(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        let gone = self.db.markers.delete_many(doc! { "u": user });
        gone.session(&mut *s).await?;
        Ok(())
    }

    /// The user's markers, in timeline order.
    pub(crate) async fn markers_of(&self, user: &str) -> Result<Vec<Marker>> {
        let what = "reading markers";
        let docs: Vec<Document> = self
            .db
            .markers
            .find(doc! { "u": user })
            .sort(doc! { "t": 1 })
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        Ok(docs.iter().filter_map(to_marker).collect())
    }
}
