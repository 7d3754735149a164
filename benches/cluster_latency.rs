#![allow(missing_docs)]
//! Cross-instance notification latency: two `actix-mcp serve` processes
//! sharing a `redis-server` (all on loopback), 1,000 `subscriptions/listen`
//! streams split evenly between them, and a series of list changes triggered
//! on instance A. For every event it records, per stream, the time from the
//! trigger to the notification's arrival, and prints p50/p99/max for the
//! streams on A (local delivery) and on B (through Redis).
//!
//! ```sh
//! cargo bench --bench cluster_latency            # 1000 listeners, 50 events
//! LISTENERS=2000 EVENTS=100 cargo bench --bench cluster_latency
//! ```
//! Bounded: at most LISTENERS streams (default 1000), EVENTS events (default
//! 50), 10 s per event; everything on 127.0.0.1.

use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn binary() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--profile", "dist", "-p", "actix-mcp", "--features", "full", "--bin", "actix-mcp"])
        .current_dir(root)
        .status()
        .expect("cargo build");
    assert!(status.success());
    root.join("target/dist/actix-mcp")
}

async fn serve(bin: &std::path::Path, config: &std::path::Path) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(bin)
        .args(["serve", "--bind", "127.0.0.1:0", "--config", config.to_str().unwrap(), "--log-level", "warning"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("server started");
        if let Some(u) = line.strip_prefix("listening on ") {
            break u.to_string();
        }
    };
    actix_rt::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(name: &str, mut d: Vec<Duration>) {
    d.sort();
    println!(
        "{name:>22}: n={:<6} p50={:>8.2?} p99={:>8.2?} max={:>8.2?}",
        d.len(),
        percentile(&d, 0.50),
        percentile(&d, 0.99),
        d.last().copied().unwrap_or_default()
    );
}

#[actix_rt::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    let listeners = env_usize("LISTENERS", 1000);
    let events = env_usize("EVENTS", 50);
    let Some(redis_bin) =
        ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].into_iter().find(|p| std::path::Path::new(p).exists())
    else {
        eprintln!("cluster_latency: redis-server is not installed; skipping");
        return;
    };
    let port = 20_000 + (std::process::id() % 9000) as u16;
    let mut redis = start_redis(redis_bin, port).await;
    let dir = std::env::temp_dir().join(format!("actix-mcp-bench-{}", std::process::id()));
    let config = node_config(&dir, port);
    let bin = binary();
    let (_a, url_a) = serve(&bin, &config).await;
    let (_b, url_b) = serve(&bin, &config).await;
    tokio::time::sleep(Duration::from_millis(300)).await; // both subscribed to Redis

    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(bool, Instant)>();
    for i in 0..listeners {
        let on_b = i % 2 == 1;
        open_listener(&client, if on_b { &url_b } else { &url_a }, i, on_b, tx.clone()).await;
    }
    println!(
        "{listeners} listen streams open ({} on A, {} on B); {events} events",
        listeners.div_ceil(2),
        listeners / 2
    );
    let (mut local, mut remote) = (Vec::new(), Vec::new());
    let mut whole = Vec::new();
    for i in 0..events {
        let start = Instant::now();
        trigger(&client, &url_a, 100_000 + i).await;
        for _ in 0..listeners {
            let (on_b, at) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("all deliveries within 10 s")
                .unwrap();
            let d = at.saturating_duration_since(start);
            if on_b {
                remote.push(d)
            } else {
                local.push(d)
            }
        }
        whole.push(start.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    report("local (instance A)", local);
    report("cross-instance (B)", remote);
    report("all streams have it", whole);
    let _ = redis.kill().await;
    std::fs::remove_dir_all(&dir).ok();
}

/// A throw-away redis-server on `port`, once it accepts connections.
async fn start_redis(bin: &str, port: u16) -> tokio::process::Child {
    let redis = tokio::process::Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    redis
}

/// The config both instances share: the Redis backend and one MRTR key.
fn node_config(dir: &std::path::Path, port: u16) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let config = dir.join("node.toml");
    std::fs::write(
        &config,
        format!(
            "[hub]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:{port}/\"\n[catalog]\nname = \"everything\"\n\
             [mrtr]\nkey = \"YmVuY2gta2V5LWJlbmNoLWtleS1iZW5jaC1rZXktYmVuY2g=\"\n"
        ),
    )
    .unwrap();
    config
}

/// Opens listen stream `i` at `url` and returns once it is acknowledged; each
/// `tools/list_changed` it receives is sent to `tx` with its arrival time.
async fn open_listener(
    client: &reqwest::Client,
    url: &str,
    i: usize,
    on_b: bool,
    tx: tokio::sync::mpsc::UnboundedSender<(bool, Instant)>,
) {
    let body = json!({"jsonrpc": "2.0", "id": i, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta()}});
    let resp = client
        .post(url)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "subscriptions/listen")
        .json(&body)
        .send()
        .await
        .expect("listen");
    let mut stream = resp.bytes_stream();
    let (ack_tx, ack_rx) = tokio::sync::oneshot::channel::<()>();
    actix_rt::spawn(async move {
        let mut ack = Some(ack_tx);
        while let Some(Ok(chunk)) = stream.next().await {
            let now = Instant::now();
            let text = String::from_utf8_lossy(&chunk);
            for line in text.lines().filter(|l| l.starts_with("data:")) {
                if line.contains("subscriptions/acknowledged") {
                    if let Some(a) = ack.take() {
                        let _ = a.send(());
                    }
                } else if line.contains("tools/list_changed") {
                    let _ = tx.send((on_b, now));
                }
            }
        }
    });
    ack_rx.await.expect("acknowledged");
}

/// Calls the tool that changes the tool list (one event to every stream).
async fn trigger(client: &reqwest::Client, url: &str, id: usize) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "test_trigger_tool_change", "arguments": {}, "_meta": meta()}});
    client
        .post(url)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "test_trigger_tool_change")
        .json(&call)
        .send()
        .await
        .unwrap();
}
