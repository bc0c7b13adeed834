//! TLS and SASL to the brokers, from the `kafka://` URI's options, and the
//! client settings every Kafka client of this crate starts from.
//!
//! Options (all optional):
//! - `tls=true` turns TLS on; any `tls_*` file option implies it.
//! - `tls_ca_file=PATH`: the CA bundle that signs the brokers' certificates
//!   (the system's CA store when unset).
//! - `tls_cert_file=PATH`, `tls_key_file=PATH`: a client certificate and its
//!   key, for brokers that ask for one (both or neither).
//! - `tls_verify_hostname=false` stops checking that a broker's certificate
//!   names the host it was reached at (on by default).
//! - `sasl_mechanism=PLAIN|SCRAM-SHA-256|SCRAM-SHA-512`, `sasl_username=U`,
//!   and the password from the file `sasl_password_file=PATH` or the
//!   environment variable `SOCIALITE_KAFKA_SASL_PASSWORD`. A password in the
//!   URI is refused: URIs are printed, files and the environment are not.

use rdkafka::config::ClientConfig;
use socialite_core::error::{Error, Result};
use socialite_core::redact::Secret;
use std::path::PathBuf;

/// The environment variable that may hold the SASL password.
pub const SASL_PASSWORD_ENV: &str = "SOCIALITE_KAFKA_SASL_PASSWORD";

/// TLS to the brokers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaTls {
    pub ca_file: Option<PathBuf>,
    /// A client certificate and its key (PEM).
    pub client: Option<(PathBuf, PathBuf)>,
    pub verify_hostname: bool,
}

/// A SASL login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaSasl {
    /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    pub mechanism: &'static str,
    pub username: String,
    pub password: Secret,
}

const MECHANISMS: [&str; 3] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

/// How the clients reach the brokers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KafkaSecurity {
    pub tls: Option<KafkaTls>,
    pub sasl: Option<KafkaSasl>,
}

/// The security options of a URI, gathered before they are checked together.
#[derive(Default)]
pub(crate) struct Options {
    tls: Option<bool>,
    ca_file: Option<PathBuf>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    verify_hostname: Option<bool>,
    mechanism: Option<String>,
    username: Option<String>,
    password_file: Option<PathBuf>,
}

impl Options {
    /// Takes option `name` if it is a security option; `Ok(false)` if not.
    pub(crate) fn take(&mut self, name: &str, value: &str) -> Result<bool> {
        let flag = |v: &str| match v {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(invalid(format!("{name} is true or false"))),
        };
        let path = |v: &str| {
            if v.is_empty() {
                Err(invalid(format!("{name} needs a path")))
            } else {
                Ok(Some(PathBuf::from(v)))
            }
        };
        match name {
            "tls" => self.tls = Some(flag(value)?),
            "tls_verify_hostname" => self.verify_hostname = Some(flag(value)?),
            "tls_ca_file" => self.ca_file = path(value)?,
            "tls_cert_file" => self.cert_file = path(value)?,
            "tls_key_file" => self.key_file = path(value)?,
            "sasl_mechanism" => self.mechanism = Some(value.to_owned()),
            "sasl_username" => self.username = Some(value.to_owned()),
            "sasl_password_file" => self.password_file = path(value)?,
            "sasl_password" => {
                return Err(invalid(format!(
                    "sasl_password: a password is not taken from the URI, which is printed; \
                     put it in a file named by sasl_password_file or in {SASL_PASSWORD_ENV}"
                )))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks the options together and reads the files they name;
    /// `password_env` is the value of [`SASL_PASSWORD_ENV`].
    pub(crate) fn finish(self, password_env: Option<String>) -> Result<KafkaSecurity> {
        let files = [&self.ca_file, &self.cert_file, &self.key_file];
        let tls_on = self.tls.unwrap_or(files.iter().any(|f| f.is_some()));
        if !tls_on && (files.iter().any(|f| f.is_some()) || self.verify_hostname.is_some()) {
            return Err(invalid("tls=false contradicts the tls_* options".into()));
        }
        for (name, file) in [
            ("tls_ca_file", &self.ca_file),
            ("tls_cert_file", &self.cert_file),
            ("tls_key_file", &self.key_file),
        ] {
            if let Some(file) = file {
                readable(name, file)?;
            }
        }
        let client = match (self.cert_file, self.key_file) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err(invalid(
                "tls_cert_file and tls_key_file go together: a client certificate needs its key"
                    .into(),
            )),
        };
        let tls = tls_on.then(|| KafkaTls {
            ca_file: self.ca_file,
            client,
            verify_hostname: self.verify_hostname.unwrap_or(true),
        });
        let sasl = sasl(
            self.mechanism,
            self.username,
            self.password_file,
            password_env,
        )?;
        Ok(KafkaSecurity { tls, sasl })
    }
}

fn sasl(
    mechanism: Option<String>,
    username: Option<String>,
    password_file: Option<PathBuf>,
    password_env: Option<String>,
) -> Result<Option<KafkaSasl>> {
    let Some(mechanism) = mechanism else {
        if username.is_some() || password_file.is_some() {
            return Err(invalid(format!(
                "sasl_username and sasl_password_file need sasl_mechanism ({})",
                MECHANISMS.join(", ")
            )));
        }
        return Ok(None);
    };
    let mechanism = MECHANISMS
        .into_iter()
        .find(|m| m.eq_ignore_ascii_case(&mechanism))
        .ok_or_else(|| {
            invalid(format!(
                "sasl_mechanism `{mechanism}` is not one of {}",
                MECHANISMS.join(", ")
            ))
        })?;
    let username = username
        .filter(|u| !u.is_empty())
        .ok_or_else(|| invalid("sasl_mechanism needs sasl_username".into()))?;
    let password = match (password_file, password_env) {
        (Some(file), _) => {
            let text = std::fs::read_to_string(&file).map_err(|e| {
                invalid(format!(
                    "sasl_password_file {}: cannot read it: {e}",
                    file.display()
                ))
            })?;
            text.trim_end_matches(['\n', '\r']).to_owned()
        }
        (None, Some(env)) => env,
        (None, None) => {
            return Err(invalid(format!(
                "sasl_mechanism needs a password: sasl_password_file or {SASL_PASSWORD_ENV}"
            )))
        }
    };
    if password.is_empty() {
        return Err(invalid("the SASL password is empty".into()));
    }
    Ok(Some(KafkaSasl {
        mechanism,
        username,
        password: Secret::new(password),
    }))
}

fn readable(name: &str, file: &std::path::Path) -> Result<()> {
    std::fs::File::open(file)
        .map(drop)
        .map_err(|e| invalid(format!("{name} {}: cannot read it: {e}", file.display())))
}

fn invalid(why: String) -> Error {
    Error::invalid("invalid_log_uri", format!("kafka URI: {why}"))
}

impl KafkaSecurity {
    /// librdkafka's `security.protocol` for these settings.
    fn protocol(&self) -> &'static str {
        match (self.tls.is_some(), self.sasl.is_some()) {
            (false, false) => "plaintext",
            (true, false) => "ssl",
            (false, true) => "sasl_plaintext",
            (true, true) => "sasl_ssl",
        }
    }

    /// Sets the client properties these settings ask for on `client`.
    pub(crate) fn apply(&self, client: &mut ClientConfig) {
        client.set("security.protocol", self.protocol());
        if let Some(tls) = &self.tls {
            if let Some(ca) = &tls.ca_file {
                client.set("ssl.ca.location", ca.display().to_string());
            }
            if let Some((cert, key)) = &tls.client {
                client.set("ssl.certificate.location", cert.display().to_string());
                client.set("ssl.key.location", key.display().to_string());
            }
            let check = if tls.verify_hostname { "https" } else { "none" };
            client.set("ssl.endpoint.identification.algorithm", check);
        }
        if let Some(sasl) = &self.sasl {
            client.set("sasl.mechanism", sasl.mechanism);
            client.set("sasl.username", &sasl.username);
            client.set("sasl.password", sasl.password.expose());
        }
    }

    /// What a refusal at start-up most likely means, naming the setting to
    /// change, from librdkafka's error text.
    pub(crate) fn explain(&self, brokers: &str, reason: &str) -> String {
        let lower = reason.to_ascii_lowercase();
        let ca = match self.tls.as_ref().and_then(|t| t.ca_file.as_ref()) {
            Some(file) => format!("tls_ca_file ({})", file.display()),
            None => "the system's CA store (set tls_ca_file)".into(),
        };
        if lower.contains("hostname mismatch") || lower.contains("host name mismatch") {
            format!(
                "TLS: a broker's certificate does not name the host it was reached at \
                 (brokers {brokers}; tls_verify_hostname=false turns the check off, not advised): {reason}"
            )
        } else if lower.contains("certificate verify failed")
            || lower.contains("could not be verified")
        {
            // OpenSSL's text does not say which check failed.
            format!(
                "TLS: a broker's certificate could not be verified: it is not signed by a CA in \
                 {ca}, or it does not name the host it was reached at (brokers {brokers}, \
                 tls_verify_hostname): {reason}"
            )
        } else {
            match refusal(reason) {
                Some(Refusal::Sasl) => format!(
                    "SASL: the brokers refused the login (sasl_mechanism, sasl_username, and \
                     sasl_password_file or {SASL_PASSWORD_ENV}): {reason}"
                ),
                Some(Refusal::Tls) => format!(
                    "TLS: the handshake with the brokers failed (tls, {ca}, tls_cert_file, \
                     tls_key_file): {reason}"
                ),
                None => format!("no broker answered at {brokers}: {reason}"),
            }
        }
    }
}

/// What a broker's answer refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Tls,
    Sasl,
}

/// Whether librdkafka's text reports a refused handshake or login (which a
/// retry will not mend) rather than a broker not reached. Matched on
/// phrases of the failure, never on the broker's address, whose scheme
/// (`sasl_ssl://`) is in every line of such a client.
pub(crate) fn refusal(reason: &str) -> Option<Refusal> {
    const SASL: [&str; 3] = ["authentication", "sasl handshake", "mechanism"];
    const TLS: [&str; 5] = [
        "ssl handshake",
        "ssl routines",
        "ssl.",
        "certificate",
        "alert",
    ];
    let lower = reason.to_ascii_lowercase();
    if SASL.iter().any(|p| lower.contains(p)) {
        Some(Refusal::Sasl)
    } else if TLS.iter().any(|p| lower.contains(p)) {
        Some(Refusal::Tls)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)], env: Option<&str>) -> Result<KafkaSecurity> {
        let mut o = Options::default();
        for (k, v) in pairs {
            assert!(o.take(k, v)?, "{k} is a security option");
        }
        o.finish(env.map(str::to_owned))
    }

    fn props(security: &KafkaSecurity) -> ClientConfig {
        let mut c = ClientConfig::new();
        security.apply(&mut c);
        c
    }

    #[test]
    fn tls_and_sasl_reach_the_client() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let (ca, cert, key) = (file("ca", "x"), file("cert", "x"), file("key", "x"));
        let pw = file("pw", "s3cret\n");
        let s = parse(
            &[
                ("tls_ca_file", &ca),
                ("tls_cert_file", &cert),
                ("tls_key_file", &key),
                ("sasl_mechanism", "scram-sha-512"),
                ("sasl_username", "app"),
                ("sasl_password_file", &pw),
            ],
            None,
        )
        .unwrap();
        let p = props(&s);
        let get = |k: &str| p.get(k);
        assert_eq!(get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(get("ssl.ca.location"), Some(ca.as_str()));
        assert_eq!(get("ssl.certificate.location"), Some(cert.as_str()));
        assert_eq!(get("ssl.key.location"), Some(key.as_str()));
        assert_eq!(get("ssl.endpoint.identification.algorithm"), Some("https"));
        assert_eq!(get("sasl.mechanism"), Some("SCRAM-SHA-512"));
        assert_eq!(get("sasl.username"), Some("app"));
        assert_eq!(get("sasl.password"), Some("s3cret"));
        // The password is never in what is printed of the settings.
        assert!(!format!("{s:?}").contains("s3cret"));

        let env = parse(
            &[("sasl_mechanism", "PLAIN"), ("sasl_username", "u")],
            Some("pw"),
        )
        .unwrap();
        assert_eq!(env.protocol(), "sasl_plaintext");
        assert_eq!(env.sasl.unwrap().password.expose(), "pw");
        let plain_tls = parse(&[("tls", "true"), ("tls_verify_hostname", "false")], None).unwrap();
        assert_eq!(plain_tls.protocol(), "ssl");
        assert_eq!(
            props(&plain_tls).get("ssl.endpoint.identification.algorithm"),
            Some("none")
        );
        assert_eq!(parse(&[], None).unwrap().protocol(), "plaintext");
    }

    #[test]
    fn refusals_name_the_option() {
        let cases: [(&[(&str, &str)], &str); 7] = [
            (&[("sasl_password", "pw")], "sasl_password_file"),
            (&[("tls_ca_file", "/nonexistent/ca.pem")], "tls_ca_file"),
            (&[("tls", "maybe")], "tls is true or false"),
            (
                &[("sasl_mechanism", "GSSAPI"), ("sasl_username", "u")],
                "sasl_mechanism",
            ),
            (&[("sasl_mechanism", "PLAIN")], "sasl_username"),
            (
                &[("sasl_mechanism", "PLAIN"), ("sasl_username", "u")],
                "SOCIALITE_KAFKA_SASL_PASSWORD",
            ),
            (
                &[("tls", "false"), ("tls_verify_hostname", "true")],
                "contradicts",
            ),
        ];
        for (pairs, named) in cases {
            let mut o = Options::default();
            let e = pairs
                .iter()
                .try_for_each(|(k, v)| o.take(k, v).map(drop))
                .and_then(|()| o.finish(None).map(drop))
                .unwrap_err();
            assert_eq!(e.code(), "invalid_log_uri");
            assert!(e.to_string().contains(named), "{pairs:?}: {e}");
        }
    }

    #[test]
    fn refusals_at_start_name_the_setting() {
        let s = KafkaSecurity::default();
        let ca = s.explain("b:1", "SSL handshake failed: error:0A000086:SSL routines::certificate verify failed: broker certificate could not be verified");
        assert!(ca.contains("tls_ca_file"), "{ca}");
        let login = s.explain("b:1", "SASL authentication error: Authentication failed");
        assert!(login.contains("sasl_username"), "{login}");
        let down = s.explain(
            "b:1",
            "Connect to ipv4#127.0.0.1:1 failed: Connection refused",
        );
        assert!(down.contains("no broker answered at b:1"), "{down}");
        // A broker not reached is not a refusal, though the address names
        // SASL and TLS.
        let starting =
            "sasl_ssl://b:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused";
        assert_eq!(refusal(starting), None);
        assert!(s.explain("b:1", starting).contains("no broker answered"));
        let alert = "ssl://b:1/bootstrap: Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required";
        assert_eq!(refusal(alert), Some(Refusal::Tls));
    }
}
