//! Standard Webhooks signing: `webhook-signature` is `v1,` and the base64
//! HMAC-SHA256 of `{id}.{timestamp}.{body}` under the secret's key (the
//! base64 after `whsec_`), one per secret, separated by spaces.

use base64ct::{Base64, Encoding};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What every secret starts with.
pub const SECRET_PREFIX: &str = "whsec_";

/// A secret of these random bytes.
pub fn secret_of(random: &[u8; 24]) -> String {
    format!("{SECRET_PREFIX}{}", Base64::encode_string(random))
}

/// The key a secret holds, or `None` for a string that is not a secret.
fn key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix(SECRET_PREFIX)?;
    Base64::decode_vec(encoded).ok()
}

/// One signature: `v1,` and the base64 MAC.
pub fn signature(secret: &str, id: &str, timestamp: u64, body: &[u8]) -> Option<String> {
    let key = key(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(format!(
        "v1,{}",
        Base64::encode_string(&mac.finalize().into_bytes())
    ))
}

/// The `webhook-signature` header: one signature per secret.
pub fn header(secrets: &[&str], id: &str, timestamp: u64, body: &[u8]) -> String {
    let signatures: Vec<String> = secrets
        .iter()
        .filter_map(|s| signature(s, id, timestamp, body))
        .collect();
    signatures.join(" ")
}
