//! The admin's use cases: registering, listing, changing, rotating,
//! replaying and deleting endpoints, and reading their delivery logs. Each
//! checks the caller first (an `admin` key).

use super::config::{hold_name, not_found, now_ms, WebhookConfig};
use crate::error::{Error, Result};
use crate::ports::{cursor_too_old, too_many_webhooks, EventLog, Webhooks};
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::firehose::cursor::Cursor;
use socialite_domain::webhooks::address::{self, Target};
use socialite_domain::webhooks::endpoint::check_id;
use socialite_domain::webhooks::sign::secret_of;
use socialite_domain::webhooks::{Attempt, Change, Endpoint, Replay, Secrets, Settings, State};
use std::sync::Arc;
use std::time::Duration;

/// How long resolving an endpoint's host may take on registration.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// What an admin changes of an endpoint; `None` keeps it.
#[derive(Debug, Clone, Default)]
pub struct Edit {
    pub url: Option<String>,
    pub kinds: Option<Vec<String>>,
    pub authors: Option<Vec<String>>,
    pub description: Option<String>,
    pub batch: Option<u32>,
    /// Turns deliveries on (forgetting a pending retry) or off.
    pub enabled: Option<bool>,
}

#[derive(Clone)]
pub struct WebhookAdmin {
    store: Arc<dyn Webhooks>,
    log: Arc<dyn EventLog>,
    config: Arc<WebhookConfig>,
}

impl WebhookAdmin {
    pub fn new(
        store: Arc<dyn Webhooks>,
        log: Arc<dyn EventLog>,
        config: WebhookConfig,
    ) -> WebhookAdmin {
        WebhookAdmin {
            store,
            log,
            config: Arc::new(config),
        }
    }

    pub fn config(&self) -> &WebhookConfig {
        &self.config
    }

    /// Whether `caller` may manage webhooks: checked before a transport
    /// reads what a request carries.
    pub fn may(caller: &Caller) -> Result<()> {
        check(caller, Act::ManageWebhooks)
    }

    /// Registers an endpoint that receives what happens from now on. Its
    /// secret is in the answer (and never shown again).
    pub async fn create(&self, caller: &Caller, settings: Settings) -> Result<Endpoint> {
        check(caller, Act::ManageWebhooks)?;
        settings.check()?;
        self.reachable(&settings.url).await?;
        let head: Vec<u64> = self.log.extent().await?.iter().map(|e| e.next).collect();
        let endpoint = Endpoint {
            id: format!("wh_{}", hex(&random::<8>()?)),
            created_ms: now_ms(),
            settings,
            secrets: Secrets::new(secret_of(&random::<24>()?)),
            state: State::Active,
            live: Cursor::new(head.clone()).to_string(),
            replay: None,
            retry: None,
            lease: None,
        };
        // Held before it is stored: a log that drops what readers are past
        // must keep the endpoint's first events.
        self.log.hold(&hold_name(&endpoint.id), Some(&head)).await?;
        if let Err(e) = self
            .store
            .create_endpoint(&endpoint, self.config.max_endpoints)
            .await
        {
            let _ = self.log.hold(&hold_name(&endpoint.id), None).await;
            return Err(e);
        }
        if self.store.endpoints().await?.len() > self.config.max_endpoints {
            // Two registrations raced past the cap: the later one yields.
            self.delete(caller, &endpoint.id).await?;
            return Err(too_many_webhooks(self.config.max_endpoints));
        }
        Ok(endpoint)
    }

    pub async fn list(&self, caller: &Caller) -> Result<Vec<Endpoint>> {
        check(caller, Act::ManageWebhooks)?;
        self.store.endpoints().await
    }

    pub async fn get(&self, caller: &Caller, id: &str) -> Result<Endpoint> {
        check(caller, Act::ManageWebhooks)?;
        check_id(id)?;
        self.store.endpoint(id).await?.ok_or_else(|| not_found(id))
    }

    /// Changes what `edit` names; the endpoint as it is after.
    pub async fn update(&self, caller: &Caller, id: &str, edit: Edit) -> Result<Endpoint> {
        let held = self.get(caller, id).await?;
        let mut settings = held.settings.clone();
        if let Some(url) = edit.url {
            settings.url = url;
        }
        settings.kinds = edit.kinds.unwrap_or(settings.kinds);
        settings.authors = edit.authors.unwrap_or(settings.authors);
        settings.description = edit.description.unwrap_or(settings.description);
        settings.batch = edit.batch.unwrap_or(settings.batch);
        settings.check()?;
        if settings.url != held.settings.url {
            self.reachable(&settings.url).await?;
        }
        if settings != held.settings {
            self.change(id, Change::Settings(settings)).await?;
        }
        match edit.enabled {
            Some(true) if held.state != State::Active || held.retry.is_some() => {
                // Held again from its cursor (if the log still keeps it),
                // and a batch waiting for its next try is tried at once.
                let at = Cursor::parse(&held.live)?;
                self.log.hold(&hold_name(id), Some(at.next())).await?;
                self.change(id, Change::State(State::Active)).await?
            }
            Some(false) if held.state == State::Active => {
                let off = State::Disabled {
                    reason: "turned off by an admin".into(),
                    at_ms: now_ms(),
                };
                self.change(id, Change::State(off)).await?;
                self.log.hold(&hold_name(id), None).await?
            }
            _ => {}
        }
        self.get(caller, id).await
    }

    /// A new secret; the old one signs beside it for `grace` (default
    /// [`WebhookConfig::rotation_grace`]), so receivers can switch over.
    pub async fn rotate(
        &self,
        caller: &Caller,
        id: &str,
        grace: Option<Duration>,
    ) -> Result<Endpoint> {
        let held = self.get(caller, id).await?;
        let grace = grace.unwrap_or(self.config.rotation_grace);
        let secrets = held.secrets.rotated(
            secret_of(&random::<24>()?),
            now_ms(),
            grace.as_millis() as u64,
        );
        self.change(id, Change::Secrets(secrets)).await?;
        self.get(caller, id).await
    }

    /// Delivers again the events from cursor `from` to `until` (default:
    /// where live delivery is); live delivery waits until it ends. 409
    /// `replay_in_progress` while another replay runs; `cursor_too_old`
    /// for events the log no longer keeps.
    pub async fn replay(
        &self,
        caller: &Caller,
        id: &str,
        from: &str,
        until: Option<&str>,
    ) -> Result<Endpoint> {
        let held = self.get(caller, id).await?;
        if held.replay.is_some() {
            return Err(Error::conflict(
                "replay_in_progress",
                "a replay of this endpoint is under way; ask again once it ends (see `replay` on the endpoint)",
            ));
        }
        let extent = self.log.extent().await?;
        let from = Cursor::parse(from)?.fitting(extent.len())?;
        let until = match until {
            Some(u) => Cursor::parse(u)?.fitting(extent.len())?,
            None => Cursor::parse(&held.live)?,
        };
        let pairs = || from.next().iter().zip(until.next());
        if pairs().any(|(f, u)| f > u) || pairs().all(|(f, u)| f == u) {
            return Err(Error::invalid(
                "invalid_replay",
                "`from` must come before `until` (and before where delivery is, without `until`)",
            ));
        }
        if until.next().iter().zip(&extent).any(|(u, e)| *u > e.next) {
            return Err(Error::invalid(
                "invalid_cursor",
                "`until` is past the end of the log",
            ));
        }
        if from.next().iter().zip(&extent).any(|(f, e)| *f < e.oldest) {
            return Err(cursor_too_old(extent.iter().map(|e| e.oldest).collect()));
        }
        let replay = Replay {
            next: from.to_string(),
            until: until.to_string(),
            started_ms: now_ms(),
        };
        self.change(id, Change::Replay(Some(replay))).await?;
        self.get(caller, id).await
    }

    pub async fn delete(&self, caller: &Caller, id: &str) -> Result<()> {
        check(caller, Act::ManageWebhooks)?;
        check_id(id)?;
        // The log is let go first: a failure here leaves the endpoint, to
        // be deleted again, not a hold nobody can remove.
        self.log.hold(&hold_name(id), None).await?;
        if !self.store.delete_endpoint(id).await? {
            return Err(not_found(id));
        }
        crate::metrics::metrics().webhooks.forget(id);
        Ok(())
    }

    /// The endpoint's delivery attempts, newest first.
    pub async fn deliveries(
        &self,
        caller: &Caller,
        id: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Attempt>> {
        self.get(caller, id).await?;
        self.store.attempts(id, before, limit).await
    }

    async fn change(&self, id: &str, change: Change) -> Result<()> {
        match self.store.change_endpoint(id, &change).await? {
            true => Ok(()),
            false => Err(not_found(id)),
        }
    }

    /// 400 unless the URL's host is public (every address it resolves to),
    /// or the operator allows internal addresses.
    async fn reachable(&self, url: &str) -> Result<()> {
        let parsed = address::url(url)?;
        if self.config.allow_internal {
            return Ok(());
        }
        let (host, addrs) = match address::target(&parsed) {
            Target::Ip(ip) => (ip.to_string(), vec![ip]),
            Target::Name(name, port) => {
                let lookup = tokio::net::lookup_host((name.as_str(), port));
                let found: Vec<_> = tokio::time::timeout(RESOLVE_TIMEOUT, lookup)
                    .await
                    .map_err(|_| unresolved(&name, "timed out"))?
                    .map_err(|e| unresolved(&name, &e.to_string()))?
                    .map(|a| a.ip())
                    .collect();
                (name, found)
            }
        };
        match addrs.iter().find(|ip| address::internal(**ip)) {
            Some(ip) => Err(address::refused(&host, *ip)),
            None => Ok(()),
        }
    }
}

fn unresolved(name: &str, why: &str) -> Error {
    Error::invalid(
        "webhook_host_unresolved",
        format!("the endpoint's host {name} does not resolve ({why})"),
    )
}

fn random<const N: usize>() -> Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
