//! The toy's ranked snapshots: the toy stands for a store that several
//! processes share, so it keeps them, each reader's newest few.

use super::ToyStore;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::ports::RankSnapshots;
use socialite_domain::feed::snapshot::{Snapshot, PER_READER};

#[async_trait]
impl RankSnapshots for ToyStore {
    async fn keep_snapshot(&self, snapshot: &Snapshot) -> Result<()> {
        let mut held = self.snapshots.lock().unwrap();
        let now = socialite_core::ids::now_ms();
        held.retain(|s| s.expires_ms > now);
        held.push(snapshot.clone());
        let reader = &snapshot.reader;
        let mut mine: Vec<(u64, u64)> = held
            .iter()
            .filter(|s| &s.reader == reader)
            .map(|s| (s.expires_ms, s.id))
            .collect();
        mine.sort_unstable_by(|a, b| b.cmp(a));
        let older: Vec<u64> = mine.iter().skip(PER_READER).map(|(_, id)| *id).collect();
        held.retain(|s| &s.reader != reader || !older.contains(&s.id));
        Ok(())
    }

    async fn snapshot(&self, reader: &UserId, id: u64) -> Result<Option<Snapshot>> {
        let held = self.snapshots.lock().unwrap();
        Ok(held
            .iter()
            .find(|s| s.id == id && &s.reader == reader)
            .cloned())
    }
}
