//! TLS in front of the Kafka and MongoDB stand-ins, for the tests that
//! prove the clients' TLS on this machine: stunnel (Debian's `stunnel4`)
//! terminates TLS with certificates the fixture makes with the `openssl`
//! command, and asks every client for a certificate of the same CA. Kafka
//! is a tansu broker of the fixture's own, which advertises the TLS port, so
//! every connection a client makes after the first goes through TLS too.
//!
//! Beside the right endpoints there are endpoints whose certificate names
//! another host (`elsewhere.example`), and a second CA that signed nothing
//! the servers show, for the refusals.

use crate::servers::Servers;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct TlsServers {
    dir: PathBuf,
    /// `localhost:PORT` of Kafka and MongoDB behind TLS.
    pub kafka: String,
    pub mongodb: String,
    /// The same servers behind a certificate for another host name.
    pub kafka_elsewhere: String,
    pub mongodb_elsewhere: String,
    /// The plaintext MongoDB behind the TLS one (the shared stand-in).
    pub mongodb_plain: String,
    pub ca: PathBuf,
    /// A CA that signed nothing the servers show.
    pub other_ca: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// The client's certificate and key in one file, as MongoDB takes them.
    pub client_pem: PathBuf,
    children: Vec<Child>,
}

impl TlsServers {
    /// The fixture, or `None` after saying why the test is skipped (as
    /// [`Servers::from_env`] does, and when stunnel, openssl or tansu is
    /// missing).
    pub fn start(test: &str) -> Option<TlsServers> {
        let servers = Servers::from_env(test)?;
        let missing = ["stunnel4", "openssl"]
            .into_iter()
            .find(|b| {
                Command::new("sh")
                    .args(["-c", &format!("command -v {b}")])
                    .stdout(Stdio::null())
                    .status()
                    .map_or(true, |s| !s.success())
            })
            .map(str::to_owned)
            .or_else(|| {
                servers
                    .tansu
                    .is_none()
                    .then(|| "SOCIALITE_TEST_TANSU".to_owned())
            });
        if let Some(missing) = missing {
            if std::env::var("SOCIALITE_REQUIRE_SERVERS").as_deref() == Ok("1") {
                panic!("{test}: SOCIALITE_REQUIRE_SERVERS=1 but {missing} is missing");
            }
            eprintln!("SKIPPED {test}: {missing} is missing");
            return None;
        }
        remove_stale_dirs();
        // A port found free may be taken by another process before the
        // servers bind it: then again, with other ports.
        for attempt in 1.. {
            match TlsServers::launch(&servers) {
                Ok(fixture) => return Some(fixture),
                Err(e) if attempt < 3 => eprintln!("{test}: {e}; again with other ports"),
                Err(e) => panic!("{test}: {e}"),
            }
        }
        unreachable!()
    }

    /// The servers on ports found free, certificates in a new directory.
    fn launch(servers: &Servers) -> Result<TlsServers, String> {
        let dir = std::env::temp_dir().join(Servers::unique(DIR_PREFIX));
        std::fs::create_dir_all(&dir).unwrap();
        make_certificates(&dir);
        let ports: Vec<u16> = (0..5).map(|_| free_port()).collect();
        let [tansu, kafka, kafka_elsewhere, mongodb, mongodb_elsewhere] = ports[..] else {
            unreachable!()
        };
        let mut fixture = TlsServers {
            kafka: format!("localhost:{kafka}"),
            mongodb: format!("localhost:{mongodb}"),
            kafka_elsewhere: format!("localhost:{kafka_elsewhere}"),
            mongodb_elsewhere: format!("localhost:{mongodb_elsewhere}"),
            mongodb_plain: servers.mongodb.clone(),
            ca: dir.join("ca.pem"),
            other_ca: dir.join("other-ca.pem"),
            client_cert: dir.join("client.pem"),
            client_key: dir.join("client.key"),
            client_pem: dir.join("client-with-key.pem"),
            children: Vec::new(),
            dir,
        };
        let tansu_bin = servers.tansu.clone().unwrap();
        fixture.spawn(
            "tansu",
            &[
                &tansu_bin,
                "broker",
                "--listener-url",
                &format!("tcp://127.0.0.1:{tansu}"),
                "--advertised-listener-url",
                &format!("tcp://localhost:{kafka}"),
                "--storage-engine",
                "sqlite://tansu.db",
            ],
        );
        let tansu_addr = format!("127.0.0.1:{tansu}");
        let config = fixture.stunnel_config(&[
            ("kafka", kafka, &tansu_addr, "server"),
            ("kafka_elsewhere", kafka_elsewhere, &tansu_addr, "elsewhere"),
            ("mongodb", mongodb, &servers.mongodb, "server"),
            (
                "mongodb_elsewhere",
                mongodb_elsewhere,
                &servers.mongodb,
                "elsewhere",
            ),
        ]);
        fixture.spawn("stunnel", &["stunnel4", &config.display().to_string()]);
        for port in [tansu, kafka, kafka_elsewhere, mongodb, mongodb_elsewhere] {
            fixture.wait_port(port)?;
        }
        Ok(fixture)
    }

    /// One fixture for every test of a binary that asks for it, for openers
    /// that are plain functions (the shared suites'). Its processes end
    /// with the test binary (see [`TlsServers::spawn`]).
    pub fn shared(test: &str) -> Option<&'static TlsServers> {
        static SHARED: OnceLock<Option<TlsServers>> = OnceLock::new();
        SHARED.get_or_init(|| TlsServers::start(test)).as_ref()
    }

    /// A Kafka URI for fresh topics, over TLS with the client certificate.
    pub fn kafka_uri(&self, prefix: &str, partitions: u32) -> String {
        format!(
            "kafka://{}?partitions={partitions}&topic_prefix={prefix}&tls_ca_file={}&tls_cert_file={}&tls_key_file={}",
            self.kafka,
            self.ca.display(),
            self.client_cert.display(),
            self.client_key.display()
        )
    }

    /// A MongoDB URI for a fresh database, over TLS with the client
    /// certificate.
    pub fn mongodb_uri(&self, db: &str) -> String {
        mongodb_tls_uri(&self.mongodb, db, &self.ca, &self.client_pem)
    }

    /// The same database without TLS, for a test's own checks.
    pub fn mongodb_plain_uri(&self, db: &str) -> String {
        format!(
            "mongodb://{}/{db}?directConnection=true",
            self.mongodb_plain
        )
    }

    /// Runs `command` so that it ends when this process does, however it
    /// ends: a shell starts it and kills it once its standard input, a pipe
    /// this process holds, closes.
    fn spawn(&mut self, name: &str, command: &[&str]) {
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).unwrap();
        let child = Command::new("sh")
            .args([
                "-c",
                "\"$@\" & child=$!; read _; kill $child; wait $child",
                "sh",
            ])
            .args(command)
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.children.push(child);
    }

    fn stunnel_config(&self, services: &[(&str, u16, &str, &str)]) -> PathBuf {
        let d = self.dir.display();
        let mut text = format!(
            "foreground = yes\npid = {d}/stunnel.pid\noutput = {d}/stunnel-sessions.log\ndebug = 4\n"
        );
        for (name, port, to, cert) in services {
            text += &format!(
                "[{name}]\naccept = 127.0.0.1:{port}\nconnect = {to}\ncert = {d}/{cert}.pem\nkey = {d}/{cert}.key\nCAfile = {d}/ca.pem\nverifyChain = yes\n"
            );
        }
        let path = self.dir.join("stunnel.conf");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Waits for `port` to take connections; an error when a server
    /// found one of its ports taken.
    fn wait_port(&self, port: u16) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let logs: Vec<String> = ["tansu.log", "stunnel.log"]
                .iter()
                .map(|l| std::fs::read_to_string(self.dir.join(l)).unwrap_or_default())
                .collect();
            if logs.iter().any(|l| l.contains("Address already in use")) {
                return Err(format!(
                    "a port of the fixture was taken (waiting for {port})"
                ));
            }
            if Instant::now() > deadline {
                panic!("port {port} never opened; logs:\n{}", logs.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }
}

/// A MongoDB URI over TLS, trusting `ca`, with the client certificate `pem`.
pub fn mongodb_tls_uri(host: &str, db: &str, ca: &Path, pem: &Path) -> String {
    format!(
        "mongodb://{host}/{db}?directConnection=true&tls=true&tlsCAFile={}&tlsCertificateKeyFile={}",
        ca.display(),
        pem.display()
    )
}

impl Drop for TlsServers {
    fn drop(&mut self) {
        for child in &mut self.children {
            drop(child.stdin.take());
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The fixture's directory under the system's temporary directory, named
/// `socialite-tls_PID_...` by [`Servers::unique`].
const DIR_PREFIX: &str = "socialite-tls";

/// The shared fixture lives in a static, which is never dropped: removes
/// the directories that earlier test processes, no longer running, left.
/// Only where `/proc` tells which processes run.
fn remove_stale_dirs() {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(DIR_PREFIX)?.strip_prefix('_'))
            .and_then(|rest| rest.split('_').next()?.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Two CAs, a server certificate for `localhost`, one for another host,
/// and a client certificate, all signed by the first CA (P-256 keys).
fn make_certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("running openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in ["ca", "other-ca"] {
        let (keyout, out, subject) = (
            format!("{ca}.key"),
            format!("{ca}.pem"),
            format!("/CN=Socialite test {ca}"),
        );
        let mut args = vec!["req", "-x509", "-days", "2", "-subj", &subject];
        args.extend(key);
        args.extend(["-keyout", &keyout, "-out", &out]);
        openssl(&args);
    }
    for (name, names, usage) in [
        ("server", "DNS:localhost,IP:127.0.0.1", "serverAuth"),
        ("elsewhere", "DNS:elsewhere.example", "serverAuth"),
        ("client", "DNS:socialite-client", "clientAuth"),
    ] {
        let ext = format!("{name}.ext");
        std::fs::write(
            dir.join(&ext),
            format!(
                "subjectAltName={names}\nbasicConstraints=CA:FALSE\nextendedKeyUsage={usage}\n"
            ),
        )
        .unwrap();
        let (keyout, csr, out, subject) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
            format!("/CN={name}"),
        );
        let mut args = vec!["req", "-subj", &subject];
        args.extend(key);
        args.extend(["-keyout", &keyout, "-out", &csr]);
        openssl(&args);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext,
            "-out",
            &out,
        ]);
    }
    let cert = std::fs::read_to_string(dir.join("client.pem")).unwrap();
    let key = std::fs::read_to_string(dir.join("client.key")).unwrap();
    std::fs::write(dir.join("client-with-key.pem"), cert + &key).unwrap();
}
