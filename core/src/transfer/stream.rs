//! A store's records as a stream carries them: what its
//! [`ExportView`] gives, closed over the references between records. A
//! reply is marked when the post it answers is not in the stream (deleted
//! since: a reply outlives its post); a repost of a post that is not in it
//! names nothing and is left out, and so is a like of a post that is not
//! in it (such a repost's likes among them). Export, a migration's copy and its verification all
//! read a store through this, so what they carry is decided once, whatever
//! the backend.
//!
//! Posts come in id order, before the likes, and a reply or a repost is
//! newer than the post it names, so the posts seen so far tell whether
//! that post is in the stream: the stream keeps their ids (8 bytes a
//! post).

use crate::error::Result;
use crate::ports::{ExportView, Transfer};
use socialite_domain::transfer::record::Record;

/// A store being read as a stream.
pub struct Stream {
    view: Box<dyn ExportView>,
    /// The ids of the posts given so far, ascending.
    posts: Vec<u64>,
}

impl Stream {
    /// Starts reading `transfer`'s store.
    pub async fn open(transfer: &dyn Transfer) -> Result<Stream> {
        Ok(Stream {
            view: transfer.export_view().await?,
            posts: Vec::new(),
        })
    }

    /// The next records, at most `limit`; none at the end.
    pub async fn next(&mut self, limit: usize) -> Result<Vec<Record>> {
        loop {
            let mut page = self.view.next(limit).await?;
            if page.is_empty() {
                return Ok(page);
            }
            page.retain_mut(|r| self.carry(r));
            if !page.is_empty() {
                return Ok(page);
            }
        }
    }

    /// Whether the stream carries `record`, marked as it must be.
    fn carry(&mut self, record: &mut Record) -> bool {
        match record {
            Record::Post {
                post,
                answered_gone,
            } => {
                if let Some(original) = &post.repost_of {
                    // A repost of a post that is gone names nothing.
                    if !self.holds(original.id.0) {
                        return false;
                    }
                }
                if let Some(answered) = &post.reply_to {
                    *answered_gone = !self.holds(answered.id.0);
                }
                self.note(post.id.0);
                true
            }
            Record::Like { post, .. } => self.holds(post.0),
            Record::Kept { kept, .. } => self.holds(kept.post.0),
            _ => true,
        }
    }

    fn note(&mut self, id: u64) {
        match self.posts.last() {
            Some(&last) if last >= id => {
                // Not in order (no backend does this): kept sorted all the same.
                if let Err(at) = self.posts.binary_search(&id) {
                    self.posts.insert(at, id);
                }
            }
            _ => self.posts.push(id),
        }
    }

    fn holds(&self, id: u64) -> bool {
        self.posts.binary_search(&id).is_ok()
    }
}
