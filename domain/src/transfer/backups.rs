//! Backups a server makes when asked (`POST /admin/backup`, the gRPC
//! `Backup`): each is a full copy of the stores, written beside them in the
//! data directory's backup directory, so without a rule a loop of requests
//! fills the disk (40 copies in 15 s). The rule:
//!
//! - **One at a time.** A request while a backup is being made is refused
//!   with 409 `backup_in_progress` ([`backup_in_progress`]); the tools that
//!   ask for backups (`socialite backup`, `socialite migrate`) wait and ask
//!   again.
//! - **The newest few kept.** After each backup the server keeps the newest
//!   `max_backups` in the directory and removes the older ones
//!   ([`to_prune`]; 0 keeps them all). `socialite backup` moves its copy out
//!   of the directory, so what it made is the operator's to keep; a backup
//!   left there is the server's to prune.
//! - **Migrate's own are migrate's.** `socialite migrate` names its backups
//!   `migrate-…` ([`MIGRATE_PREFIX`]) and removes each once it has read it;
//!   pruning leaves them alone, so it never takes the copy a migration is
//!   reading.

use crate::error::Error;

/// Backups kept in the backup directory unless configured otherwise.
pub const DEFAULT_MAX_BACKUPS: usize = 3;

/// How `socialite migrate` names the backups it makes and removes itself.
pub const MIGRATE_PREFIX: &str = "migrate-";

/// A backup found in the backup directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBackup {
    pub name: String,
    /// When it was made (its directory's last change), in ms since the epoch.
    pub made_ms: u64,
}

/// The backups to remove so that at most `keep` of those this rule prunes
/// are left (`keep` 0: none removed): the oldest, ties by name. Migrate's
/// own are neither counted nor removed.
pub fn to_prune(mut held: Vec<HeldBackup>, keep: usize) -> Vec<String> {
    held.retain(|b| !b.name.starts_with(MIGRATE_PREFIX));
    if keep == 0 || held.len() <= keep {
        return Vec::new();
    }
    held.sort_by(|a, b| (a.made_ms, &a.name).cmp(&(b.made_ms, &b.name)));
    let extra = held.len() - keep;
    held.into_iter().take(extra).map(|b| b.name).collect()
}

/// The refusal of a backup while another is being made.
pub fn backup_in_progress() -> Error {
    Error::conflict(
        "backup_in_progress",
        "a backup is being made, and they are made one at a time: ask again once it ends",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(name: &str, made_ms: u64) -> HeldBackup {
        HeldBackup {
            name: name.into(),
            made_ms,
        }
    }

    #[test]
    fn the_oldest_go_past_the_cap_but_never_migrates_own() {
        let all = vec![
            held("nightly-3", 30),
            held("migrate-1-0", 5),
            held("nightly-1", 10),
            held("b", 20),
            held("a", 20),
            held("nightly-4", 40),
        ];
        assert_eq!(to_prune(all.clone(), 3), ["nightly-1", "a"]);
        assert_eq!(
            to_prune(all.clone(), 1),
            ["nightly-1", "a", "b", "nightly-3"]
        );
        assert!(to_prune(all.clone(), 5).is_empty());
        assert!(to_prune(all, 0).is_empty(), "0 keeps them all");
        let migrating = vec![held("migrate-9-last-0", 1), held("migrate-9-1", 2)];
        assert!(to_prune(migrating, 1).is_empty());
    }

    #[test]
    fn a_second_backup_at_once_is_a_conflict() {
        let e = backup_in_progress();
        assert_eq!(
            (e.code(), e.kind()),
            ("backup_in_progress", crate::error::ErrorKind::Conflict)
        );
    }
}
