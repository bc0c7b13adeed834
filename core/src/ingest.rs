//! Ingestion: validates writes and stores them. The stores queue the matching
//! events in their outbox in the same transaction; the relay takes them to the
//! log. Everything here is shared by the REST and gRPC transports, and every
//! call is checked against its caller's permissions (`socialite_domain::accounts::access`).
//!
//! Here: the `Ingest` struct and what every write shares (the write gate
//! and read-only switch, acting as a user, new post ids, backups). Each
//! feature's writes are `impl Ingest` blocks in its folder
//! (`crate::accounts`, `crate::graph`, `crate::posts`,
//! `crate::interactions`, `crate::markers`, `crate::deletion`).

use crate::backends::Backends;
use crate::backups::Backups;
use crate::budgets::{BudgetConfig, Budgets, Cost};
use crate::error::{Error, Result};
use crate::feed::hybrid::Marks;
use crate::feed::stamp::{Advance, WriteEpoch};
use crate::gate::{Passed, WriteGate};
use crate::ids::{PostId, PostIdGen, UserId};
use crate::load::Load;
use crate::ports::{ContentStore, GraphStore};
use crate::reads_first::{ReadsFirst, ReadsFirstConfig};
use crate::standings::Standings;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::feed::hybrid::Hybrid;
use socialite_domain::transfer::backups::DEFAULT_MAX_BACKUPS;
use std::sync::Arc;
use std::time::Duration;

/// Ids tried for one new post when the store holds a post under them.
const NEW_ID_TRIES: u32 = 16;

pub use crate::checks::DEFAULT_MAX_FOLLOWING;

pub struct Ingest {
    pub(crate) content: Arc<dyn ContentStore>,
    pub(crate) graph: Arc<dyn GraphStore>,
    pub(crate) accounts: Arc<Standings>,
    pub(crate) ids: PostIdGen,
    pub(crate) max_following: u64,
    /// Where the stores are files of this process: its backups.
    pub(crate) backups: Option<Backups>,
    pub(crate) gate: WriteGate,
    /// Advanced by the writes that change pages beside their timelines.
    pub(crate) epoch: Arc<WriteEpoch>,
    /// Whether posts may be merged at read time, and whose.
    pub(crate) hybrid: Hybrid,
    pub(crate) marks: Arc<Marks>,
    /// What each credential may still write ([`crate::budgets`]).
    pub(crate) budgets: Arc<Budgets>,
    /// Fanout's lag, and the writes shed to hold freshness ([`crate::load`]).
    pub(crate) load: Arc<Load>,
    /// The writes the reads' latency allows ([`crate::reads_first`]).
    pub(crate) reads_first: Arc<ReadsFirst>,
}

impl Ingest {
    /// `node` tells producers apart in post ids (0..1024).
    pub async fn new(backends: &Backends, node: u16) -> Result<Ingest> {
        let ids = PostIdGen::new(node);
        if let Some(newest) = backends.content.newest_post_id().await? {
            ids.advance_past(newest);
        }
        Ok(Ingest {
            content: backends.content.clone(),
            graph: backends.graph.clone(),
            accounts: backends.accounts.clone(),
            ids,
            max_following: DEFAULT_MAX_FOLLOWING,
            backups: backends
                .backup
                .clone()
                .map(|b| Backups::new(b, DEFAULT_MAX_BACKUPS)),
            gate: WriteGate::default(),
            epoch: backends.epoch.clone(),
            hybrid: backends.feed.hybrid,
            marks: backends.marks.clone(),
            budgets: Arc::new(Budgets::new(BudgetConfig::default())),
            load: Arc::new(Load::new(Duration::ZERO, backends.late.clone())),
            reads_first: Arc::new(ReadsFirst::new(ReadsFirstConfig::OFF)),
        })
    }

    /// Refuses every write from the start, safety acts too: a data
    /// directory that was moved to `to` (see [`crate::gate`]).
    pub fn moved_from_start(mut self, to: &str) -> Ingest {
        self.gate = WriteGate::sealed(to);
        self
    }

    /// Stops (`on`) or resumes taking writes: an operator's act, made by
    /// `socialite migrate` at its switch-over. Stopping returns once the
    /// writes already under way have finished: every write acknowledged
    /// before is in any copy taken after. Account safety acts (revoking
    /// tokens, suspending) go on while writes are stopped, until the
    /// deployment is marked moved (`moved_to`: where it went), which stops
    /// them too, once those under way have finished ([`crate::gate`]).
    pub async fn set_read_only(
        &self,
        caller: &Caller,
        on: bool,
        moved_to: Option<&str>,
    ) -> Result<()> {
        check(caller, Act::Operate)?;
        if moved_to
            .is_some_and(|to| to.is_empty() || to.len() > 1024 || to.contains(char::is_control))
        {
            return Err(Error::invalid(
                "invalid_body",
                "moved_to is the address of the deployment moved to: 1 to 1,024 characters, no control characters",
            ));
        }
        match (on, moved_to) {
            (true, None) => self.gate.close().await,
            (true, Some(to)) => self.gate.seal(&crate::redact::uri(to)).await,
            (false, None) => self.gate.open(),
            (false, Some(_)) => {
                return Err(Error::invalid(
                    "invalid_body",
                    "moved_to marks a deployment moved, which takes no writes: send it with read_only true",
                ))
            }
        }
        Ok(())
    }

    pub fn is_read_only(&self) -> bool {
        self.gate.is_closed()
    }

    /// Backs the deployment's embedded stores up while it serves, into the
    /// new directory `name` under its backup directory: an operator's act,
    /// one at a time, after which the oldest backups past the cap go
    /// ([`socialite_domain::transfer::backups`]). With `log_after`, only
    /// the log's events after that sequence (a log tail, which takes no
    /// turn). Returns where, and the rows copied.
    pub async fn backup(
        &self,
        caller: &Caller,
        name: &str,
        log_after: Option<u64>,
    ) -> Result<(std::path::PathBuf, u64)> {
        check(caller, Act::Operate)?;
        crate::checks::check_backup_name(name)?;
        let Some(backups) = &self.backups else {
            return Err(Error::invalid(
                "backup_unsupported",
                "this deployment's stores are MongoDB and Kafka: back them up with their own tools",
            ));
        };
        match log_after {
            Some(after) => backups.log_tail(name, after).await,
            None => backups.make(name).await,
        }
    }

    /// Keeps at most `max` backups in the backup directory (0: all).
    pub fn with_max_backups(mut self, max: usize) -> Ingest {
        self.backups = self.backups.map(|b| b.keeping(max));
        self
    }

    /// Caps how many accounts one user may follow.
    pub fn with_max_following(mut self, max: u64) -> Ingest {
        self.max_following = max;
        self
    }

    /// Meters writes with these budgets (the default: users' only).
    pub fn with_budgets(mut self, config: BudgetConfig) -> Ingest {
        self.budgets = Arc::new(Budgets::new(config));
        self
    }

    /// Sheds writes by fanout's lag against this freshness target (zero:
    /// never); [`Load::watch`] must run for the lag to be known.
    pub fn with_freshness_target(mut self, target: Duration) -> Ingest {
        self.load = Arc::new(Load::new(target, self.load.late().clone()));
        self
    }

    /// Admits writes at the rate the reads' latency allows (off: always);
    /// [`ReadsFirst::watch`] must run, and the reads be observed, for it
    /// to act.
    pub fn with_reads_first(mut self, config: ReadsFirstConfig) -> Ingest {
        self.reads_first = Arc::new(ReadsFirst::new(config));
        self
    }

    /// The guard of the reads' latency, which the APIs tell of each read.
    pub fn reads_first(&self) -> &Arc<ReadsFirst> {
        &self.reads_first
    }

    /// Fanout's lag as this producer sees it.
    pub fn load(&self) -> &Arc<Load> {
        &self.load
    }

    /// The budgets writes spend, for the API to report what is left.
    pub fn budgets(&self) -> &Arc<Budgets> {
        &self.budgets
    }

    /// Lets the caller's write through the gate, once its checks passed:
    /// refused while writes are stopped ([`crate::gate`]), as a share of
    /// the writes shed while fanout is behind ([`crate::load`]) or while
    /// reads are slow beside writes ([`crate::reads_first`]), or when the
    /// caller's budget lacks the act's points ([`crate::budgets`]); a
    /// write refused spends nothing.
    pub(crate) fn enter(&self, caller: &Caller, cost: Cost) -> Result<Passed<'_>> {
        let passed = self.gate.enter()?;
        self.load.admit(cost)?;
        self.reads_first.admit(cost)?;
        self.budgets.charge(caller, cost)?;
        Ok(passed)
    }

    /// [`Self::enter`] for a write that changes what readers' pages show
    /// (beyond the timelines fanout changes): the write epoch advances when
    /// it ends ([`crate::feed::stamp`]).
    pub(crate) fn enter_changing(
        &self,
        caller: &Caller,
        cost: Cost,
    ) -> Result<(Passed<'_>, Advance<'_>)> {
        let passed = self.enter(caller, cost)?;
        Ok((passed, self.epoch.advancing()))
    }

    /// [`Self::enter_changing`] for a write whose effect beyond every
    /// page's stamp is on `readers`' own timelines only (their follows,
    /// mutes, priorities...): the other readers' ranked orders keep what
    /// they ranked from ([`crate::feed::stamp::WriteEpoch::of_reader`]).
    pub(crate) fn enter_changing_for(
        &self,
        caller: &Caller,
        cost: Cost,
        readers: Vec<UserId>,
    ) -> Result<(Passed<'_>, Advance<'_>)> {
        let passed = self.enter(caller, cost)?;
        Ok((passed, self.epoch.advancing_for(readers)))
    }

    /// The caller may act as `user`, and `user` may act at all.
    pub(crate) async fn acting_as(&self, caller: &Caller, user: &UserId) -> Result<()> {
        check(caller, Act::ActAs(user))?;
        self.accounts.may_act(user).await
    }

    /// Runs `write` with a new post id; again with the next id while the
    /// store holds a post under it (`post_id_taken`: one that an older
    /// version stored under an id ahead of the clock), a few times.
    pub(crate) async fn with_new_id<T, Fut>(
        &self,
        mut write: impl FnMut(PostId) -> Fut,
    ) -> Result<T>
    where
        Fut: std::future::Future<Output = Result<T>>,
    {
        let mut tries = 1;
        loop {
            match write(self.ids.next()).await {
                Err(e) if e.code() == "post_id_taken" && tries < NEW_ID_TRIES => tries += 1,
                done => return done,
            }
        }
    }
}
