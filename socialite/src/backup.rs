//! `socialite backup` and `socialite restore`: a consistent copy of the
//! embedded stores, taken while the server runs (it makes the copy, asked
//! over its admin route) or while none does (this process makes it), and
//! a new data directory made from one.

use clap::Args;
use socialite_embedded::backup::EmbeddedBackup;
use socialite_runtime::admin::Admin;
use socialite_runtime::transfer::embedded_config as embedded;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct BackupArgs {
    /// The backup: a new directory.
    pub to: PathBuf,
    /// The data directory to back up.
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// When a server holds the data directory: its REST address, asked to
    /// make the copy under DATA_DIR/backups, which is then moved to `to`.
    #[arg(long, env = "SOCIALITE_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// When a server holds it: an API key with the `admin` scope (default:
    /// the one in DATA_DIR/auth/admin-key).
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
}

#[derive(Args)]
pub struct RestoreArgs {
    /// A backup `socialite backup` made.
    pub from: PathBuf,
    /// The data directory to make from it: new, or without stores.
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
}

const FILES: [&str; 2] = ["content.redb", "log.redb"];
/// Files a backup may hold beside its stores.
const EXTRA: [&str; 1] = [socialite_embedded::backup::POSITION_FILE];

pub async fn backup(args: BackupArgs) -> Result<(), String> {
    let to = std::path::absolute(&args.to).map_err(|e| format!("{}: {e}", args.to.display()))?;
    if !args.data_dir.join("content.redb").exists() {
        return Err(format!(
            "{}: no embedded store to back up",
            args.data_dir.display()
        ));
    }
    let config = embedded(&args.data_dir);
    let rows = match (config.open_store(), config.open_log()) {
        (Ok(store), Ok(log)) => {
            let local = EmbeddedBackup {
                store: Some(store),
                log: Some(log),
                root: args.data_dir.join("backups"),
            };
            local.backup_into(&to).await.map_err(|e| e.chain())?
        }
        _ => ask_server(&args, &to).await?,
    };
    eprintln!(
        "backed up {rows} rows of {} into {}",
        args.data_dir.display(),
        to.display()
    );
    Ok(())
}

/// The server holds the data directory: it makes the copy.
async fn ask_server(args: &BackupArgs, to: &Path) -> Result<u64, String> {
    let admin = Admin::new(&args.url, args.api_key.as_deref(), &args.data_dir)?;
    if to.exists() {
        return Err(format!(
            "{}: already exists; a backup goes to a new directory",
            to.display()
        ));
    }
    let name = format!("backup-{}", socialite_core::ids::now_ms());
    let (made, rows) = admin.backup(&name, None).await?;
    move_dir(&made, to)?;
    Ok(rows)
}

/// Moves the server's backup where it was asked for: a rename on one file
/// system, else a copy of its files.
fn move_dir(from: &Path, to: &Path) -> Result<(), String> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    let failed = |e: std::io::Error| format!("moving {} to {}: {e}", from.display(), to.display());
    std::fs::create_dir(to).map_err(failed)?;
    for f in FILES {
        std::fs::copy(from.join(f), to.join(f)).map_err(failed)?;
    }
    for f in EXTRA.iter().filter(|f| from.join(f).exists()) {
        std::fs::copy(from.join(f), to.join(f)).map_err(failed)?;
    }
    std::fs::remove_dir_all(from).map_err(failed)
}

pub fn restore(args: RestoreArgs) -> Result<(), String> {
    let (from, dir) = (&args.from, &args.data_dir);
    for f in FILES {
        if !from.join(f).exists() {
            return Err(format!("{}: not a backup (no {f})", from.display()));
        }
        if dir.join(f).exists() {
            return Err(format!(
                "{}: already holds {f}; restore into a new data directory",
                dir.display()
            ));
        }
    }
    let config = embedded(dir);
    // Made as the server makes it (owner only), then the files, then opened
    // once to check them.
    drop(config.open_store().map_err(|e| e.chain())?);
    drop(config.open_log().map_err(|e| e.chain())?);
    for f in FILES {
        std::fs::copy(from.join(f), dir.join(f))
            .map_err(|e| format!("{}: {e}", dir.join(f).display()))?;
    }
    let store = config.open_store().map_err(|e| e.chain())?;
    let log = config.open_log().map_err(|e| e.chain())?;
    drop((store, log));
    eprintln!("restored {} into {}", from.display(), dir.display());
    Ok(())
}
