//! Server API keys. A key is `slk_` and 64 hex digits of randomness, shown
//! once when made; only its SHA-256 is stored, in lines of
//! `NAME SCOPES SHA256` (`#` starts a comment). A presented key is hashed
//! and compared with every stored hash in constant time.

use sha2::{Digest, Sha256};
use socialite_domain::accounts::access::Scopes;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// What every key begins with, so a leaked one is recognisable.
pub const KEY_PREFIX: &str = "slk_";

/// One stored key: its name (for logs, metrics and rate limits), scopes and
/// hash.
#[derive(Debug, Clone)]
pub struct StoredKey {
    pub name: Arc<str>,
    pub scopes: Scopes,
    hash: [u8; 32],
}

impl StoredKey {
    /// The stored line for `key`.
    pub fn line(name: &str, scopes: Scopes, key: &str) -> String {
        format!("{name} {scopes} {}", hex(&Sha256::digest(key.as_bytes())))
    }
}

/// A new random key.
pub fn new_key() -> Result<String, String> {
    Ok(format!("{KEY_PREFIX}{}", hex(&random_bytes::<32>()?)))
}

pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness from the system: {e}"))?;
    Ok(bytes)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Parses stored keys: one per line (or separated by `;`, for an
/// environment variable). Names are 1 to 64 characters of `[A-Za-z0-9_.-]`
/// and unique. A malformed entry is skipped and named in the second list,
/// so that a typo in one line never keeps in force a key whose line was
/// removed.
pub fn parse_keys(text: &str) -> (Vec<StoredKey>, Vec<String>) {
    let mut keys: Vec<StoredKey> = Vec::new();
    let mut skipped = Vec::new();
    let entries = text
        .lines()
        .flat_map(|l| l.split('#').next().unwrap_or("").split(';'))
        .map(str::trim);
    for (n, line) in entries.enumerate().filter(|(_, l)| !l.is_empty()) {
        match parse_entry(line, &keys) {
            Ok(key) => keys.push(key),
            Err(e) => skipped.push(format!("entry {}: {e}", n + 1)),
        }
    }
    (keys, skipped)
}

fn parse_entry(line: &str, keys: &[StoredKey]) -> Result<StoredKey, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [name, scopes, hash] = fields[..] else {
        return Err("expected `NAME SCOPES SHA256`".into());
    };
    let name_ok = name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if !name_ok {
        return Err(format!("invalid key name {name:?}"));
    }
    if keys.iter().any(|k| &*k.name == name) {
        return Err(format!("key name {name} is used twice"));
    }
    let scopes = Scopes::parse(scopes).map_err(|e| e.to_string())?;
    let hash = unhex(hash).ok_or("the hash must be 64 hex digits (SHA-256 of the key)")?;
    Ok(StoredKey {
        name: name.into(),
        scopes,
        hash,
    })
}

/// The stored key that `presented` is, if any. Every hash is compared,
/// each in constant time, so the time taken tells nothing of which matched.
pub fn find_key<'a>(keys: &'a [StoredKey], presented: &str) -> Option<&'a StoredKey> {
    let hash = Sha256::digest(presented.as_bytes());
    let mut found = None;
    for k in keys {
        if bool::from(k.hash.ct_eq(hash.as_slice())) {
            found = Some(k);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_found_by_its_hash_only() {
        let (a, b) = (new_key().unwrap(), new_key().unwrap());
        assert!(a.starts_with(KEY_PREFIX) && a.len() == 68 && a != b);
        let text = format!(
            "# comment; with a semicolon\n{}\n\n{}  # trailing; too",
            StoredKey::line("backend", Scopes::parse("write,read").unwrap(), &a),
            StoredKey::line("ops", Scopes::parse("admin").unwrap(), &b)
        );
        assert!(!text.contains(&a[4..]), "the key itself is never stored");
        let (keys, skipped) = parse_keys(&text);
        assert!(skipped.is_empty());
        let found = find_key(&keys, &a).unwrap();
        assert_eq!(
            (&*found.name, found.scopes.to_string().as_str()),
            ("backend", "write,read")
        );
        assert_eq!(&*find_key(&keys, &b).unwrap().name, "ops");
        assert!(find_key(&keys, "slk_0000").is_none());
        assert!(find_key(&keys, &a[..a.len() - 1]).is_none());
    }

    #[test]
    fn bad_entries_name_their_problem() {
        let h = "0".repeat(64);
        let cases = [
            ("a write".to_owned(), "expected"),
            (format!("a root {h}"), "unknown scope"),
            (format!("a write {}", &h[1..]), "64 hex"),
            (format!("a/b write {h}"), "invalid key name"),
            (format!("a write {h}; a read {h}"), "used twice"),
        ];
        for (text, want) in cases {
            let (_, skipped) = parse_keys(&text);
            assert!(
                skipped.iter().any(|e| e.contains(want)),
                "{text}: {skipped:?}"
            );
        }
        assert_eq!(parse_keys(&format!("a write {h};b read {h}")).0.len(), 2);
        // A bad line leaves the good ones in force, and only them.
        let (keys, skipped) = parse_keys(&format!("a write {h}\nbroken line\nc read {h}"));
        let names: Vec<&str> = keys.iter().map(|k| &*k.name).collect();
        assert_eq!((names, skipped.len()), (vec!["a", "c"], 1));
    }
}
