//! Authentication settings (`--auth`, keys, token secrets, rate limits,
//! CORS, the operators' address) and the credentials a fresh data directory
//! gets: `socialite up` with no keys configured creates, under
//! `DATA_DIR/auth/` (mode 0700, files 0600), a token secret, an admin API
//! key, and the keys file holding its hash.

use clap::Args;
use socialite_api::auth::keys::{new_key, StoredKey};
use socialite_api::auth::rate::{Rates, DEFAULT_USER_RATE};
use socialite_api::auth::tokens::new_secret;
use socialite_api::auth::{read_source, AuthConfig, Source};
use socialite_core::budgets::{BudgetConfig, Quota};
use socialite_domain::accounts::access::Scopes;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Clone, Args)]
pub struct AuthArgs {
    /// `keys`: every call needs a server API key or a user token; `none`:
    /// no checks at all (development only; a warning at start and on the
    /// status page).
    #[arg(long, env = "SOCIALITE_AUTH", default_value = "keys", value_parser = ["keys", "none"])]
    pub auth: String,
    /// File of server API keys, `NAME SCOPES SHA256` per line; reread when
    /// it changes, so keys rotate without a restart.
    #[arg(long, env = "SOCIALITE_API_KEYS_FILE")]
    pub api_keys_file: Option<PathBuf>,
    /// Server API keys as text, entries separated by `;` (beside the file).
    #[arg(long, env = "SOCIALITE_API_KEYS", hide_env_values = true)]
    pub api_keys: Option<String>,
    /// File of user-token secrets, one per line (at least 32 bytes each);
    /// reread when it changes. Tokens signed with any of them are accepted.
    #[arg(long, env = "SOCIALITE_TOKEN_SECRETS_FILE")]
    pub token_secrets_file: Option<PathBuf>,
    /// User-token secrets as text, one per line (beside the file).
    #[arg(long, env = "SOCIALITE_TOKEN_SECRETS", hide_env_values = true)]
    pub token_secrets: Option<String>,
    /// What user tokens may read besides their own timelines: `public`
    /// (users, counts, posts, follower lists) or `own` (nothing else).
    #[arg(long, env = "SOCIALITE_USER_READS", default_value = "public", value_parser = ["public", "own"])]
    pub user_reads: String,
    /// Requests per second per user token; 0 is no limit.
    #[arg(long, env = "SOCIALITE_RATE_LIMIT_USER", default_value_t = DEFAULT_USER_RATE)]
    pub rate_limit_user: u32,
    /// Requests per second per server API key; 0 is no limit.
    #[arg(long, env = "SOCIALITE_RATE_LIMIT_KEY", default_value_t = 0)]
    pub rate_limit_key: u32,
    /// Write budget of each user token's account: points an hour and a
    /// day, `HOUR,DAY` (a create costs 3, an update 2, a delete 1); 0 is
    /// no limit.
    #[arg(long, env = "SOCIALITE_WRITE_BUDGET_USER", default_value = "5000,35000", value_parser = parse_quota)]
    pub write_budget_user: Quota,
    /// Write budget of each server API key, `HOUR,DAY` points; off (`0,0`)
    /// by default.
    #[arg(long, env = "SOCIALITE_WRITE_BUDGET_KEY", default_value = "0,0", value_parser = parse_quota)]
    pub write_budget_key: Quota,
    /// Origins that browsers may call the API from (CORS), comma-separated;
    /// `*` for any. None: CORS is off.
    #[arg(long, env = "SOCIALITE_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,
    /// Serve `/metrics` and the status page on this address, without
    /// credentials, instead of on the REST address behind an admin key.
    #[arg(long, env = "SOCIALITE_OPS_ADDR")]
    pub ops_addr: Option<SocketAddr>,
    #[command(flatten)]
    pub limits: crate::settings::LimitArgs,
    #[command(flatten)]
    pub rank: crate::settings_rank::RankArgs,
    #[command(flatten)]
    pub webhooks: crate::settings_webhooks::WebhookArgs,
}

impl std::fmt::Debug for AuthArgs {
    /// Keys and secrets given as text are never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthArgs")
            .field("auth", &self.auth)
            .field("api_keys_file", &self.api_keys_file)
            .field("token_secrets_file", &self.token_secrets_file)
            .finish_non_exhaustive()
    }
}

impl AuthArgs {
    pub fn config(&self) -> AuthConfig {
        AuthConfig {
            checks: self.auth != "none",
            api_keys: Source {
                file: self.api_keys_file.clone(),
                text: self.api_keys.clone(),
            },
            token_secrets: Source {
                file: self.token_secrets_file.clone(),
                text: self.token_secrets.clone(),
            },
            public_reads: self.user_reads == "public",
            rates: Rates {
                per_user: self.rate_limit_user,
                per_key: self.rate_limit_key,
            },
            budgets: BudgetConfig {
                user: self.write_budget_user,
                key: self.write_budget_key,
            },
        }
    }

    /// Whether checks are on and nothing says which keys to check against.
    pub fn unconfigured(&self) -> bool {
        self.auth != "none"
            && self.api_keys_file.is_none()
            && self.api_keys.is_none()
            && self.token_secrets_file.is_none()
            && self.token_secrets.is_none()
    }
}

/// `HOUR,DAY`: points an hour and a day.
fn parse_quota(text: &str) -> Result<Quota, String> {
    let parse = |n: &str| n.trim().parse::<u32>().map_err(|e| format!("{n:?}: {e}"));
    match text.split_once(',') {
        Some((hour, day)) => Ok(Quota {
            per_hour: parse(hour)?,
            per_day: parse(day)?,
        }),
        None => Err("give points an hour and a day as HOUR,DAY (0 is no limit)".into()),
    }
}

/// The credential files of a data directory.
pub struct DataDirCredentials {
    pub api_keys: PathBuf,
    pub token_secrets: PathBuf,
    pub admin_key: PathBuf,
}

impl DataDirCredentials {
    pub fn of(data_dir: &Path) -> DataDirCredentials {
        let dir = data_dir.join("auth");
        DataDirCredentials {
            api_keys: dir.join("api-keys"),
            token_secrets: dir.join("token-secrets"),
            admin_key: dir.join("admin-key"),
        }
    }

    /// Creates the files if they do not exist; returns whether it did.
    pub fn ensure(&self) -> Result<bool, String> {
        if self.api_keys.exists() && self.token_secrets.exists() {
            return Ok(false);
        }
        let dir = self.api_keys.parent().expect("a file in a directory");
        create_private_dir(dir)?;
        let key = new_key()?;
        write_private(&self.token_secrets, &format!("{}\n", new_secret()?))?;
        write_private(&self.admin_key, &format!("{key}\n"))?;
        let line = StoredKey::line("admin", Scopes::ALL, &key);
        let keys = format!(
            "# Server API keys: NAME SCOPES SHA256-of-the-key; reread on change.\n{line}\n"
        );
        write_private(&self.api_keys, &keys)?;
        Ok(true)
    }

    /// Points `args` at these files.
    pub fn apply(&self, args: &mut AuthArgs) {
        args.api_keys_file = Some(self.api_keys.clone());
        args.token_secrets_file = Some(self.token_secrets.clone());
    }
}

/// Creates `dir` (0700), and its parent the same way when it is new (the
/// data directory: the stores' files are the users' data).
fn create_private_dir(dir: &Path) -> Result<(), String> {
    if let Some(parent) = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.exists())
    {
        create_private_dir(parent)?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot restrict {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Writes a file only its owner can read, created new (never over another).
fn write_private(path: &Path, text: &str) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|_| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Appends a key's stored line to a keys file (created 0600 if missing).
pub fn append_key(path: &Path, line: &str) -> Result<(), String> {
    if !path.exists() {
        return write_private(path, &format!("{line}\n"));
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    writeln!(file, "{line}")
        .and_then(|_| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The first secret of the configured sources: the one new tokens are
/// signed with.
pub fn signing_secret(source: &Source) -> Result<Vec<u8>, String> {
    let text = read_source(source, "token secrets")?;
    socialite_api::auth::tokens::parse_secrets(&text)?
        .into_iter()
        .next()
        .ok_or_else(|| "no token secret is configured".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_data_directory_gets_private_credentials_once() {
        let dir = tempfile::tempdir().unwrap();
        let files = DataDirCredentials::of(dir.path());
        assert!(files.ensure().unwrap());
        assert!(!files.ensure().unwrap(), "made once, then kept");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for f in [&files.api_keys, &files.token_secrets, &files.admin_key] {
                let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", f.display());
            }
        }
        let key = std::fs::read_to_string(&files.admin_key).unwrap();
        let stored = std::fs::read_to_string(&files.api_keys).unwrap();
        let keys = socialite_api::auth::keys::parse_keys(&stored).0;
        let found = socialite_api::auth::keys::find_key(&keys, key.trim()).unwrap();
        assert_eq!(found.scopes, Scopes::ALL);
        assert!(
            !stored.contains(key.trim()),
            "the keys file holds only hashes"
        );
        let secret = signing_secret(&Source {
            file: Some(files.token_secrets.clone()),
            text: None,
        })
        .unwrap();
        assert_eq!(secret.len(), 64);
    }
}
