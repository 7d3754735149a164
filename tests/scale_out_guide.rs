//! The scaling-out guide's setup, run as written: `config/scale-out.sh`
//! (a Redis master and replica, three Sentinels from `config/sentinel.conf`,
//! three instances of `config/cluster-sentinel.toml`, the shipped nginx
//! config round robin over them; a legacy session served by every instance,
//! the master killed and followed) with every port moved to a free one;
//! and what the guide says of stopping an instance (SIGINT skips the
//! drain) and of legacy sessions on any instance (changes made at once on
//! two instances both stand).

use crate::common;

use std::time::{Duration, Instant};

use common::redis::Redis;
use common::*;
use serde_json::{json, Value};

#[actix_rt::test]
async fn the_scale_out_setup_runs_as_written() {
    let test = "scale_out_guide::the_scale_out_setup_runs_as_written";
    let Some(_) = external(test, &["nginx", "redis-server", "redis-cli", "curl"]) else { return };
    let work = tempfile::Builder::new().prefix("actix-mcp-scale-out-").tempdir().unwrap();
    let ports = |n: usize| (0..n).map(|_| free_fixed_port().to_string()).collect::<Vec<_>>().join(" ");
    let mut walk = tokio::process::Command::new("bash");
    walk.arg("config/scale-out.sh")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env("BIN", binary())
        .env("WORK", work.path())
        .env("REDIS_PORT", free_fixed_port().to_string())
        .env("REPLICA_PORT", free_fixed_port().to_string())
        .env("SENTINEL_PORTS", ports(3))
        .env("INSTANCE_PORTS", ports(3))
        .env("LB_PORT", free_fixed_port().to_string())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), walk.output()).await.expect("the walk ends").unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the setup failed:\n{stdout}\n{stderr}");
    for step in [
        "the session's messages were served by 3 instances",
        "\"failovers\":1",
        "the session is served after the failover",
        "Done: three instances",
    ] {
        assert!(stdout.contains(step), "{step:?} in:\n{stdout}");
    }
}

/// `kill SIGNAL PID` of `child`.
fn send_signal(child: &tokio::process::Child, signal: &str) {
    let pid = child.id().expect("running").to_string();
    assert!(std::process::Command::new("kill").args([signal, &pid]).status().unwrap().success());
}

/// A listen stream with the id `id` on `url`, acknowledged.
async fn listening(url: &str, id: &str) -> SseReader {
    let body = request(json!(id), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(url, &body).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    stream
}

/// The listen stream `id` gets its completion result, then ends (each
/// within 10 s).
async fn completed(stream: &mut SseReader, id: &str) {
    let done = stream.next().await.expect("the completion result");
    assert_eq!((done["id"].as_str(), done["result"]["resultType"].as_str()), (Some(id), Some("complete")), "{done}");
    assert!(stream.next().await.is_none(), "then the stream closes");
}

#[actix_rt::test]
async fn sigint_skips_the_drain() {
    // A drain of a minute: one that ran could not go unseen.
    let config = ConfigFile::new("scale-out-sigint", "[shutdown]\ndrain_ms = 60000\n");
    let served = HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await;
    let HttpChild { mut child, url, mut stderr, .. } = served;
    let mut stream = listening(&url, "ctrl-c").await;
    let sent = Instant::now();
    send_signal(&child, "-INT");
    completed(&mut stream, "ctrl-c").await;
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("exits within 10 s").unwrap();
    assert!(status.success(), "{status:?}");
    assert!(sent.elapsed() < Duration::from_secs(30), "stopped after {:?}", sent.elapsed());
    let mut log = Vec::new();
    while let Some(line) =
        tokio::time::timeout(Duration::from_secs(10), stderr.next_line()).await.expect("its log ends with it").unwrap()
    {
        log.push(line);
    }
    assert!(log.iter().any(|l| l.contains("shutting down")), "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("draining")), "SIGINT began a drain: {log:#?}");
}

#[actix_rt::test]
async fn sigterm_drains_and_a_second_signal_cuts_the_drain_short() {
    let config = ConfigFile::new("scale-out-sigterm-sigint", "[shutdown]\ndrain_ms = 60000\n");
    let mut served = HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await;
    let url = served.url.clone();
    let mut stream = listening(&url, "term").await;
    send_signal(&served.child, "-TERM");
    served.stderr_until("draining").await;
    // Draining: not ready, and still serving.
    let readyz = url.replace("/mcp", "/readyz");
    assert_eq!(client().get(&readyz).send().await.unwrap().status(), 503);
    let call = request(json!(1), "tools/call", json!({"name": "echo", "arguments": {"text": "still served"}}));
    assert_eq!(post(&url, &call).await.response()["result"]["content"][0]["text"], "still served");
    let sent = Instant::now();
    send_signal(&served.child, "-INT");
    served.stderr_until("the drain is cut short").await;
    completed(&mut stream, "term").await;
    let status =
        tokio::time::timeout(Duration::from_secs(10), served.child.wait()).await.expect("exits within 10 s").unwrap();
    assert!(status.success(), "{status:?}");
    assert!(sent.elapsed() < Duration::from_secs(30), "stopped {:?} after the second signal", sent.elapsed());
}

fn rpc(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// An instance named `name` of the everything catalog, its hub and legacy
/// sessions in the Redis on `redis_port`.
async fn instance(name: &str, redis_port: u16) -> (HttpChild, ConfigFile) {
    let cfg = ConfigFile::new(
        &format!("scale-out-{name}-{redis_port}"),
        &format!(
            "[server]\nname = \"{name}\"\n[hub]\nbackend = \"redis\"\nredis_channel_prefix = \"so-{pid}\"\n\
             [redis]\nurl = \"redis://127.0.0.1:{redis_port}/\"\n[catalog]\nname = \"everything\"\n\
             [shutdown]\ndrain_ms = 100\n",
            pid = std::process::id()
        ),
    );
    let mut child = HttpChild::spawn(&["--config", cfg.path()]).await;
    child.stderr_until_all(&["redis subscription established", "bus subscribed"]).await;
    (child, cfg)
}

/// A legacy session opened on `url`.
async fn initialize(url: &str) -> String {
    let params =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    let r = legacy_post(url, None, &rpc(json!(0), "initialize", params)).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.headers["mcp-session-id"].to_str().unwrap().to_string()
}

/// The URIs of the `resources/updated` the stream `stream` delivers
/// before the `tools/list_changed` that `marker`, a call on `url`, causes.
async fn updated_before_marker(url: &str, sid: &str, id: i64, stream: &mut SseReader) -> Vec<String> {
    let marker = rpc(json!(id), "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
    assert_eq!(legacy_post(url, Some(sid), &marker).await.status, 200);
    let mut uris = Vec::new();
    loop {
        let m = stream.next().await.expect("the session's GET stream open");
        match m["method"].as_str() {
            Some("notifications/tools/list_changed") => return uris,
            Some("notifications/resources/updated") => uris.push(m["params"]["uri"].as_str().unwrap().to_owned()),
            _ => {}
        }
    }
}

#[actix_rt::test]
async fn subscriptions_changed_at_once_on_two_instances_both_stand() {
    let test = "scale_out_guide::subscriptions_changed_at_once_on_two_instances_both_stand";
    let Some(_) = external(test, &["redis-server"]) else { return };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let (a, _fa) = instance("both-a", port).await;
    let (b, _fb) = instance("both-b", port).await;
    // One session, held on both.
    let sid = initialize(&a.url).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy_post(&b.url, Some(&sid), &note).await.status, 202);
    let resp =
        client().get(&a.url).header("Mcp-Session-Id", &sid).header("Accept", "text/event-stream").send().await.unwrap();
    let mut stream = SseReader::from_response(resp);
    let mut id = 0i64;
    let mut next_id = || {
        id += 1;
        id
    };
    for round in 0..30 {
        // Four resources subscribed on A and four on B, all at once; then
        // all eight unsubscribed at once, the other way round.
        let uris: Vec<String> = (0..8).map(|k| format!("test://both/{round}/{k}")).collect();
        for (method, first, second) in [("resources/subscribe", &a, &b), ("resources/unsubscribe", &b, &a)] {
            let changes: Vec<(&str, Value)> = uris
                .iter()
                .enumerate()
                .map(|(k, uri)| {
                    let on = if k % 2 == 0 { first.url.as_str() } else { second.url.as_str() };
                    (on, rpc(json!(next_id()), method, json!({"uri": uri})))
                })
                .collect();
            let answers =
                futures::future::join_all(changes.iter().map(|(on, body)| legacy_post(on, Some(&sid), body))).await;
            for r in &answers {
                assert_eq!(r.response()["result"], json!({}), "round {round}, {method}: {}", r.raw);
            }
            // The next calls on A update each: what stands is delivered on
            // A's GET stream, and only that.
            for uri in &uris {
                let update = rpc(
                    json!(next_id()),
                    "tools/call",
                    json!({"name": "test_trigger_resource_update", "arguments": {"uri": uri}}),
                );
                assert_eq!(legacy_post(&a.url, Some(&sid), &update).await.status, 200);
            }
            let mut heard = updated_before_marker(&a.url, &sid, next_id(), &mut stream).await;
            heard.sort();
            let expected: Vec<String> = if method == "resources/subscribe" { uris.clone() } else { Vec::new() };
            assert_eq!(heard, expected, "round {round}: after each {method} made at once on A and B");
        }
    }
    a.terminate().await;
    b.terminate().await;
}
