//! `socialite migrate`: moves an embedded deployment onto another store
//! (MongoDB and Kafka) while it serves, losing no acknowledged write.
//!
//! 1. A backup of the source (its server makes it, or this process when
//!    none runs) is read whole into the target through the bulk paths. The
//!    backup knows the last event of the log that was there before its
//!    content was copied: every write of an event up to it is in the copy.
//! 2. Catch-up: a log tail of the source (its log's events after that
//!    point, `socialite_embedded::backup_tail`) is replayed on the target,
//!    each event as the write that queued it
//!    (`socialite_domain::transfer::replay`), in log order. Rounds repeat
//!    while they find many events.
//! 3. Verification, while the source serves: a second full copy, whose
//!    every write is on its own log ([`copies::Copy::whole`]), is brought
//!    up to its log, the target caught up to the same event, and the two
//!    compared: the same records (count and digest per kind), and a sample
//!    of users reads the same home, list, group and mention timelines on
//!    both. Then catch-up rounds again, for what came meanwhile.
//! 4. Switch-over: the source stops taking writes (it answers 503
//!    `read_only`, once the writes under way have finished); a settled
//!    log tail (its outbox drained onto its log, no deletion under way)
//!    carries the last writes. Then the move is made final: the source is
//!    marked moved to the target and from then on refuses account safety
//!    acts too (503 `moved`, naming the target), which it took while its
//!    writes were stopped, so a stolen token could be revoked; one more
//!    settled tail carries those. Writes stop for as long as these two
//!    tails take: the events of the last moments, not a copy of the store.
//! 5. A full backup of the source as it was moved is kept beside it, and
//!    the data directory is marked moved: a server started on it takes
//!    nothing and says where it went.
//!
//! The catch-up may replay events whose writes the first copy holds
//! already; each replay makes its entity what the event says it became,
//! so a replay over a state that holds it ends where the source ended.
//! If anything fails after the source stopped taking writes, it takes
//! them again: the move did not happen.

mod copies;
mod source;

use crate::backends::{open_backends, BackendConfig};
use crate::settings::FeedArgs;
use crate::transfer::{embedded_config as embedded, MOVED};
use clap::Args;
use copies::Copy;
use socialite_core::backends::Backends;
use socialite_core::ids::{now_ms, UserId};
use socialite_core::ports::Transfer;
use socialite_core::reads::Reads;
use socialite_core::relay::relay_once;
use socialite_core::transfer::catch_up::Replayed;
use socialite_core::transfer::import::copy_store;
use socialite_core::transfer::stream::Stream;
use socialite_core::transfer::verify::{compare_timelines, differing, sample, tally, Compared};
use socialite_core::transfer::warm::{warm, Posters};
use socialite_domain::transfer::backups::MIGRATE_PREFIX;
use source::Source;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Catch-up rounds while the source takes writes, at most, each time.
const ONLINE_ROUNDS: u32 = 20;
/// A round that replays fewer events than this is the last before what
/// follows it (the verification, the write stop): the write stop lasts
/// about as long as replaying what came during the last round.
const SMALL_ROUND: u64 = 200;

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
    /// Records per transaction of the first copy's import [default: 50000
    /// into the embedded store, 500 into MongoDB].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub batch: Option<u64>,
    #[command(flatten)]
    pub caps: crate::transfer::CapsArgs,
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
    let source = Source::open(&dir, &args.url, args.api_key.as_deref())?;
    let target = open_target(&args).await?;
    let stamp = now_ms();
    let name = |round: &str| format!("{MIGRATE_PREFIX}{stamp}-{round}");
    let started = Instant::now();
    if args.verify_only {
        let copy = source.copy(&name("verify")).await?;
        let verified = verify(&copy, &target, &args).await;
        copy.discard();
        return verified.map(|()| Moved::default());
    }
    // 1. The first copy, read whole into the target.
    let first = source.copy(&name("0")).await?;
    let copied = copy_store(
        &*first.backends.transfer,
        &*target.transfer,
        crate::transfer::batch_into(&args.to, args.batch),
        &args.caps.caps(),
    )
    .await
    .map_err(|e| e.chain())?;
    let records = copied.records;
    let mut from = first.log_before();
    eprintln!(
        "copied {records} records in {:.1} s; catching up from event {from}",
        started.elapsed().as_secs_f64()
    );
    first.discard();
    // 2. Catch-up while the source serves.
    let mut tally = Replayed::default();
    catch_up_online(&source, &name, "tail", &mut from, &target, &mut tally).await?;
    // 3. Verification while the source serves, then what came meanwhile.
    let checked = source.whole_copy(&name, "verify").await?;
    checked.catch_up(&mut from, &target, &mut tally).await?;
    relay(&target).await?;
    checked.up_to_its_log().await?;
    verify(&checked, &target, &args).await?;
    checked.discard();
    // The verification compared the target up to here: a replay refused
    // from now on would leave it differing unseen.
    let refused = tally.refused;
    catch_up_online(&source, &name, "after", &mut from, &target, &mut tally).await?;
    refused_since(&tally, refused)?;
    // 4. The switch-over; from here a failure gives the source its writes back.
    let stopped = Instant::now();
    let to = socialite_core::redact::uri(&args.to);
    let switch = Switch {
        source: &source,
        dir: &dir,
        to: &to,
        refused,
    };
    let marker = match switch.run(&name, &mut from, &target, &mut tally).await {
        Ok(marker) => marker,
        Err(e) => return Err(resume(&source, e).await),
    };
    eprintln!(
        "writes stopped {:.3} s for the last events; replayed {} events in all ({} changed the target, {} refused); the target takes writes: point clients to it",
        stopped.elapsed().as_secs_f64(),
        tally.events,
        tally.changed,
        tally.refused
    );
    for (seq, why) in &tally.shown {
        eprintln!("  event {seq} refused: {why}");
    }
    // 5. The source's state at the move, kept beside it. The move is made:
    // a copy that fails is said, not the move's failure.
    let kept = match source.copy(&name("moved")).await {
        Ok(mut kept) => {
            kept.keep();
            kept.scratch.dir.display().to_string()
        }
        Err(e) => {
            format!("no backup: one could not be taken ({e}); take one with socialite backup")
        }
    };
    // The first copy's posters, then those who posted during the move.
    let mut posters = copied.posters;
    posters.merge(&tally.posters);
    let warmed = warm_recent(&target, &posters, args.warm as usize).await?;
    eprintln!(
        "moved in {:.1} s; the source takes no writes ({} written); its state at the move: {kept}",
        started.elapsed().as_secs_f64(),
        marker.display(),
    );
    Ok(Moved {
        copied: records,
        replayed: tally,
        warmed,
    })
}

/// Rounds of log tails replayed onto the target while the source serves,
/// until one finds few events (or `ONLINE_ROUNDS` have run).
async fn catch_up_online(
    source: &Source,
    name: &impl Fn(&str) -> String,
    label: &str,
    from: &mut u64,
    target: &Backends,
    tally: &mut Replayed,
) -> Result<(), String> {
    for round in 1..=ONLINE_ROUNDS {
        let tail = source
            .tail(&name(&format!("{label}-{round}")), *from)
            .await?;
        let replayed = tail.catch_up(from, target, tally).await?;
        drop(tail);
        relay(target).await?;
        eprintln!("{label} round {round}: replayed {replayed} events written meanwhile");
        if replayed < SMALL_ROUND {
            break;
        }
    }
    Ok(())
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

/// The switch-over: what it needs besides the catch-up's place.
struct Switch<'a> {
    source: &'a Source,
    /// The source's data directory.
    dir: &'a Path,
    /// The target's address, without credentials.
    to: &'a str,
    /// Replays refused up to the verification.
    refused: u64,
}

impl Switch<'_> {
    /// Stops the source's writes and replays a settled tail's events onto
    /// the target; then makes the move final (the source marked moved to
    /// the target, so that it takes no more account safety acts), carries
    /// a second settled tail with the safety acts it took until then, and
    /// marks the data directory moved. Returns the marker's path.
    async fn run(
        &self,
        name: &impl Fn(&str) -> String,
        from: &mut u64,
        target: &Backends,
        tally: &mut Replayed,
    ) -> Result<PathBuf, String> {
        self.source.read_only(true).await?;
        let last = self.source.settled_tail(name, "last", *from).await?;
        last.catch_up(from, target, tally).await?;
        drop(last);
        relay(target).await?;
        self.source.seal(self.to).await?;
        let before = tally.events;
        let fin = self.source.settled_tail(name, "final", *from).await?;
        fin.catch_up(from, target, tally).await?;
        drop(fin);
        relay(target).await?;
        eprintln!(
            "marked moved: replayed {} safety acts taken after the last tail",
            tally.events - before
        );
        refused_since(tally, self.refused)?;
        let marker = self.dir.join(MOVED);
        let note = format!(
            "moved to {} at {} ms by socialite migrate; this data directory takes no writes\n",
            self.to,
            now_ms()
        );
        std::fs::write(&marker, note).map_err(|e| format!("{}: {e}", marker.display()))?;
        Ok(marker)
    }
}

/// Fails when a replay was refused since `before` was counted (at the
/// verification, which compared the target only up to there): the target
/// would differ from the source.
fn refused_since(tally: &Replayed, before: u64) -> Result<(), String> {
    if tally.refused == before {
        return Ok(());
    }
    let shown: String = tally
        .shown
        .iter()
        .map(|(seq, why)| format!("\n  event {seq}: {why}"))
        .collect();
    Err(format!(
        "{} events written after the verification were refused on the target, which would then differ from the source:{shown}",
        tally.refused - before
    ))
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
async fn verify(copy: &Copy, target: &Backends, args: &MigrateArgs) -> Result<(), String> {
    let users = args.sample as usize;
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
    // The target read with timelines of its own in memory: a read builds
    // a timeline it lacks, and one built in the target's store now would
    // lack the events replayed after the verification until the target's
    // workers deliver them. The copy's are in memory already.
    let mut embedded = embedded(Path::new("."));
    embedded.feed = args.feed.config();
    let target_stores = socialite_core::feed::Stores {
        timelines: embedded.memory_timelines(),
        ..target.stores()
    };
    let (source_reads, target_reads) = (
        Reads::new(copy.backends.stores()),
        Reads::new(target_stores),
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
