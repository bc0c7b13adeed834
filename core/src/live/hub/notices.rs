//! The live notifications: the notices an applied event makes (and the
//! alerts of those who watch its author with `notify`), sent to the
//! streams of their recipients but of actors, filters and muted threads
//! they do not see.

use super::{LiveEvent, LiveHub};
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::notifications::InStore;
use rustc_hash::FxHashSet;
use socialite_domain::notifications::alerts::subscribers_told;
use socialite_domain::notifications::notified::{changes_of, Notice, NoticeChange};
use socialite_domain::notifications::thread_mutes::in_one_of;
use std::sync::Arc;

impl LiveHub {
    /// Sends the notices `event` makes to their recipients' streams, but
    /// those whose recipient muted a thread: returned with the threads, to
    /// be checked against them ([`Self::notify_outside_muted`]).
    pub(super) fn notify(&self, event: &Event) -> Vec<(Notice, Arc<FxHashSet<PostId>>)> {
        let mut reg = self.registry();
        let mut held = Vec::new();
        if reg.users.is_empty() {
            return held;
        }
        let mut changes = changes_of(event);
        if let Event::PostCreated { post, .. } = event {
            // Those watching the author with the `notify` option on.
            let watching = reg.by_author.get(&post.author).into_iter().flatten();
            let subs: Vec<UserId> = watching
                .filter(|w| {
                    reg.users
                        .get(*w)
                        .is_some_and(|x| x.seen.notify.contains(&post.author))
                })
                .cloned()
                .collect();
            changes.extend(subscribers_told(post, &subs));
        }
        for change in changes {
            let NoticeChange::Made(notice) = change else {
                continue;
            };
            let recipient = &notice.key.recipient;
            let Some(seen) = reg.users.get(recipient).map(|w| &w.seen) else {
                continue;
            };
            if seen.hidden.contains(&notice.key.actor)
                || seen.filters_hide(recipient, event, &notice)
            {
                continue;
            }
            if !seen.muted_threads.is_empty() && notice.key.post.is_some() {
                held.push((notice.clone(), seen.muted_threads.clone()));
                continue;
            }
            let told = LiveEvent::Notified(Box::new(notice.clone()));
            reg.send(recipient, &told);
        }
        held
    }

    /// Sends `notice` unless its post is in one of `muted` threads (a
    /// post that cannot be read is taken as outside them).
    pub(super) async fn notify_outside_muted(&self, notice: Notice, muted: &FxHashSet<PostId>) {
        let Some(about) = notice.key.post else {
            return;
        };
        let posts = &mut InStore(&*self.stores.content);
        let quiet = in_one_of(posts, |p| muted.contains(p), about).await;
        let quiet = quiet.unwrap_or_else(|e| {
            tracing::warn!(error = %e.chain(), "reading a thread for live notifications failed");
            false
        });
        if quiet {
            return;
        }
        let recipient = notice.key.recipient.clone();
        let told = LiveEvent::Notified(Box::new(notice));
        self.registry().send(&recipient, &told);
    }
}
