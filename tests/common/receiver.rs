//! A webhook receiver for the tests: HTTPS on loopback with a certificate of
//! its own CA (written to a file for `events.webhooks.allowed_ca_file`),
//! recording every request it gets, raw, with the status it answered.
//!
//! A challenge (`{"type":"verification","challenge":…}`) is echoed on every
//! path, except where the path misanswers it; then each path behaves as told
//! ([`Receiver::behave`], by the longest registered prefix), accepting (200)
//! by default.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;

/// How a path answers.
#[derive(Debug, Clone)]
pub enum Behaviour {
    /// 200.
    Accept,
    /// Answers a challenge with another one (`{"challenge":"not-the-nonce"}`).
    WrongChallenge,
    /// Answers a challenge with an endless body.
    Flood,
    /// Never answers.
    Silent,
    /// Answers the challenge, then never answers a delivery.
    Stall,
    /// Answers deliveries with `status` (410, 413, 500…).
    Status(u16),
    /// Answers the first `failures` deliveries with `status`, then accepts.
    FailFirst { failures: usize, status: u16 },
    /// Answers deliveries 302 to this URL.
    Redirect(String),
}

/// What a wrong challenge answer carries.
pub const WRONG_CHALLENGE_ECHO: &str = "not-the-nonce";

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When it arrived, since the receiver started.
    pub at: Duration,
    /// The status it was answered with.
    pub status: u16,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body's `type` (a control body), or `None` for an occurrence.
    pub fn kind(&self) -> Option<String> {
        self.json().get("type").and_then(Value::as_str).map(str::to_owned)
    }

    pub fn is_challenge(&self) -> bool {
        let json = self.json();
        json["type"] == "verification" || json["challenge"].is_string()
    }
}

#[derive(Default)]
struct Log {
    received: Mutex<Vec<Received>>,
    behaviours: Mutex<BTreeMap<String, Behaviour>>,
    /// Deliveries (not challenges) answered so far, by path.
    answered: Mutex<BTreeMap<String, usize>>,
    arrived: tokio::sync::Notify,
    started: Option<Instant>,
}

/// The running receiver.
pub struct Receiver {
    /// `https://localhost:PORT`.
    pub origin: String,
    /// `https://127.0.0.1:PORT`.
    pub ip_origin: String,
    /// The PEM file of the CA its certificate is issued by.
    pub ca_file: std::path::PathBuf,
    log: Arc<Log>,
    handle: actix_web::dev::ServerHandle,
    _dir: tempfile::TempDir,
}

impl Receiver {
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (ca_file, cert_file, key_file) = issue(dir.path());
        let tls = actix_mcp::config::TlsConfig {
            cert: cert_file.to_string_lossy().into_owned(),
            key: key_file.to_string_lossy().into_owned(),
        };
        let tls = actix_mcp::transport::http::tls::server_config(&tls).unwrap();
        let log = Arc::new(Log { started: Some(Instant::now()), ..Log::default() });
        let data = web::Data::from(log.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(answer)))
            .workers(1)
            .listen_rustls_0_23(listener, tls)
            .unwrap()
            .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Receiver {
            origin: format!("https://localhost:{port}"),
            ip_origin: format!("https://127.0.0.1:{port}"),
            ca_file,
            log,
            handle,
            _dir: dir,
        }
    }

    /// Paths starting with `prefix` behave so from now on.
    pub fn behave(&self, prefix: &str, behaviour: Behaviour) {
        self.log.behaviours.lock().unwrap().insert(prefix.to_owned(), behaviour);
    }

    /// Everything received so far on paths starting with `prefix`.
    pub fn received(&self, prefix: &str) -> Vec<Received> {
        let all = self.log.received.lock().unwrap();
        all.iter().filter(|r| r.path.starts_with(prefix)).cloned().collect()
    }

    /// Waits (up to `within`) until `enough` holds of what `prefix` received.
    pub async fn wait_for(
        &self,
        prefix: &str,
        within: Duration,
        enough: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let arrived = self.log.arrived.notified();
            let got = self.received(prefix);
            if enough(&got) || tokio::time::Instant::now() >= deadline {
                return got;
            }
            let _ = tokio::time::timeout_at(deadline, arrived).await;
        }
    }

    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

fn behaviour_of(log: &Log, path: &str) -> Behaviour {
    let behaviours = log.behaviours.lock().unwrap();
    let found = behaviours.iter().filter(|(prefix, _)| path.starts_with(prefix.as_str())).max_by_key(|(p, _)| p.len());
    found.map_or(Behaviour::Accept, |(_, b)| b.clone())
}

async fn answer(request: HttpRequest, body: web::Bytes, log: web::Data<Log>) -> HttpResponse {
    let path = request.path().to_owned();
    let headers = request
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let at = log.started.map(|s| s.elapsed()).unwrap_or_default();
    let mut received = Received { path: path.clone(), headers, body: body.to_vec(), at, status: 200 };
    let challenge = received.is_challenge().then(|| received.json()["challenge"].clone());
    let behaviour = behaviour_of(&log, &path);
    let delivery_number = if challenge.is_none() {
        let mut answered = log.answered.lock().unwrap();
        let n = answered.entry(path.clone()).or_default();
        *n += 1;
        *n
    } else {
        0
    };
    let response = match (&behaviour, challenge) {
        (Behaviour::Silent, _) => None,
        (Behaviour::WrongChallenge, _) => {
            Some(HttpResponse::Ok().json(serde_json::json!({"challenge": WRONG_CHALLENGE_ECHO})))
        }
        (Behaviour::Flood, Some(_)) => {
            let chunk = web::Bytes::from(vec![b' '; 64 * 1024]);
            let endless = futures::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
            Some(HttpResponse::Ok().content_type("application/json").streaming(endless))
        }
        (_, Some(challenge)) => Some(HttpResponse::Ok().json(serde_json::json!({"challenge": challenge}))),
        (Behaviour::Stall, None) => None,
        (Behaviour::Status(status), None) => Some(with_status(*status)),
        (Behaviour::FailFirst { failures, status }, None) if delivery_number <= *failures => Some(with_status(*status)),
        (Behaviour::Redirect(to), None) => {
            Some(HttpResponse::Found().insert_header(("Location", to.as_str())).finish())
        }
        _ => Some(HttpResponse::Ok().json(serde_json::json!({}))),
    };
    received.status = response.as_ref().map_or(0, |r| r.status().as_u16());
    log.received.lock().unwrap().push(received);
    log.arrived.notify_waiters();
    match response {
        Some(response) => response,
        None => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            HttpResponse::Ok().finish()
        }
    }
}

fn with_status(status: u16) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(status).unwrap();
    HttpResponse::build(status).json(serde_json::json!({}))
}

/// A CA and a certificate it issued for `localhost` and 127.0.0.1: the
/// CA's PEM, the certificate's and the key's files.
fn issue(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "webhook receiver test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let files = (dir.join("ca.pem"), dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&files.0, ca.pem()).unwrap();
    std::fs::write(&files.1, cert.pem()).unwrap();
    std::fs::write(&files.2, key.serialize_pem()).unwrap();
    files
}

/// Each delivery checked by `standardwebhooks` (Python), signed with
/// `secret`: "ok" or why not, in order; `None` (after printing SKIP) where
/// the package cannot be installed and external programs are not required.
pub fn standard_webhooks_verify(test: &str, secret: &str, deliveries: &[Received]) -> Option<Vec<String>> {
    let venv = super::real_servers(test, "python", &["python3"])?;
    let items: Vec<Value> = deliveries
        .iter()
        .map(|d| {
            let headers: serde_json::Map<String, Value> =
                d.headers.iter().map(|(n, v)| (n.to_ascii_lowercase(), Value::String(v.clone()))).collect();
            serde_json::json!({"secret": secret, "headers": headers, "body": String::from_utf8_lossy(&d.body)})
        })
        .collect();
    let script = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/real-servers/verify_webhooks.py");
    let mut child = std::process::Command::new(venv.join("bin/python"))
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(Value::Array(items).to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "verify_webhooks.py failed");
    Some(serde_json::from_slice(&out.stdout).expect("verify_webhooks.py prints a JSON array"))
}
