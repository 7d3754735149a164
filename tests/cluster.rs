//! Several instances with the Redis hub backend, with a real `redis-server`
//! and real `actix-mcp serve` processes on loopback (and nginx round robin in
//! front of them): cross-instance notifications exactly once, the resync
//! after a Redis restart, and no sticky sessions needed. "No duplicate
//! came" is shown, never waited out: by a sentinel event sent after the
//! one that could be duplicated, on the path a copy would take, or by the
//! instance's count of copies it coalesced.

use crate::common;

use std::time::Duration;

use common::nginx::Nginx;
use common::redis::{redis_cli, Redis};
use common::*;
use serde_json::{json, Value};

const KEY: &str = "Y2x1c3Rlci10ZXN0LWtleS1zaGFyZWQtYnktaW5zdGFuY2Vz"; // 36 bytes

fn config_file(name: &str, redis_port: u16) -> ConfigFile {
    config_file_with(name, redis_port, "[catalog]\nname = \"everything\"\n")
}

/// The configuration of instance `name` on the Redis at `redis_port` (the
/// file goes when the value is dropped).
fn config_file_with(name: &str, redis_port: u16, catalog: &str) -> ConfigFile {
    ConfigFile::new(
        &format!("cluster-{name}-{redis_port}"),
        &format!(
            "[server]\nname = \"{name}\"\n[hub]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:{redis_port}/\"\n\
             redis_channel_prefix = \"test-{pid}\"\n[mrtr]\nkey = \"{KEY}\"\n{catalog}",
            pid = std::process::id()
        ),
    )
}

async fn instance(name: &str, redis_port: u16) -> HttpChild {
    started(config_file(name, redis_port)).await
}

async fn started(cfg: ConfigFile) -> HttpChild {
    let mut child = HttpChild::spawn(&["--config", cfg.path()]).await;
    child.stderr_until("redis subscription established").await;
    child
}

fn sub_id(m: &Value) -> &Value {
    &m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

fn call(id: i64, tool: &str) -> Value {
    request(json!(id), "tools/call", json!({"name": tool, "arguments": {}}))
}

#[actix_rt::test]
async fn notifications_cross_instances_exactly_once_and_survive_a_redis_restart() {
    let Some(_) = external("cluster::notifications_cross_instances", &["redis-server"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let a = instance("node-a", port).await;
    let mut b = instance("node-b", port).await;

    let listen = request(
        json!("on-b"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true,
                                 "resourceSubscriptions": ["test://watched-resource", "test://sentinel"]}}),
    );
    let mut on_b = SseReader::open(&b.url, &listen).await;
    assert_eq!(on_b.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");

    // A tool call on A updates a resource: B's listener gets it, tagged with B's id.
    assert_eq!(post(&a.url, &call(1, "test_trigger_resource_update")).await.status, 200);
    let m = on_b.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");
    assert_eq!(m["params"]["uri"], "test://watched-resource");
    assert_eq!(sub_id(&m), &json!("on-b"));
    // list_changed likewise; and the previous event came only once (this is next).
    post(&a.url, &call(2, "test_trigger_tool_change")).await;
    let m = on_b.next().await.unwrap();
    assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    assert_eq!(sub_id(&m), &json!("on-b"));

    // Redis goes away: requests still succeed, local delivery goes on.
    redis.stop().await;
    b.stderr_until("redis subscription lost").await;
    let r = post(&a.url, &call(3, "test_trigger_tool_change")).await;
    assert_eq!(r.status, 200, "no request fails because Redis is down: {}", r.raw);
    let r = post(&b.url, &request(json!(4), "tools/list", json!({}))).await;
    assert_eq!(r.status, 200);

    // Redis is back: B resyncs its listeners (the change made during the
    // outage is not silently missed), then events flow again.
    let redis = Redis::start(port).await;
    b.stderr_until("redis subscription restored").await;
    let m = on_b.next().await.unwrap();
    assert_eq!(m["method"], "notifications/tools/list_changed", "resync: {m}");
    post(&a.url, &call(5, "test_trigger_resource_update")).await;
    // The change A made during the outage (call 3) may still arrive, late: A's
    // publisher retries an event it could not send once the connection is back
    // (connect timeout 500 ms + response timeout 1 s, tried twice), and a
    // retried publish may be a second copy. A's publisher sends in order, so
    // everything it sends for calls 3 and 5 reaches B before the sentinel
    // A publishes next: B sees, after the resync and before the sentinel, at
    // most that one list_changed and the update of call 5 exactly once.
    let sentinel = json!({"name": "test_trigger_resource_update", "arguments": {"uri": "test://sentinel"}});
    assert_eq!(post(&a.url, &request(json!(6), "tools/call", sentinel)).await.status, 200);
    let mut list_changed = 0;
    let mut updated = 0;
    loop {
        let m = on_b.next().await.expect("the stream stays open");
        assert_eq!(sub_id(&m), &json!("on-b"), "{m}");
        match (m["method"].as_str(), m["params"]["uri"].as_str()) {
            (Some("notifications/tools/list_changed"), _) => list_changed += 1,
            (Some("notifications/resources/updated"), Some("test://watched-resource")) => updated += 1,
            (Some("notifications/resources/updated"), Some("test://sentinel")) => break,
            _ => panic!("unexpected {m}"),
        }
    }
    assert_eq!(updated, 1, "the update of call 5 exactly once");
    assert!(list_changed <= 1, "at most the outage's change, late: {list_changed} list_changed");
    redis.stop().await;
}

/// Waits up to 20 s until the counter `name` of the instance at `url` is `want`.
async fn until_counter(url: &str, name: &str, want: u64) {
    let mut seen = 0;
    for _ in 0..200 {
        seen = counter(url, name).await;
        if seen == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} of {url} is {seen}, not {want}, after 20 s");
}

fn server_name(r: &Reply) -> String {
    r.response()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_str().unwrap_or("?").to_string()
}

#[actix_rt::test]
async fn round_robin_without_sticky_sessions() {
    let Some(_) = external("cluster::round_robin_without_sticky_sessions", &["redis-server", "nginx"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let a = instance("node-a", port).await;
    let b = instance("node-b", port).await;
    let host = |u: &str| u.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let lb = Nginx::start(&[&host(&a.url), &host(&b.url)]).await;

    // A listen stream through the balancer sees changes made through it,
    // whichever instance each request lands on.
    let listen = request(json!(0), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&lb.url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    for i in 0..2 {
        post(&lb.url, &call(1000 + i, "test_trigger_tool_change")).await;
        assert_eq!(stream.next().await.unwrap()["method"], "notifications/tools/list_changed");
    }

    let mut served_by = std::collections::HashMap::<String, usize>::new();
    let mut ok = 0;
    let caps = json!({"elicitation": {}});
    for i in 0..40i64 {
        let base = i * 5;
        let simple = [
            request(json!(base), "server/discover", json!({})),
            request(json!(base + 1), "tools/list", json!({})),
            request(json!(base + 2), "tools/call", json!({"name": "test_simple_text"})),
            request(json!(base + 3), "resources/read", json!({"uri": "test://static-text"})),
        ];
        for body in &simple {
            let r = post(&lb.url, body).await;
            assert_eq!(r.status, 200, "{}", r.raw);
            assert!(r.response().get("result").is_some(), "{}", r.raw);
            *served_by.entry(server_name(&r)).or_default() += 1;
            ok += 1;
        }
        // A three-round MRTR flow: its rounds land on alternating instances.
        let mtr = |id: i64, extra: Value| {
            let mut params =
                json!({"name": "test_input_required_result_multi_round", "_meta": meta_with(caps.clone())});
            for (k, v) in extra.as_object().unwrap() {
                params[k] = v.clone();
            }
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
        };
        let r1 = post(&lb.url, &mtr(base + 4, json!({}))).await;
        let s1 = r1.response()["result"]["requestState"].clone();
        let r2 = post(&lb.url, &mtr(base + 4, json!({"inputResponses": {"step1": {"action": "accept", "content": {"name": "A"}}}, "requestState": s1}))).await;
        let s2 = r2.response()["result"]["requestState"].clone();
        let r3 = post(&lb.url, &mtr(base + 4, json!({"inputResponses": {"step2": {"action": "accept", "content": {"color": "red"}}}, "requestState": s2}))).await;
        assert_eq!(r3.response()["result"]["content"][0]["text"], "A likes red", "{}", r3.raw);
        ok += 1;
    }
    assert_eq!(ok, 200);
    assert_eq!(served_by.len(), 2, "both instances served: {served_by:?}");
    assert!(served_by.values().all(|&n| n >= 40), "round robin spreads the load: {served_by:?}");
    drop(lb);
    redis.stop().await;
}

#[actix_rt::test]
async fn a_change_in_a_shared_directory_is_delivered_once() {
    let Some(_) = external("cluster::a_change_in_a_shared_directory_is_delivered_once", &["redis-server"]) else {
        return;
    };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let dir = std::env::temp_dir().join(format!("actix-mcp-shared-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "1").unwrap();
    std::fs::write(dir.join("b.txt"), "1").unwrap();
    let dir = dir.canonicalize().unwrap();
    let catalog = format!("[catalog]\nname = \"fs\"\n[fs]\nroot = \"{}\"\n", dir.display());
    let _a = started(config_file_with("shared-a", port, &catalog)).await;
    let b = started(config_file_with("shared-b", port, &catalog)).await;
    const COALESCED: &str = "mcp_server_redis_events_deduplicated_total";
    let uri = |f: &str| format!("file://{}/{f}", dir.display());
    let listen = request(
        json!(1),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": [uri("a.txt"), uri("b.txt")]}}),
    );
    let mut on_b = SseReader::open(&b.url, &listen).await;
    on_b.next().await.unwrap();
    // Both instances see the edit of a.txt; the listener gets it once. B
    // has its own copy and A's: once B has coalesced one of the two, none
    // is left to come, and the next message after it is the edit of b.txt.
    std::fs::write(dir.join("a.txt"), "22").unwrap();
    let m = on_b.next().await.unwrap();
    assert_eq!(m["params"]["uri"], uri("a.txt"), "{m}");
    until_counter(&b.url, COALESCED, 1).await;
    std::fs::write(dir.join("b.txt"), "333").unwrap();
    let m = on_b.next().await.unwrap();
    assert_eq!(m["params"]["uri"], uri("b.txt"), "the edit of a.txt came twice: {m}");
    until_counter(&b.url, COALESCED, 2).await;
    std::fs::remove_dir_all(&dir).ok();
    redis.stop().await;
}

/// Waits up to 20 s until the gateway at `url` holds `n` upstream
/// subscriptions (its status page's `upstreams[].subscriptions`).
async fn until_upstream_subscriptions(url: &str, n: u64) {
    for _ in 0..200 {
        let status: Value =
            client().get(url.replace("/mcp", "/status.json")).send().await.unwrap().json().await.unwrap();
        let open: u64 =
            status["upstreams"].as_array().into_iter().flatten().filter_map(|r| r["subscriptions"].as_u64()).sum();
        if open == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the gateway at {url} did not reach {n} upstream subscriptions within 20 s");
}

#[actix_rt::test]
async fn gateways_deliver_each_upstream_event_once() {
    // Two gateway instances over one Redis, each running its own copy of a
    // stdio upstream (a filesystem server on one shared directory), as every
    // instance of a deployment does. Both copies see each change; each
    // listener must hear it once, from its own instance.
    let Some(_) = external("cluster::gateways_deliver_each_upstream_event_once", &["redis-server"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let dir = std::env::temp_dir().join(format!("actix-mcp-gw-shared-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "1").unwrap();
    std::fs::write(dir.join("b.txt"), "1").unwrap();
    let dir = dir.canonicalize().unwrap();
    let upstream = ConfigFile::new(
        &format!("gw-upstream-{port}"),
        &format!("[catalog]\nname = \"fs\"\n[fs]\nroot = \"{}\"\n", dir.display()),
    );
    // The everything catalog beside the upstream gives each instance a
    // change of its own to make: the sentinel, which goes through Redis.
    let gateway = format!(
        "[catalog]\nname = \"everything\"\n[status]\nenabled = true\n\n[[upstreams]]\nname = \"files\"\ncommand = {:?}\nargs = [\"stdio\", \"--log-level\", \"error\", \"--config\", {:?}]\n",
        binary().display().to_string(),
        upstream.path()
    );
    let a = started(config_file_with("gw-a", port, &gateway)).await;
    let b = started(config_file_with("gw-b", port, &gateway)).await;
    // Listeners open once the upstreams are served (their arrival is a change too).
    until_upstream_subscriptions(&a.url, 0).await;
    until_upstream_subscriptions(&b.url, 0).await;
    let uri = |f: &str| format!("file://{}/{f}", dir.display());
    let listen = request(
        json!(1),
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true,
                                 "resourceSubscriptions": [uri("a.txt"), uri("b.txt"), "test://sentinel-a", "test://sentinel-b"]}}),
    );
    let mut on_a = SseReader::open(&a.url, &listen).await;
    let mut on_b = SseReader::open(&b.url, &listen).await;
    for on in [&mut on_a, &mut on_b] {
        assert_eq!(on.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    }
    // Each instance subscribed upstream for what its own listener wants
    // (before that, its upstream's items must be served: wait for both).
    until_upstream_subscriptions(&a.url, 2).await;
    until_upstream_subscriptions(&b.url, 2).await;
    // What an upstream still announces as it settles after its start is
    // let pass: the edits below begin on quiet streams.
    for on in [&mut on_a, &mut on_b] {
        while let Some(Some(_)) = on.next_within(Duration::from_secs(1)).await {}
    }

    // An edit: each listener gets one resources/updated; the next message
    // is the edit after it, not a copy from the other instance.
    std::fs::write(dir.join("a.txt"), "22").unwrap();
    for on in [&mut on_a, &mut on_b] {
        let m = on.next().await.unwrap();
        assert_eq!(
            (m["method"].as_str(), m["params"]["uri"].as_str()),
            (Some("notifications/resources/updated"), Some(uri("a.txt").as_str())),
            "{m}"
        );
    }
    // A new file: each copy lists again, each listener hears one list_changed.
    std::fs::write(dir.join("c.txt"), "new").unwrap();
    for on in [&mut on_a, &mut on_b] {
        let m = on.next().await.unwrap();
        assert_eq!(m["method"], "notifications/resources/list_changed", "{m}");
    }
    // Each instance publishes a sentinel: through Redis it reaches the
    // other instance's listener after anything that instance published
    // before it. Each listener hears both sentinels and nothing else.
    for (n, (node, name)) in [(&a, "sentinel-a"), (&b, "sentinel-b")].into_iter().enumerate() {
        let args = json!({"name": "test_trigger_resource_update", "arguments": {"uri": format!("test://{name}")}});
        assert_eq!(post(&node.url, &request(json!(10 + n), "tools/call", args)).await.status, 200);
    }
    for on in [&mut on_a, &mut on_b] {
        let mut sentinels = Vec::new();
        while sentinels.len() < 2 {
            let m = on.next().await.unwrap();
            assert_eq!(m["method"], "notifications/resources/updated", "an event came twice: {m}");
            sentinels.push(m["params"]["uri"].as_str().unwrap_or_default().to_owned());
        }
        sentinels.sort();
        assert_eq!(sentinels, ["test://sentinel-a", "test://sentinel-b"], "an event came twice");
    }
    std::fs::write(dir.join("b.txt"), "333").unwrap();
    for on in [&mut on_a, &mut on_b] {
        let m = on.next().await.unwrap();
        assert_eq!(m["params"]["uri"], uri("b.txt"), "an event came twice: {m}");
    }
    // When the listener leaves, its instance's upstream subscriptions end.
    drop(on_a);
    until_upstream_subscriptions(&a.url, 0).await;
    until_upstream_subscriptions(&b.url, 2).await;
    std::fs::remove_dir_all(&dir).ok();
    redis.stop().await;
}

/// `GET` of a health endpoint next to the MCP endpoint at `url`: status and body.
async fn health(url: &str, path: &str) -> (u16, Value) {
    let res = client().get(url.replace("/mcp", path)).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

#[actix_rt::test]
async fn readiness_follows_the_redis_link_when_required() {
    let Some(_) = external("cluster::readiness_follows_the_redis_link", &["redis-server"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let cfg = config_file_with("node-r", port, "[catalog]\nname = \"everything\"\n");
    let text = std::fs::read_to_string(cfg.path()).unwrap().replace("[hub]\n", "[hub]\nrequire_backend = true\n");
    std::fs::write(cfg.path(), text).unwrap();
    let node = started(cfg).await;
    assert_eq!(health(&node.url, "/readyz").await, (200, json!({"ready": true})));

    // Redis goes away: not ready (liveness holds), until it is back.
    redis.stop().await;
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = health(&node.url, "/readyz").await;
        if status == 503 {
            assert_eq!(body["reasons"], json!(["the hub backend (Redis) is unreachable"]));
            break;
        }
        assert!(tokio::time::Instant::now() < until, "still ready 10 s after Redis stopped");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(health(&node.url, "/healthz").await, (200, json!({"status": "ok"})));
    let redis = Redis::start(port).await;
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    while health(&node.url, "/readyz").await.0 != 200 {
        assert!(tokio::time::Instant::now() < until, "not ready 15 s after Redis came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    redis.stop().await;
}

/// A `tools/call` of `tool` declaring the Tasks extension.
fn call_as_task(id: i64, tool: &str, args: Value) -> Value {
    with_tasks(id, "tools/call", json!({"name": tool, "arguments": args}))
}

#[actix_rt::test]
async fn tasks_are_answered_by_every_instance_and_outlive_none() {
    let Some(_) = external("cluster::tasks_are_answered_by_every_instance", &["redis-server"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let extra = "[catalog]\nname = \"everything\"\n[tasks]\nlease_ms = 1000\n";
    let mut nodes = Vec::new();
    for name in ["node-a", "node-b"] {
        let cfg = config_file_with(name, port, extra);
        let mut node = HttpChild::spawn(&["--config", cfg.path()]).await;
        node.stderr_until_all(&["redis subscription established", "task cancellations subscribed"]).await;
        nodes.push(node);
    }
    let (mut a, b) = (nodes.remove(0), nodes.remove(0));

    // Created on A, read on B; B's listen stream follows it; cancelled on B,
    // which stops the handler running on A.
    let id = new_task(&a.url, &call_as_task(1, "slow_compute", json!({"seconds": 60, "label": "x"}))).await;
    assert_eq!(task_get(&b.url, &id).await["status"], "working");
    let listen = with_tasks(2, "subscriptions/listen", json!({"notifications": {"taskIds": [id]}}));
    let mut stream = SseReader::open(&b.url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["params"]["notifications"]["taskIds"], json!([id]));
    let ack = post(&b.url, &with_tasks(3, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(ack.response()["result"]["resultType"], "complete", "{}", ack.raw);
    until_status(&a.url, &id, "cancelled").await;
    loop {
        let n = stream.next().await.expect("a task notification on B");
        assert_eq!(n["method"], "notifications/tasks");
        if n["params"]["status"] == "cancelled" {
            break;
        }
    }

    // Waiting for input on A, answered on B: the handler resumes on B and
    // A reads the result.
    let id = new_task(&a.url, &call_as_task(4, "confirm_delete", json!({"filename": "f"}))).await;
    until_status(&b.url, &id, "input_required").await;
    let answer =
        json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    post(&b.url, &with_tasks(5, "tasks/update", answer)).await;
    assert_eq!(until_status(&a.url, &id, "completed").await["result"]["content"][0]["text"], "Deleted f");

    // A dies mid-task: past its lease, B reads the task failed.
    let id = new_task(&a.url, &call_as_task(6, "slow_compute", json!({"seconds": 60}))).await;
    a.child.kill().await.unwrap();
    let failed = until_status(&b.url, &id, "failed").await;
    assert!(failed["error"]["message"].as_str().unwrap().contains("no heartbeat"), "{failed}");
    // Redis gone: what needs it is answered at once with why (not an open
    // stream that waits), and what does not keeps working.
    redis.stop().await;
    for i in 0..3 {
        let asked = std::time::Instant::now();
        let r = post(&b.url, &with_tasks(20 + i, "tasks/get", json!({"taskId": id}))).await;
        assert_eq!((r.status, r.content_type.as_str()), (500, "application/json"), "{}", r.raw);
        let message = r.response()["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(message.contains("task store is unavailable") && message.contains("Redis"), "{message}");
        assert!(asked.elapsed() < Duration::from_millis(2500), "answered within the store's bound");
    }
    assert_eq!(post(&b.url, &call(30, "echo")).await.status, 200, "a call that needs no Redis is served");
}

/// A connection Redis closed while nothing used it (a restart) is replaced
/// at its next use: the first request after Redis is back succeeds, since
/// the errors are promised only while Redis is unreachable.
#[actix_rt::test]
async fn the_first_request_after_a_redis_restart_succeeds() {
    let Some(_) = external("cluster::the_first_request_after_a_redis_restart", &["redis-server"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let mut a = instance("node-restart", port).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let r = legacy_post(&a.url, None, &init).await;
    assert_eq!(r.status, 200, "a session stored in Redis: {}", r.raw);
    redis.stop().await;
    a.stderr_until("redis subscription lost").await;
    let redis = Redis::start(port).await;
    a.stderr_until("redis subscription restored").await;
    for attempt in 1..=3 {
        let r = legacy_post(&a.url, None, &init).await;
        assert_eq!(r.status, 200, "session {attempt} after the restart: {}", r.raw);
    }
    redis.stop().await;
}

/// Sends `signal` (`STOP`, `CONT`) to the `redis-server` on `port`.
async fn signal_redis(port: u16, signal: &str) {
    let info = redis_cli(port, &["INFO", "server"]).await;
    let pid = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("process_id:"))
        .unwrap_or_else(|| panic!("no process_id in {info}"))
        .to_owned();
    let sent = std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// A change made on the instance at `url` while its Redis is out: the call
/// answers, and `stream` (a listener on the same instance) hears the update
/// of the watched resource and the tool change, in that order.
async fn heard_locally(url: &str, stream: &mut SseReader, base: i64, when: &str) {
    let r = post(url, &call(base, "test_trigger_resource_update")).await;
    assert_eq!(r.status, 200, "{when}: the call failed: {}", r.raw);
    let m = stream.next().await.unwrap_or_else(|| panic!("{when}: the listen stream ended"));
    assert_eq!(
        (m["method"].as_str(), m["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some("test://watched-resource")),
        "{when}: {m}"
    );
    assert_eq!(sub_id(&m), &json!("local"), "{m}");
    let r = post(url, &call(base + 1, "test_trigger_tool_change")).await;
    assert_eq!(r.status, 200, "{when}: the call failed: {}", r.raw);
    let m = stream.next().await.unwrap_or_else(|| panic!("{when}: the listen stream ended"));
    assert_eq!(m["method"], "notifications/tools/list_changed", "{when}: {m}");
    let r = post(url, &request(json!(base + 2), "tools/list", json!({}))).await;
    assert_eq!(r.status, 200, "{when}: {}", r.raw);
}

#[actix_rt::test]
async fn local_delivery_continues_while_redis_is_out() {
    let Some(_) = external("cluster::local_delivery_continues_while_redis_is_out", &["redis-server", "redis-cli"])
    else {
        return;
    };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let mut a = instance("local-a", port).await;
    let listen = request(
        json!("local"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]}}),
    );
    let mut stream = SseReader::open(&a.url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    heard_locally(&a.url, &mut stream, 1, "Redis up").await;

    // Redis hangs (the process stopped: connections open, nothing answers).
    signal_redis(port, "STOP").await;
    heard_locally(&a.url, &mut stream, 10, "Redis hanging").await;
    heard_locally(&a.url, &mut stream, 20, "Redis hanging").await;

    // Redis gone (killed): the instance has lost its subscription.
    redis.stop().await;
    a.stderr_until("redis subscription lost").await;
    heard_locally(&a.url, &mut stream, 30, "Redis gone").await;
    heard_locally(&a.url, &mut stream, 40, "Redis gone").await;
}

#[actix_rt::test]
async fn a_write_no_replica_acknowledged_still_succeeds_and_is_counted() {
    let test = "cluster::a_write_no_replica_acknowledged_still_succeeds_and_is_counted";
    let Some(_) = external(test, &["redis-server", "redis-cli"]) else { return };
    const SHORT: &str = "mcp_server_redis_wait_short_total";
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    // No replica exists to acknowledge anything.
    let replication = redis_cli(port, &["INFO", "replication"]).await;
    assert!(replication.contains("connected_slaves:0"), "{replication}");
    let extra = "[catalog]\nname = \"everything\"\n[redis]\nmin_replicas = 1\nwait_timeout_ms = 100\n";
    let mut nodes = Vec::new();
    for name in ["short-a", "short-b"] {
        let cfg = config_file_with(name, port, extra);
        let mut node = HttpChild::spawn(&["--config", cfg.path()]).await;
        node.stderr_until_all(&["redis subscription established", "task cancellations subscribed", "bus subscribed"])
            .await;
        nodes.push((node, cfg));
    }
    let (a, b) = (&nodes[0].0, &nodes[1].0);
    let before = counter(&a.url, SHORT).await;

    // A legacy session opened, its level set, a resource subscribed: each
    // write succeeds and is counted once; the session stands (B serves it).
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let asked = std::time::Instant::now();
    let r = legacy_post(&a.url, None, &init).await;
    assert_eq!(r.status, 200, "initialize failed for want of a replica: {}", r.raw);
    assert!(asked.elapsed() < Duration::from_secs(5), "the wait outlasted wait_timeout_ms: {:?}", asked.elapsed());
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
    assert_eq!(counter(&a.url, SHORT).await, before + 1, "the session's creation was not counted");
    let changes = [
        ("logging/setLevel", json!({"level": "error"})),
        ("resources/subscribe", json!({"uri": "test://watched-resource"})),
    ];
    for (n, (method, params)) in changes.into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": n + 1, "method": method, "params": params});
        let asked = std::time::Instant::now();
        let r = legacy_post(&a.url, Some(&sid), &body).await;
        assert_eq!(r.response()["result"], json!({}), "{method} failed for want of a replica: {}", r.raw);
        assert!(asked.elapsed() < Duration::from_secs(5), "{method} outlasted wait_timeout_ms: {:?}", asked.elapsed());
        assert_eq!(counter(&a.url, SHORT).await, before + 2 + n as u64, "{method}'s write was not counted");
    }
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {}});
    let r = legacy_post(&b.url, Some(&sid), &ping).await;
    assert_eq!(r.response()["result"], json!({}), "the session written without a replica is gone: {}", r.raw);

    // A task created: it succeeds, is counted, and B reads it.
    let before = counter(&a.url, SHORT).await;
    let asked = std::time::Instant::now();
    let id = new_task(&a.url, &call_as_task(10, "slow_compute", json!({"seconds": 60}))).await;
    assert!(asked.elapsed() < Duration::from_secs(5), "the task's creation outlasted wait_timeout_ms");
    let after = counter(&a.url, SHORT).await;
    assert!(after > before, "the task's creation was not counted ({before} before, {after} after)");
    assert_eq!(task_get(&b.url, &id).await["status"], "working");
    let ack = post(&b.url, &with_tasks(11, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(ack.response()["result"]["resultType"], "complete", "{}", ack.raw);
}

/// An instance killed: "Every session, task and quota count goes on on the
/// others" (scaling_out.rs, what survives which failure) — its tasks. A
/// creates three tasks, then is SIGKILLed; B answers for each: the one
/// finished on A with its result, the one waiting for input still waiting
/// (an answer on B resumes it there and it completes), the one A was
/// running `failed` once A's lease ran out — none lost, none working for ever.
#[actix_rt::test]
async fn a_killed_instances_tasks_go_on_on_the_others() {
    let Some(_) = external("cluster::a_killed_instances_tasks_go_on_on_the_others", &["redis-server"]) else { return };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let extra = "[catalog]\nname = \"everything\"\n[tasks]\nlease_ms = 1000\n";
    let mut nodes = Vec::new();
    for name in ["killed-a", "heir-b"] {
        let cfg = config_file_with(name, port, extra);
        let mut node = HttpChild::spawn(&["--config", cfg.path()]).await;
        node.stderr_until_all(&["redis subscription established", "task cancellations subscribed"]).await;
        nodes.push(node);
    }
    let (mut a, b) = (nodes.remove(0), nodes.remove(0));

    // On A: a task finished, one waiting for input, one running.
    let finished = new_task(&a.url, &call_as_task(1, "task_echo", json!({"text": "kept"}))).await;
    assert_eq!(until_status(&a.url, &finished, "completed").await["result"]["content"][0]["text"], "kept");
    let waiting = new_task(&a.url, &call_as_task(2, "confirm_delete", json!({"filename": "f"}))).await;
    until_status(&a.url, &waiting, "input_required").await;
    let running = new_task(&a.url, &call_as_task(3, "slow_compute", json!({"seconds": 60}))).await;
    assert_eq!(task_get(&a.url, &running).await["status"], "working");
    a.child.kill().await.unwrap();

    let t = task_get(&b.url, &finished).await;
    assert_eq!((t["status"].as_str(), t["result"]["content"][0]["text"].as_str()), (Some("completed"), Some("kept")));
    let t = task_get(&b.url, &waiting).await;
    assert_eq!(t["status"], "input_required", "{t}");
    assert_eq!(t["inputRequests"]["confirm"]["method"], "elicitation/create", "{t}");
    let answer =
        json!({"taskId": waiting, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let ack = post(&b.url, &with_tasks(4, "tasks/update", answer)).await;
    assert_eq!(ack.response()["result"]["resultType"], "complete", "{}", ack.raw);
    assert_eq!(until_status(&b.url, &waiting, "completed").await["result"]["content"][0]["text"], "Deleted f");
    let failed = until_status(&b.url, &running, "failed").await;
    assert!(failed["error"]["message"].as_str().is_some_and(|m| m.contains("no heartbeat")), "{failed}");
}

/// A `tools/call` of `echo` saying `text`.
fn echo(id: i64, text: &str) -> Value {
    request(json!(id), "tools/call", json!({"name": "echo", "arguments": {"text": text}}))
}

/// An instance killed: "Every session, task and quota count goes on on the
/// others" (scaling_out.rs) — a quota's count. Ten calls an hour over two
/// instances on Redis: six counted on A, two on B, then A is SIGKILLed; B
/// allows exactly the two left, then refuses naming the quota — the calls
/// counted by the dead instance still count.
#[actix_rt::test]
async fn a_quota_count_goes_on_on_the_others_when_an_instance_is_killed() {
    let test = "cluster::a_quota_count_goes_on_on_the_others_when_an_instance_is_killed";
    let Some(_) = external(test, &["redis-server"]) else { return };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let extra = "[catalog]\nname = \"everything\"\n\
                 [[quotas]]\nname = \"ten\"\nlimit = 10\nper_secs = 3600\nby = \"tool\"\ntools = [\"echo\"]\n";
    let mut a = started(config_file_with("quota-killed-a", port, extra)).await;
    let b = started(config_file_with("quota-heir-b", port, extra)).await;
    for id in 0..8 {
        let url = if id < 6 { &a.url } else { &b.url };
        let r = post(url, &echo(id, "counted")).await;
        assert_eq!(r.response()["result"]["content"][0]["text"], "counted", "call {id}: {}", r.raw);
    }
    a.child.kill().await.unwrap();
    for id in 8..10 {
        let r = post(&b.url, &echo(id, "left")).await;
        assert_eq!(r.response()["result"]["content"][0]["text"], "left", "call {id}, within the limit: {}", r.raw);
    }
    let r = post(&b.url, &echo(10, "over")).await;
    assert_eq!(r.status, 429, "the eleventh call: {}", r.raw);
    let error = &r.response()["error"];
    assert_eq!((error["data"]["reason"].as_str(), error["data"]["quota"].as_str()), (Some("quota"), Some("ten")));
    assert!(error["message"].as_str().is_some_and(|m| m.contains("exceeded")), "{}", r.raw);
}
