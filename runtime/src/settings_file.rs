//! The optional settings file: one `name = value` per line, names as the
//! flags without `--`. It is read into `SOCIALITE_*` environment variables
//! that are not already set, so that clap applies the precedence flags >
//! environment > file > defaults and validates every value, naming it.

use clap::Args;
use std::path::PathBuf;

/// The optional settings file: `--config FILE` or `SOCIALITE_CONFIG`.
#[derive(Debug, Clone, Args)]
pub struct ConfigFileArg {
    /// Settings file: one `name = value` per line (names as the flags without
    /// `--`, `#` starts a comment). Flags and environment variables override it.
    #[arg(long = "config", env = "SOCIALITE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Reads the settings file, if one is named, into `SOCIALITE_*` environment
/// variables that are not already set, so that clap applies the precedence
/// flags > environment > file > defaults and validates every value, naming
/// the setting. Call before parsing the command line.
pub fn load_settings_file<C: clap::CommandFactory>() -> Result<(), String> {
    let Some(path) = settings_path() else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read settings file {}: {e}", path.display()))?;
    let known = env_names(&C::command());
    let mut settings = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line
            .split_once('#')
            .map_or(line, |(before, _)| before)
            .trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| format!("{}: expected `name = value`", at()))?;
        let name = name.trim();
        let env = format!("SOCIALITE_{}", name.replace('-', "_").to_uppercase());
        if !known.contains(&env) || env == "SOCIALITE_CONFIG" {
            return Err(format!("{}: unknown setting `{name}`", at()));
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        settings.push((env, value.to_owned()));
    }
    for (env, value) in settings {
        if std::env::var_os(&env).is_none() {
            // Safe in practice: this runs first thing in main, before any thread starts.
            std::env::set_var(env, value);
        }
    }
    Ok(())
}

fn settings_path() -> Option<PathBuf> {
    let mut args = std::env::args_os().skip(1);
    while let Some(a) = args.next() {
        let a = a.to_string_lossy().into_owned();
        if a == "--config" {
            return args.next().map(PathBuf::from);
        }
        if let Some(p) = a.strip_prefix("--config=") {
            return Some(PathBuf::from(p));
        }
    }
    std::env::var_os("SOCIALITE_CONFIG").map(PathBuf::from)
}

/// The environment variable of every argument of the command and its subcommands.
fn env_names(cmd: &clap::Command) -> std::collections::HashSet<String> {
    let mut out: std::collections::HashSet<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    for sub in cmd.get_subcommands() {
        out.extend(env_names(sub));
    }
    out
}
