//! Behind nginx run from the shipped `config/nginx.conf`: the config runs
//! unprivileged under a prefix of its own and passes what it means to; and
//! a rolling restart of one of two instances under load loses no request —
//! the instance drains at SIGTERM (`/readyz` 503 while it still serves),
//! the balancer's operator takes it out of rotation, and it exits 0.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::nginx::ShippedNginx;
use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[actix_rt::test]
async fn the_shipped_config_runs_unprivileged_and_passes_what_it_means_to() {
    let test = "load_balancer::the_shipped_config_runs_unprivileged_and_passes_what_it_means_to";
    let Some(_) = external(test, &["nginx"]) else { return };
    // Every listen directive binds loopback, as shipped.
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../config/nginx.conf")).unwrap();
    for line in shipped.lines().map(str::trim).filter(|l| l.starts_with("listen ")) {
        assert!(line.starts_with("listen 127.0.0.1:"), "{line}");
    }
    let port = free_fixed_port();
    let instance = HttpChild::spawn_at(&format!("127.0.0.1:{port}"), &["--catalog", "everything"]).await;
    let lb = ShippedNginx::start(&[(port, true)]).await;
    // Its pid file is in its prefix (not the system's /run/nginx.pid).
    let pid = std::fs::read_to_string(lb.prefix.join("nginx.pid")).expect("nginx.pid in the prefix");
    assert_eq!(pid.trim().parse::<u32>().ok(), lb.pid());
    // MCP, the probes and the metadata pass; /metrics does not.
    let call = request(json!(1), "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    let r = post(&lb.url("/mcp"), &call).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let get = |path: &str| {
        let url = lb.url(path);
        async move { client().get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(get("/healthz").await, 200);
    assert_eq!(get("/readyz").await, 200);
    assert_eq!(get("/metrics").await, 404, "metrics are scraped per instance");
    assert_eq!(
        client().get(format!("{}/metrics", instance.url.trim_end_matches("/mcp"))).send().await.unwrap().status(),
        200
    );
    get("/.well-known/oauth-protected-resource/mcp").await;
    // The access log, in the prefix, names the instance that answered and the method.
    let upstream = format!("upstream=127.0.0.1:{port}");
    // nginx writes a request's line after it has answered it: wait for the
    // line of the last request made, which comes after all the others.
    eventually("the access log has every request", || {
        let log = lb.access_log();
        log.contains("mcp_method=\"tools/call\"") && log.contains("GET /.well-known/oauth-protected-resource/mcp ")
    })
    .await;
    let log = lb.access_log();
    let line = |path: &str| log.lines().find(|l| l.contains(&format!("GET {path} "))).unwrap_or_default().to_owned();
    assert!(line("/.well-known/oauth-protected-resource/mcp").contains(&upstream), "{log}");
    assert!(line("/readyz").contains(&upstream), "{log}");
    assert!(line("/metrics").contains("upstream=-"), "answered by nginx itself: {log}");
    drop(lb);

    // What an instance is told of the request: the Host the client named
    // (with its port) and where it came from.
    let capture = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let capture_port = capture.local_addr().unwrap().port();
    let lb = ShippedNginx::start(&[(capture_port, true)]).await;
    let head = tokio::spawn(async move {
        let (mut s, _) = capture.accept().await.unwrap();
        let mut buf = vec![0u8; 8192];
        let mut n = 0;
        while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
            n += s.read(&mut buf[n..]).await.unwrap();
        }
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").await.unwrap();
        String::from_utf8_lossy(&buf[..n]).to_lowercase()
    });
    client().get(lb.url("/healthz")).send().await.unwrap();
    let head = head.await.unwrap();
    let lb_host = format!("127.0.0.1:{}", lb.port);
    for header in [format!("host: {lb_host}"), format!("x-forwarded-host: {lb_host}")] {
        assert!(head.contains(&header), "{header} in {head}");
    }
    assert!(head.contains("x-forwarded-for: 127.0.0.1"), "{head}");
    assert!(head.contains("x-forwarded-proto: http"), "{head}");
}

/// One answer seen by the load: when, and which instance gave it (or why
/// it failed).
type Answer = (Instant, Result<String, String>);

/// `tools/call` of `echo` through the balancer, one after another, until
/// `stop`; every answer recorded.
async fn load(url: String, stop: Arc<AtomicBool>, seen: Arc<Mutex<Vec<Answer>>>) {
    // A connection per request: a reload of nginx closes its idle client
    // connections, and a request racing that close is the client's and
    // nginx's business, not the drain's under test.
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).pool_max_idle_per_host(0).build().unwrap();
    let mut id = 0;
    while !stop.load(Ordering::Relaxed) {
        id += 1;
        let body = request(json!(id), "tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
        let mut req = client.post(&url).body(serde_json::to_vec(&body).unwrap());
        for (k, v) in standard_headers(&body) {
            req = req.header(k, v);
        }
        let answer = match req.send().await {
            Err(e) => Err(format!("request {id}: {e}")),
            Ok(resp) if resp.status() != 200 => Err(format!("request {id}: HTTP {}", resp.status())),
            Ok(resp) => match resp.json::<Value>().await {
                Ok(v) if v["result"]["content"][0]["text"] == "x" => Ok(v["result"]["_meta"]
                    ["io.modelcontextprotocol/serverInfo"]["name"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned()),
                Ok(v) => Err(format!("request {id}: {v}")),
                Err(e) => Err(format!("request {id}: {e}")),
            },
        };
        seen.lock().unwrap().push((Instant::now(), answer));
    }
}

/// The balancer's operator (what an ingress controller does): each
/// instance's own `/readyz` every 100 ms; when one changes, the instances
/// that are ready are written into nginx's list and nginx reloads. Every
/// status seen is recorded per instance (0: no answer).
async fn operator(lb: Arc<ShippedNginx>, ports: [u16; 2], stop: Arc<AtomicBool>, seen: Arc<Mutex<Vec<(u16, u16)>>>) {
    let client = reqwest::Client::builder().timeout(Duration::from_millis(500)).build().unwrap();
    let mut ready = [true, true];
    while !stop.load(Ordering::Relaxed) {
        let mut now = ready;
        for (i, port) in ports.iter().enumerate() {
            let status = match client.get(format!("http://127.0.0.1:{port}/readyz")).send().await {
                Ok(r) => r.status().as_u16(),
                Err(_) => 0,
            };
            seen.lock().unwrap().push((*port, status));
            now[i] = status == 200;
        }
        if now != ready {
            ready = now;
            lb.reload(&[(ports[0], ready[0]), (ports[1], ready[1])]);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_rt::test]
async fn a_rolling_restart_behind_nginx_loses_no_request() {
    let Some(_) = external("load_balancer::a_rolling_restart_behind_nginx_loses_no_request", &["nginx"]) else {
        return;
    };
    let config = |name: &str| {
        let toml =
            format!("[server]\nname = \"{name}\"\n[catalog]\nname = \"everything\"\n[shutdown]\ndrain_ms = 1500\n");
        ConfigFile::new(&format!("rolling-{name}"), &toml)
    };
    let (config_a, config_b) = (config("node-a"), config("node-b"));
    let (port_a, port_b) = (free_fixed_port(), free_fixed_port());
    let start = |port: u16, config: &ConfigFile| {
        let config = config.path().to_owned();
        async move { HttpChild::spawn_at(&format!("127.0.0.1:{port}"), &["--config", &config]).await }
    };
    let a = start(port_a, &config_a).await;
    let _b = start(port_b, &config_b).await;
    let lb = Arc::new(ShippedNginx::start(&[(port_a, true), (port_b, true)]).await);
    let stop = Arc::new(AtomicBool::new(false));
    let (answers, statuses) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let watching = actix_rt::spawn(operator(lb.clone(), [port_a, port_b], stop.clone(), statuses.clone()));
    let clients: Vec<_> =
        (0..4).map(|_| actix_rt::spawn(load(lb.url("/mcp"), stop.clone(), answers.clone()))).collect();
    // The load is under way through the balancer, answered by both
    // instances, and the operator has seen both ready.
    eventually("both instances answer the load and the operator saw both ready", || {
        let answers = answers.lock().unwrap();
        let by = |name: &str| answers.iter().any(|(_, a)| a.as_deref() == Ok(name));
        let statuses = statuses.lock().unwrap();
        by("node-a") && by("node-b") && statuses.contains(&(port_a, 200)) && statuses.contains(&(port_b, 200))
    })
    .await;

    // SIGTERM to node-a: it drains. Its /readyz says 503 while a request
    // that still reaches it (here: straight, on a new connection) is served,
    // with Connection: close.
    let HttpChild { mut child, url: url_a, mut stderr, .. } = a;
    actix_rt::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let terminated = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &child.id().unwrap().to_string()])
        .status()
        .unwrap()
        .success());
    let readyz = format!("http://127.0.0.1:{port_a}/readyz");
    let mut drained = false;
    while !drained && terminated.elapsed() < Duration::from_secs(1) {
        drained = client().get(&readyz).send().await.is_ok_and(|r| r.status() == 503);
    }
    assert!(drained, "/readyz answers 503 once draining");
    let direct =
        post(&url_a, &request(json!("direct"), "tools/call", json!({"name": "echo", "arguments": {"text": "x"}})))
            .await;
    assert_eq!(direct.status, 200, "served while draining: {}", direct.raw);
    assert_eq!(direct.headers.get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
    assert!(terminated.elapsed() >= Duration::from_millis(1500), "it drained for shutdown.drain_ms first");

    // A new node-a on the same port; the operator puts it back.
    let restarted = Instant::now();
    let _a2 = start(port_a, &config_a).await;
    let back = |seen: &[Answer]| seen.iter().any(|(at, a)| *at > restarted && a.as_deref() == Ok("node-a"));
    eventually("node-a answers through the balancer after its restart", || back(&answers.lock().unwrap())).await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.unwrap();
    }
    watching.await.unwrap();

    let answers = answers.lock().unwrap();
    let failed: Vec<&String> = answers.iter().filter_map(|(_, a)| a.as_ref().err()).collect();
    assert!(
        failed.is_empty(),
        "{} of {} requests failed: {:?}",
        failed.len(),
        answers.len(),
        &failed[..failed.len().min(5)]
    );
    assert!(back(&answers), "node-a serves again after its restart");
    let by_b =
        answers.iter().filter(|(at, a)| *at > terminated && *at < restarted && a.as_deref() == Ok("node-b")).count();
    assert!(by_b > 0, "node-b served while node-a was away");
    let statuses = statuses.lock().unwrap();
    assert!(statuses.contains(&(port_a, 503)), "the operator saw node-a draining");
    println!("rolling restart: {} requests, 0 failed", answers.len());
}
