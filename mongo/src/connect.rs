//! The client and the start-up checks: the URI's options (a
//! `mongodb+srv://` name resolved through DNS, TLS with `tls=true`,
//! `tlsCAFile`, `tlsCertificateKeyFile`), the password from the
//! environment when the URI names only the user, the durability every
//! acknowledged write relies on, and a first round trip whose refusal
//! names the setting to change instead of retrying behind the scenes.

use mongodb::bson::doc;
use mongodb::error::{Error as DbError, ErrorKind as DbErrorKind};
use mongodb::options::{Acknowledgment, ClientOptions, Tls};
use mongodb::Client;
use socialite_core::error::{Error, Result};
use socialite_core::redact;
use std::time::Duration;

/// The environment variables that may hold the password of the URI's user
/// (the value, or a file holding it), so the URI can be printed whole.
pub const PASSWORD_ENV: &str = "SOCIALITE_MONGODB_PASSWORD";
pub const PASSWORD_FILE_ENV: &str = "SOCIALITE_MONGODB_PASSWORD_FILE";

/// How long the first round trip may wait for a server before start-up stops.
const FIRST_CONTACT: Duration = Duration::from_secs(10);

/// A client for `uri` that has reached the server, with majority writes
/// and retryable writes.
pub async fn client(uri: &str) -> Result<Client> {
    let shown = redact::uri(uri);
    let mut options = ClientOptions::parse(uri)
        .await
        .map_err(|e| Error::invalid("invalid_store_uri", format!("{shown}: {e}")))?;
    password_from_env(&mut options, &shown)?;
    durable(&mut options, &shown)?;
    tracing::info!(
        store = %shown,
        tls = matches!(options.tls, Some(Tls::Enabled(_))),
        "MongoDB: majority write concern, retryable writes"
    );
    let mut probe = options.clone();
    probe.server_selection_timeout = Some(FIRST_CONTACT);
    let first = Client::with_options(probe).map_err(|e| refused(&options, &shown, &e))?;
    first
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .map_err(|e| refused(&options, &shown, &e))?;
    first.shutdown().await;
    Client::with_options(options).map_err(|e| refused_plainly(&shown, &e))
}

/// Fills in the user's password from [`PASSWORD_ENV`] or the file
/// [`PASSWORD_FILE_ENV`] names, when the URI has a user and no password.
fn password_from_env(options: &mut ClientOptions, shown: &str) -> Result<()> {
    let Some(credential) = options.credential.as_mut() else {
        return Ok(());
    };
    if credential.username.is_none() || credential.password.is_some() {
        return Ok(());
    }
    if let Ok(file) = std::env::var(PASSWORD_FILE_ENV) {
        let text = std::fs::read_to_string(&file).map_err(|e| {
            Error::invalid(
                "invalid_store_uri",
                format!("{PASSWORD_FILE_ENV} {file}: cannot read it: {e}"),
            )
        })?;
        credential.password = Some(text.trim_end_matches(['\n', '\r']).to_owned());
    } else if let Ok(password) = std::env::var(PASSWORD_ENV) {
        credential.password = Some(password);
    } else {
        return Err(Error::invalid(
            "invalid_store_uri",
            format!("{shown}: the URI names a user but no password; give it in {PASSWORD_ENV} or a file named by {PASSWORD_FILE_ENV}"),
        ));
    }
    Ok(())
}

/// Majority write concern and retryable writes: a post is acknowledged
/// once it outlives the loss of a primary, and a write cut by a failover is
/// retried once by the driver. A URI that asks for less is refused.
fn durable(options: &mut ClientOptions, shown: &str) -> Result<()> {
    let refuse = |why: &str| {
        Error::invalid(
            "invalid_store_uri",
            format!("{shown}: {why}: Socialite acknowledges a write only once a majority of the replica set holds it; leave the option out"),
        )
    };
    if options.retry_writes == Some(false) {
        return Err(refuse("retryWrites=false"));
    }
    match options.write_concern.as_ref().and_then(|w| w.w.as_ref()) {
        None | Some(Acknowledgment::Majority) => {}
        Some(Acknowledgment::Nodes(n)) => return Err(refuse(&format!("w={n}"))),
        Some(Acknowledgment::Custom(tag)) => return Err(refuse(&format!("w={tag}"))),
        Some(other) => return Err(refuse(&format!("w={other:?}"))),
    }
    let mut concern = options.write_concern.clone().unwrap_or_default();
    concern.w = Some(Acknowledgment::Majority);
    options.write_concern = Some(concern);
    options.retry_writes = Some(true);
    Ok(())
}

/// The refusal of the first round trip, naming the setting it points at.
fn refused(options: &ClientOptions, shown: &str, e: &DbError) -> Error {
    let text = e.to_string();
    let lower = text.to_ascii_lowercase();
    let ca = match &options.tls {
        Some(Tls::Enabled(tls)) => match &tls.ca_file_path {
            Some(file) => format!("tlsCAFile ({})", file.display()),
            None => "the bundled Mozilla roots (set tlsCAFile)".into(),
        },
        _ => "tlsCAFile".into(),
    };
    let why = if matches!(e.kind.as_ref(), DbErrorKind::Authentication { .. })
        || lower.contains("authentication failed")
    {
        format!("the server refused the login (the URI's user, and its password in the URI, {PASSWORD_ENV} or {PASSWORD_FILE_ENV})")
    } else if lower.contains("notvalidforname") || lower.contains("not valid for name") {
        "TLS: the server's certificate does not name the host it was reached at (the URI's hosts)"
            .into()
    } else if lower.contains("invalid peer certificate") || lower.contains("unknownissuer") {
        format!("TLS: the server's certificate is not signed by a CA in {ca}")
    } else if lower.contains("tls") || lower.contains("certificate") || lower.contains("handshake")
    {
        format!("TLS: the handshake failed (tls, {ca}, tlsCertificateKeyFile)")
    } else {
        "no server answered within 10 s (the URI's hosts)".into()
    };
    Error::unavailable(format!("MongoDB at {shown}: {why}: {text}"))
}

fn refused_plainly(shown: &str, e: &DbError) -> Error {
    Error::unavailable(format!("MongoDB at {shown}: {e}"))
}
