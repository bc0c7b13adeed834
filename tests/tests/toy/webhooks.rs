//! The toy's webhook endpoints: maps under a lock of their own, each
//! change applied by the domain's rule.

use super::ToyStore;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::ports::{too_many_webhooks, Webhooks};
use socialite_core::webhooks::endpoint::KEPT_ATTEMPTS;
use socialite_core::webhooks::{Attempt, Change, Endpoint};
use std::collections::BTreeMap;

#[derive(Default)]
pub struct ToyWebhooks {
    endpoints: BTreeMap<String, Endpoint>,
    attempts: BTreeMap<String, BTreeMap<u64, Attempt>>,
}

#[async_trait]
impl Webhooks for ToyStore {
    async fn create_endpoint(&self, endpoint: &Endpoint, cap: usize) -> Result<()> {
        let mut w = self.webhooks.lock().unwrap();
        if w.endpoints.len() >= cap {
            return Err(too_many_webhooks(cap));
        }
        w.endpoints.insert(endpoint.id.clone(), endpoint.clone());
        Ok(())
    }

    async fn endpoint(&self, id: &str) -> Result<Option<Endpoint>> {
        Ok(self.webhooks.lock().unwrap().endpoints.get(id).cloned())
    }

    async fn endpoints(&self) -> Result<Vec<Endpoint>> {
        Ok(self
            .webhooks
            .lock()
            .unwrap()
            .endpoints
            .values()
            .cloned()
            .collect())
    }

    async fn change_endpoint(&self, id: &str, change: &Change) -> Result<bool> {
        let mut w = self.webhooks.lock().unwrap();
        Ok(w.endpoints.get_mut(id).is_some_and(|e| e.apply(change)))
    }

    async fn delete_endpoint(&self, id: &str) -> Result<bool> {
        let mut w = self.webhooks.lock().unwrap();
        w.attempts.remove(id);
        Ok(w.endpoints.remove(id).is_some())
    }

    async fn record_attempt(&self, id: &str, attempt: &Attempt) -> Result<()> {
        let mut w = self.webhooks.lock().unwrap();
        let log = w.attempts.entry(id.to_owned()).or_default();
        log.insert(attempt.seq, attempt.clone());
        while log.len() > KEPT_ATTEMPTS {
            log.pop_first();
        }
        Ok(())
    }

    async fn attempts(&self, id: &str, before: Option<u64>, limit: usize) -> Result<Vec<Attempt>> {
        let w = self.webhooks.lock().unwrap();
        let Some(log) = w.attempts.get(id) else {
            return Ok(Vec::new());
        };
        let end = before.unwrap_or(u64::MAX);
        Ok(log
            .range(..end)
            .rev()
            .take(limit)
            .map(|(_, a)| a.clone())
            .collect())
    }
}
