//! `socialite migrate`: moves an embedded deployment onto another store
//! (MongoDB and Kafka) while it serves, losing no acknowledged write.
//!
//! 1. A backup of the source (its server makes it, or this process when
//!    none runs) is read whole into the target through the bulk paths. The
//!    backup knows the last event of the log that was there before its
//!    content was copied: every write of an event up to it is in the copy.
//! 2. Catch-up: a newer backup's log holds the events after that point;
//!    each is replayed on the target as the write that queued it
//!    (`socialite_domain::transfer::replay`), in log order. Rounds repeat while
//!    they find many events.
//! 3. Switch-over: the source stops taking writes (it answers 503
//!    `read_only`, once the writes under way have finished), its outbox
//!    drains onto its log, a last backup is taken and its remaining events
//!    are replayed. Every acknowledged write is then on the target, but
//!    for account safety acts (revocations, suspensions): the source still
//!    takes those, so a stolen token can be revoked during the move.
//! 4. Verification: the last backup (brought up to its own log, which may
//!    hold a safety act its content missed) and the target hold the same
//!    records (count and digest per kind), and a sample of users reads the
//!    same home, list, group and mention timelines on both.
//! 5. The move made final: the source is marked moved to the target, and
//!    from then on refuses safety acts too (503 `moved`, naming the
//!    target), once those under way have finished. One more backup
//!    carries the safety acts it took since the last one, replayed onto the
//!    target. Then the data directory is marked moved: a server started on
//!    it takes nothing and says where it went.
//!
//! The catch-up may replay events whose writes the first copy holds
//! already; each replay makes its entity what the event says it became,
//! so a replay over a state that holds it ends where the source ended.
//! If anything fails after the source stopped taking writes, it takes
//! them again: the move did not happen.

use crate::admin::Admin;
use crate::backends::{open_backends, open_keeping_embedded, BackendConfig};
use crate::settings::FeedArgs;
use crate::transfer::{embedded_config as embedded, MOVED};
use clap::Args;
use socialite_core::backends::Backends;
use socialite_core::ids::{now_ms, UserId};
use socialite_core::ports::{Backup, Transfer};
use socialite_core::reads::Reads;
use socialite_core::relay::relay_once;
use socialite_core::transfer::catch_up::{Replayed, Target};
use socialite_core::transfer::import::copy_store;
use socialite_core::transfer::stream::Stream;
use socialite_core::transfer::verify::{compare_timelines, differing, sample, tally, Compared};
use socialite_core::transfer::warm::{warm, Posters};
use socialite_domain::transfer::backups::MIGRATE_PREFIX;
use socialite_embedded::backup::{EmbeddedBackup, Position};
use socialite_embedded::{EmbeddedLog, EmbeddedStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Catch-up rounds while the source takes writes, at most.
const ONLINE_ROUNDS: u32 = 5;
/// A round that replays fewer events than this is the last before the
/// switch-over: the write stop then lasts about as long as one backup.
const SMALL_ROUND: u64 = 10_000;
/// Events read from a backup's log at a time.
const EVENTS_PER_READ: usize = 1000;

#[derive(Args)]
pub struct MigrateArgs {
    /// The deployment to move: `embedded://DATA_DIR`. When a server holds
    /// it, the server is asked (--url, --api-key) for its backups and to
    /// stop taking writes at the switch-over.
    #[arg(long)]
    pub from: String,
    /// The store to move it to: `mongodb://HOST[:PORT][/DATABASE]`, or
    /// `embedded://DIR` (a new data directory).
    #[arg(long)]
    pub to: String,
    /// The target's event log: `kafka://HOST:PORT` beside MongoDB;
    /// `embedded://` (the target's directory) beside an embedded store.
    #[arg(long, default_value = "embedded://")]
    pub event_log: String,
    /// When a server holds the source: its REST address.
    #[arg(long, env = "SOCIALITE_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// When a server holds the source: an API key with the `admin` scope
    /// (default: the one in DATA_DIR/auth/admin-key).
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Only compare the two sides (records and sampled timelines); move
    /// nothing.
    #[arg(long)]
    pub verify_only: bool,
    /// Users whose timelines the verification reads on both sides.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub sample: u64,
    /// Then build the home timelines of this many users, those who posted
    /// last, on the target (where its feed model stores timelines; the
    /// others warm on their first read).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub warm: u64,
    /// The target's feed model and cache settings, as its services run.
    #[command(flatten)]
    pub feed: FeedArgs,
    /// Records per transaction of the first copy's import [default: 10000
    /// into the embedded store, 500 into MongoDB].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub batch: Option<u64>,
    #[command(flatten)]
    pub caps: crate::transfer::CapsArgs,
}

/// Where the source's backups come from.
enum Source {
    /// No server holds the data directory: this process does, so nobody
    /// writes to it while the move runs.
    Local(EmbeddedBackup),
    /// Its server makes the backups and stops its writes.
    Server(Admin),
}

impl Source {
    fn open(dir: &Path, args: &MigrateArgs) -> Result<Source, String> {
        if !dir.join("content.redb").exists() {
            return Err(format!("{}: no embedded store to move", dir.display()));
        }
        let config = embedded(dir);
        Ok(match (config.open_store(), config.open_log()) {
            (Ok(store), Ok(log)) => Source::Local(EmbeddedBackup {
                store: Some(store),
                log: Some(log),
                root: dir.join("backups"),
            }),
            _ => Source::Server(Admin::new(&args.url, args.api_key.as_deref(), dir)?),
        })
    }

    /// A new backup named `name`, under DATA_DIR/backups.
    async fn backup(&self, name: &str) -> Result<PathBuf, String> {
        match self {
            Source::Local(b) => {
                // No server runs its relay and deletions: this process
                // does, so that the copy's log holds every write.
                if let (Some(store), Some(log)) = (&b.store, &b.log) {
                    settle(store, log).await.map_err(|e| e.chain())?;
                }
                b.backup_to(name).await.map(|d| d.0).map_err(|e| e.chain())
            }
            Source::Server(admin) => admin.backup(name).await.map(|d| d.0),
        }
    }

    async fn read_only(&self, on: bool) -> Result<(), String> {
        match self {
            Source::Local(_) => Ok(()),
            Source::Server(admin) => admin.read_only(on).await,
        }
    }

    /// A copy taken once every write the source acknowledged is on its log
    /// (its outbox drained, no deletion under way), named by `name(label)`
    /// and the attempt.
    async fn settled_copy(
        &self,
        name: &impl Fn(&str) -> String,
        label: &str,
    ) -> Result<Copy, String> {
        // The outbox drains within a relay's round; a deletion under way
        // ends within its steps. Until both have, a copy's log misses
        // writes.
        let mut attempt = 0;
        loop {
            let copy = Copy::open(self.backup(&name(&format!("{label}-{attempt}"))).await?).await?;
            if copy.settled().await? {
                return Ok(copy);
            }
            copy.discard();
            attempt += 1;
            if attempt == 100 {
                return Err(
                    "the source's outbox does not drain onto its log: is its relay running?".into(),
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Finishes the deletions a stopped server left and moves its outbox onto
/// its log.
async fn settle(
    store: &Arc<EmbeddedStore>,
    log: &Arc<EmbeddedLog>,
) -> socialite_core::error::Result<()> {
    use socialite_core::ports::Deletions;
    store.resume_deletions().await?;
    while relay_once(&**store, &**log).await? > 0 {}
    Ok(())
}

/// A backup, opened to be read; deleted when dropped, unless kept, so a
/// move that fails anywhere leaves none of its backups behind.
struct Copy {
    dir: PathBuf,
    backends: Backends,
    store: Arc<EmbeddedStore>,
    log: Arc<EmbeddedLog>,
    position: Position,
    /// Last: dropped once the stores above have closed their files.
    scratch: Scratch,
}

/// A backup's directory, deleted when dropped unless `keep`.
struct Scratch {
    dir: PathBuf,
    keep: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("could not remove {}: {e}", self.dir.display());
        }
    }
}

impl Copy {
    async fn open(dir: PathBuf) -> Result<Copy, String> {
        let scratch = Scratch {
            dir: dir.clone(),
            keep: false,
        };
        let position = Position::read(&dir).map_err(|e| e.chain())?;
        let config = BackendConfig::embedded(embedded(&dir));
        let (backends, parts) = open_keeping_embedded(&config)
            .await
            .map_err(|e| e.chain())?;
        let (Some(store), Some(log)) = parts else {
            return Err(format!("{}: not an embedded backup", dir.display()));
        };
        Ok(Copy {
            dir,
            backends,
            store,
            log,
            position,
            scratch,
        })
    }

    /// Whether every write in it is on its log: its outbox is empty and no
    /// deletion is under way.
    async fn settled(&self) -> Result<bool, String> {
        use socialite_core::ports::{Deletions, Outbox};
        let pending = Outbox::backlog(&*self.store).await;
        let deleting = Deletions::pending_deletions(&*self.store).await;
        Ok(pending.map_err(|e| e.chain())? == 0 && deleting.map_err(|e| e.chain())?.is_empty())
    }

    /// Replays onto `target` the events of its log after `from`; moves
    /// `from` to the last one replayed.
    async fn catch_up(
        &self,
        from: &mut u64,
        target: &Backends,
        tally: &mut Replayed,
    ) -> Result<u64, String> {
        use socialite_core::ports::Rewind;
        let oldest = self.log.first_retained().map_err(|e| e.chain())?;
        if self.log.head() > *from && oldest > *from + 1 {
            return Err(format!(
                "the source's log no longer holds the events after {from} (its oldest is {oldest}): more writes came during the copy than it keeps; run migrate again"
            ));
        }
        let to = Target {
            transfer: &*target.transfer,
            content: &*target.content,
        };
        let mut replayed = 0;
        loop {
            let events = self
                .log
                .read_after(*from, EVENTS_PER_READ)
                .map_err(|e| e.chain())?;
            let Some((last, _)) = events.last() else {
                return Ok(replayed);
            };
            let last = *last;
            to.replay(&events, tally).await.map_err(|e| e.chain())?;
            replayed += events.len() as u64;
            *from = last;
        }
    }

    /// Brings the copy's content up to its own log: the events after its
    /// position replayed onto it (a replay over a state that holds it
    /// changes nothing). The source takes account safety acts while its
    /// writes are stopped, so one made while the copy was taken may be in
    /// its log and not its content; the target replayed it from the log,
    /// so the copy must too before the two are compared.
    async fn up_to_its_log(&self) -> Result<(), String> {
        let mut from = self.position.log_before;
        let mut tally = Replayed::default();
        self.catch_up(&mut from, &self.backends, &mut tally)
            .await
            .map(drop)
    }

    /// Closes it and deletes its files.
    fn discard(self) {
        drop(self);
    }

    /// Keeps its files once it is closed.
    fn keep(&mut self) {
        self.scratch.keep = true;
    }
}

/// The data directory `embedded://DIR` names.
fn data_dir_of(uri: &str) -> Result<PathBuf, String> {
    match uri.strip_prefix("embedded://") {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => Err(format!(
            "--from {uri}: expected embedded://DATA_DIR, the data directory to move"
        )),
    }
}

async fn open_target(args: &MigrateArgs) -> Result<Backends, String> {
    let dir = args.to.strip_prefix("embedded://").unwrap_or("");
    let mut embedded = embedded(Path::new(if dir.is_empty() { "." } else { dir }));
    embedded.feed = args.feed.config();
    let config = BackendConfig {
        embedded,
        store: args.to.clone(),
        event_log: args.event_log.clone(),
    };
    open_backends(&config).await.map_err(|e| e.chain())
}

/// What a move did.
#[derive(Debug, Default, Clone)]
pub struct Moved {
    /// Records of the first copy.
    pub copied: u64,
    /// Events replayed after it, written while the copy was read.
    pub replayed: Replayed,
    /// The users whose home timelines were built (`--warm`).
    pub warmed: Vec<UserId>,
}

pub async fn migrate(args: MigrateArgs) -> Result<Moved, String> {
    let dir = data_dir_of(&args.from)?;
    if args.to.starts_with("embedded://") && data_dir_of(&args.to)? == dir {
        return Err("--to names the data directory being moved".into());
    }
    let source = Source::open(&dir, &args)?;
    let target = open_target(&args).await?;
    let stamp = now_ms();
    let name = |round: &str| format!("{MIGRATE_PREFIX}{stamp}-{round}");
    let started = Instant::now();
    if args.verify_only {
        let copy = Copy::open(source.backup(&name("verify")).await?).await?;
        let verified = verify(&copy, &target, args.sample as usize).await;
        copy.discard();
        return verified.map(|()| Moved::default());
    }
    // 1. The first copy, read whole into the target.
    let first = Copy::open(source.backup(&name("0")).await?).await?;
    let copied = copy_store(
        &*first.backends.transfer,
        &*target.transfer,
        crate::transfer::batch_into(&args.to, args.batch),
        &args.caps.caps(),
    )
    .await
    .map_err(|e| e.chain())?;
    let records = copied.records;
    let mut from = first.position.log_before;
    eprintln!(
        "copied {records} records in {:.1} s; catching up from event {from}",
        started.elapsed().as_secs_f64()
    );
    first.discard();
    // 2. Catch-up while the source serves.
    let mut tally = Replayed::default();
    for round in 1..=ONLINE_ROUNDS {
        let copy = Copy::open(source.backup(&name(&round.to_string())).await?).await?;
        let replayed = copy.catch_up(&mut from, &target, &mut tally).await?;
        copy.discard();
        relay(&target).await?;
        eprintln!("round {round}: replayed {replayed} events written during the copy");
        if replayed < SMALL_ROUND {
            break;
        }
    }
    // 3. The switch-over; from here a failure gives the source its writes back.
    source.read_only(true).await?;
    let stopped = Instant::now();
    let moved = switch_over(&source, &name, &mut from, &target, &mut tally).await;
    let last = match moved {
        Ok(last) => last,
        Err(e) => return Err(resume(&source, e).await),
    };
    eprintln!(
        "writes stopped {:.1} s for the last copy; replayed {} events in all ({} changed the target, {} refused)",
        stopped.elapsed().as_secs_f64(),
        tally.events,
        tally.changed,
        tally.refused
    );
    for (seq, why) in &tally.shown {
        eprintln!("  event {seq} refused: {why}");
    }
    // 4. Verification.
    if let Err(e) = verify(&last, &target, args.sample as usize).await {
        return Err(resume(&source, e).await);
    }
    // 5. Final: the safety acts taken since the last copy, carried over.
    let to = socialite_core::redact::uri(&args.to);
    let mut last = match finish(&source, &to, &name, &mut from, &target, &mut tally, last).await {
        Ok(last) => last,
        Err(e) => return Err(resume(&source, e).await),
    };
    // The source's state at the move, kept beside it.
    last.keep();
    // The first copy's posters, then those who posted during the move.
    let mut posters = copied.posters;
    posters.merge(&tally.posters);
    let warmed = warm_recent(&target, &posters, args.warm as usize).await?;
    let marker = dir.join(MOVED);
    let note = format!(
        "moved to {} at {} ms by socialite migrate; this data directory takes no writes\n",
        socialite_core::redact::uri(&args.to),
        now_ms()
    );
    std::fs::write(&marker, note).map_err(|e| format!("{}: {e}", marker.display()))?;
    eprintln!(
        "moved in {:.1} s; the source takes no writes ({} written); its last backup is {}: point clients to the new deployment",
        started.elapsed().as_secs_f64(),
        marker.display(),
        last.dir.display()
    );
    Ok(Moved {
        copied: records,
        replayed: tally,
        warmed,
    })
}

/// Builds the home timelines of the `n` users who posted last; the users
/// whose timelines were built (none where the model stores none).
async fn warm_recent(
    target: &Backends,
    posters: &Posters,
    n: usize,
) -> Result<Vec<UserId>, String> {
    let users = posters.recent(n);
    let built = warm(&target.stores(), &users)
        .await
        .map_err(|e| e.chain())?;
    if n > 0 {
        eprintln!(
            "warmed the home timelines of {} users who posted last",
            built.len()
        );
    }
    Ok(built)
}

/// The last copy once the source stopped taking writes, with its events
/// replayed onto the target.
async fn switch_over(
    source: &Source,
    name: &impl Fn(&str) -> String,
    from: &mut u64,
    target: &Backends,
    tally: &mut Replayed,
) -> Result<Copy, String> {
    let last = source.settled_copy(name, "last").await?;
    last.catch_up(from, target, tally).await?;
    relay(target).await?;
    last.up_to_its_log().await?;
    Ok(last)
}

/// Marks a server's deployment moved to `to`, so that it takes no more
/// account safety acts, and replays onto the target those it took since
/// `last` (its writes were stopped, those were not): the copy that holds
/// everything the source acknowledged. A source no server runs took none.
async fn finish(
    source: &Source,
    to: &str,
    name: &impl Fn(&str) -> String,
    from: &mut u64,
    target: &Backends,
    tally: &mut Replayed,
    last: Copy,
) -> Result<Copy, String> {
    let Source::Server(admin) = source else {
        return Ok(last);
    };
    admin.moved(to).await?;
    last.discard();
    let before = tally.events;
    let tail = source.settled_copy(name, "final").await?;
    tail.catch_up(from, target, tally).await?;
    relay(target).await?;
    eprintln!(
        "marked moved: replayed {} safety acts taken after the last copy",
        tally.events - before
    );
    Ok(tail)
}

/// Gives the source its writes back after a failed move; the error to show.
async fn resume(source: &Source, error: String) -> String {
    match source.read_only(false).await {
        Ok(()) => format!("{error}\nthe move did not happen: the source takes writes again"),
        Err(e) => format!(
            "{error}\nthe move did not happen, and the source still refuses writes ({e}): PUT /admin/read-only {{\"read_only\": false}} on it"
        ),
    }
}

/// Puts the events the replays queued on the target's log, unless another
/// process relays them (its relay holds the lease).
async fn relay(target: &Backends) -> Result<(), String> {
    if !target.outbox.lease().await.map_err(|e| e.chain())? {
        return Ok(());
    }
    while relay_once(&*target.outbox, &*target.log)
        .await
        .map_err(|e| e.chain())?
        > 0
    {}
    Ok(())
}

/// Compares the copy with the target; an error names what differs.
async fn verify(copy: &Copy, target: &Backends, users: usize) -> Result<(), String> {
    let view = |t: &Arc<dyn Transfer>| {
        let t = t.clone();
        async move { Stream::open(&*t).await }
    };
    let chain = |e: socialite_core::error::Error| e.chain();
    let held = tally(&mut view(&copy.backends.transfer).await.map_err(chain)?)
        .await
        .map_err(chain)?;
    let theirs = tally(&mut view(&target.transfer).await.map_err(chain)?)
        .await
        .map_err(chain)?;
    for (kind, (n, _)) in &held.kinds {
        let there = theirs.kinds.get(kind).map(|k| k.0).unwrap_or(0);
        eprintln!("  {kind}: {n} in the source, {there} in the target");
    }
    let sampled = sample(&held.users, users);
    let (source_reads, target_reads) = (
        Reads::new(copy.backends.stores()),
        Reads::new(target.stores()),
    );
    let compared: Compared =
        compare_timelines(&source_reads, &target_reads, &sampled, &held.groups)
            .await
            .map_err(chain)?;
    let kinds = differing(&held, &theirs);
    eprintln!(
        "verified: {} of {} kinds of records differ; {} timelines of {} users read on both sides, {} differ",
        kinds.len(),
        held.kinds.len().max(theirs.kinds.len()),
        compared.timelines,
        sampled.len(),
        compared.mismatches.len()
    );
    if kinds.is_empty() && compared.mismatches.is_empty() {
        return Ok(());
    }
    let mut why = String::from("the target differs from the source:");
    for (kind, s, t) in kinds {
        why +=
            &format!("\n  {kind}: {s} records in the source, {t} in the target, or other contents");
    }
    for m in compared.mismatches.iter().take(10) {
        why += &format!(
            "\n  {}: source {}, target {}",
            m.timeline, m.source, m.target
        );
    }
    Err(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_is_a_named_data_directory() {
        assert_eq!(data_dir_of("embedded://d").unwrap(), PathBuf::from("d"));
        assert!(data_dir_of("embedded://").is_err());
        assert!(data_dir_of("mongodb://h").is_err());
    }
}
