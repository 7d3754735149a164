#![allow(missing_docs)]
//! Webhook deliveries per second to a local receiver: one server (in this
//! process, one HTTP worker) with an event type offering webhook delivery,
//! SUBSCRIPTIONS subscriptions to an HTTPS receiver on loopback (its
//! origin allowed, its CA trusted), and EVENTS occurrences emitted at once.
//! It prints the deliveries per second (first emit to last delivery) and
//! the latency from emit to receipt (p50/p99/max), and, first, the
//! receiver's own rate under the same number of clients posting signed
//! bodies straight to it: the headroom of what measures the server.
//!
//! ```sh
//! cargo bench --bench webhooks --profile release           # 10 subscriptions, 2000 events
//! SUBSCRIPTIONS=50 EVENTS=1000 cargo bench --bench webhooks --profile release
//! ```
//! Bounded: at most SUBSCRIPTIONS × EVENTS deliveries, 120 s in all;
//! everything on 127.0.0.1.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::prelude::*;
use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One tick.
#[derive(Serialize, JsonSchema)]
struct Tick {
    n: u64,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// What the receiver saw: each delivery's event number and arrival.
#[derive(Default)]
struct Seen {
    arrivals: Mutex<Vec<(u64, Instant)>>,
    done: tokio::sync::Notify,
    expected: std::sync::atomic::AtomicUsize,
}

async fn receive(body: web::Bytes, seen: web::Data<Seen>) -> HttpResponse {
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Some(challenge) = value.get("challenge") {
        return HttpResponse::Ok().json(json!({"challenge": challenge}));
    }
    let n = value["data"]["n"].as_u64().unwrap_or(u64::MAX);
    let mut arrivals = seen.arrivals.lock().unwrap();
    arrivals.push((n, Instant::now()));
    if arrivals.len() >= seen.expected.load(std::sync::atomic::Ordering::Acquire) {
        seen.done.notify_waiters();
    }
    HttpResponse::Ok().finish()
}

/// The receiver: HTTPS on loopback; its origin and its CA's PEM.
fn receiver(seen: Arc<Seen>, dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap().signed_by(&key, &ca, &ca_key).unwrap();
    let (ca_file, cert_file, key_file) = (dir.join("ca.pem"), dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&ca_file, ca.pem()).unwrap();
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    let tls = actix_mcp::config::TlsConfig {
        cert: cert_file.to_string_lossy().into_owned(),
        key: key_file.to_string_lossy().into_owned(),
    };
    let tls = actix_mcp::transport::http::tls::server_config(&tls).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let data = web::Data::from(seen);
    let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(receive)))
        .workers(1)
        .listen_rustls_0_23(listener, tls)
        .unwrap()
        .run();
    actix_rt::spawn(server);
    (format!("https://127.0.0.1:{port}"), ca_file)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// The receiver's own rate: `clients` clients posting `per_client` bodies.
async fn receiver_alone(origin: &str, ca_file: &std::path::Path, clients: usize, per_client: usize) -> f64 {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(ca_file).unwrap()).unwrap();
    let client = reqwest::Client::builder().add_root_certificate(ca).build().unwrap();
    let body =
        json!({"eventId": "x", "name": "tick", "timestamp": "2026-01-01T00:00:00Z", "data": {"n": 0}}).to_string();
    let started = Instant::now();
    let posts = (0..clients).map(|_| {
        let (client, body, url) = (client.clone(), body.clone(), format!("{origin}/alone"));
        async move {
            for _ in 0..per_client {
                client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("webhook-id", "x")
                    .header("webhook-timestamp", "1")
                    .header("webhook-signature", "v1,AAAA")
                    .body(body.clone())
                    .send()
                    .await
                    .unwrap();
            }
        }
    });
    futures::future::join_all(posts).await;
    (clients * per_client) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let subscriptions = env_usize("SUBSCRIPTIONS", 10);
    let events = env_usize("EVENTS", 2000);
    actix_rt::System::new().block_on(async move {
        let dir = std::env::temp_dir().join(format!("webhooks-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let seen = Arc::new(Seen::default());
        let (origin, ca_file) = receiver(seen.clone(), &dir);
        let alone = receiver_alone(&origin, &ca_file, subscriptions, events.min(1000)).await;
        seen.arrivals.lock().unwrap().clear();

        let catalog = Arc::new(Catalog::new());
        let tick = EventType::new::<NoArgs, Tick>("tick", "A tick", &[Delivery::Webhook])
            .history(events + 1, Duration::from_secs(600));
        let source = catalog.add_event_type(tick).unwrap();
        let mut config = Config::default();
        config.http.bind = "127.0.0.1:0".into();
        config.http.workers = 1;
        config.auth.mode = actix_mcp::config::AuthMode::ApiKey;
        let key = "bench-key";
        config.auth.api_keys = vec![actix_mcp::config::ApiKeyConfig {
            sha256: sha256_hex(key),
            subject: "bench".into(),
            ..Default::default()
        }];
        config.events.webhooks.allow_origins = vec![origin.clone()];
        config.events.webhooks.allowed_ca_file = ca_file.to_string_lossy().into_owned();
        let server = McpServer::new(catalog, config, actix_mcp::telemetry::logging::discard()).unwrap();
        let (url, handle) = serve(server);
        let http = reqwest::Client::new();
        for i in 0..subscriptions {
            let body = json!({"jsonrpc": "2.0", "id": i, "method": "events/subscribe", "params": {
                "name": "tick", "delivery": {"url": format!("{origin}/s{i}"),
                "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}}});
            let answer: Value = http
                .post(&url)
                .bearer_auth(key)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "events/subscribe")
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert!(answer["result"]["id"].is_string(), "{answer}");
        }
        let total = subscriptions * events;
        seen.expected.store(total, std::sync::atomic::Ordering::Release);
        let mut emitted = HashMap::with_capacity(events);
        let started = Instant::now();
        for n in 0..events as u64 {
            source.emit(Tick { n }).unwrap();
            emitted.insert(n, Instant::now());
        }
        let all = seen.done.notified();
        if seen.arrivals.lock().unwrap().len() < total {
            let _ = tokio::time::timeout(Duration::from_secs(120), all).await;
        }
        let arrivals = seen.arrivals.lock().unwrap().clone();
        let last = arrivals.iter().map(|(_, at)| *at).max().unwrap_or(started);
        let rate = arrivals.len() as f64 / last.duration_since(started).as_secs_f64();
        let mut latencies: Vec<Duration> =
            arrivals.iter().filter_map(|(n, at)| emitted.get(n).map(|e| at.saturating_duration_since(*e))).collect();
        latencies.sort();
        println!("webhooks: {subscriptions} subscriptions x {events} events = {total} deliveries expected");
        println!("  receiver alone ({subscriptions} clients): {alone:.0} requests/s");
        println!(
            "  delivered: {} in {:.2} s: {rate:.0} deliveries/s ({:.0} % of the receiver alone)",
            arrivals.len(),
            last.duration_since(started).as_secs_f64(),
            100.0 * rate / alone
        );
        if !latencies.is_empty() {
            println!(
                "  emit to receipt: p50 {:?} p99 {:?} max {:?}",
                percentile(&latencies, 0.5),
                percentile(&latencies, 0.99),
                latencies[latencies.len() - 1]
            );
        }
        handle.stop(false).await;
        let _ = std::fs::remove_dir_all(&dir);
    });
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Serves `server` on its bound port; its URL and handle.
fn serve(server: McpServer) -> (String, actix_web::dev::ServerHandle) {
    let path = server.config().http.path.clone();
    let (http, addrs) = actix_mcp::transport::http::bind(server).unwrap();
    let url = format!("http://{}{path}", addrs[0]);
    let handle = http.handle();
    actix_rt::spawn(http);
    (url, handle)
}
