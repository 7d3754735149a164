//! A webhook receiver for the tests: HTTPS on loopback with a certificate of
//! its own CA (written to a file for `allow_origins.ca_file`), recording
//! every request it gets, raw. What it answers depends on the path's first
//! segment:
//!
//! - `/ok/…`: echoes a verification's challenge, accepts everything else (200);
//! - `/wrong/…`: answers a verification with another challenge;
//! - `/gone/…`, `/big/…`, `/fail/…`: accepts the verification, then answers
//!   deliveries 410, 413 or 500;
//! - `/flaky/…`: accepts the verification, then fails each delivery id's
//!   first attempt on the path (500) and accepts the next;
//! - `/redirect/…`: 302 to `/ok/…` (which must never be followed);
//! - `/silent/…`: never answers;
//! - `/flood/…`: answers a verification with an endless body;
//! - `/wk/…`: like `/ok/`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
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
}

#[derive(Default)]
struct Log {
    received: Mutex<Vec<Received>>,
    arrived: tokio::sync::Notify,
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
        let log = Arc::new(Log::default());
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

async fn answer(request: HttpRequest, body: web::Bytes, log: web::Data<Log>) -> HttpResponse {
    let path = request.path().to_owned();
    let headers = request
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let received = Received { path: path.clone(), headers, body: body.to_vec() };
    let is_verification = received.kind().as_deref() == Some("verification");
    let challenge = received.json().get("challenge").cloned().unwrap_or(Value::Null);
    let id = received.header("webhook-id").unwrap_or_default().to_owned();
    let attempts_of_id = {
        let mut all = log.received.lock().unwrap();
        all.push(received);
        all.iter().filter(|r| r.path == path && r.header("webhook-id") == Some(id.as_str())).count()
    };
    log.arrived.notify_waiters();
    let segment = path.trim_start_matches('/').split('/').next().unwrap_or_default().to_owned();
    match (segment.as_str(), is_verification) {
        ("silent", _) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            HttpResponse::Ok().finish()
        }
        ("redirect", _) => {
            HttpResponse::Found().insert_header(("Location", path.replacen("/redirect/", "/ok/", 1))).finish()
        }
        ("wrong", true) => HttpResponse::Ok().json(serde_json::json!({"challenge": "not-the-one"})),
        ("flood", true) => {
            let chunk = web::Bytes::from(vec![b' '; 64 * 1024]);
            let endless = futures::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
            HttpResponse::Ok().content_type("application/json").streaming(endless)
        }
        (_, true) => HttpResponse::Ok().json(serde_json::json!({"challenge": challenge})),
        ("gone", false) => HttpResponse::Gone().finish(),
        ("big", false) => HttpResponse::PayloadTooLarge().finish(),
        ("fail", false) => HttpResponse::InternalServerError().finish(),
        ("flaky", false) if attempts_of_id == 1 => HttpResponse::InternalServerError().finish(),
        _ => HttpResponse::Ok().finish(),
    }
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
