//! Legacy sessions on any instance (`legacy.store = "redis"`): three real
//! `actix-mcp serve` processes over a real `redis-server`, each message of
//! one session sent to another instance than the one before — state, log
//! level and subscriptions shared, the GET stream fed wherever the change
//! happened, a question answered through another instance, a cancellation
//! reaching the instance running the call, DELETE ending the session (and
//! its streams) everywhere, and clear errors when Redis is down. A change
//! answered on one instance shows on the very next request on another:
//! hundreds of log levels and subscriptions changed on B, each followed at
//! once by a call on A.

mod common;

use std::time::Duration;

use common::redis::Redis;
use common::*;
use serde_json::{json, Value};

const KEY: &str = "bGVnYWN5LWNsdXN0ZXItdGVzdC1rZXktc2hhcmVkLWJ5LWFsbA=="; // 36 bytes

fn rpc(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn instance(name: &str, redis_port: u16, store: &str) -> (HttpChild, ConfigFile) {
    let cfg = ConfigFile::new(
        &format!("legacy-cluster-{name}-{redis_port}"),
        &format!(
            "[server]\nname = \"{name}\"\n[hub]\nbackend = \"redis\"\nredis_channel_prefix = \"lc-{pid}\"\n\
             [redis]\nurl = \"redis://127.0.0.1:{redis_port}/\"\n[legacy]\nstore = \"{store}\"\n\
             [mrtr]\nkey = \"{KEY}\"\n[catalog]\nname = \"everything\"\n[shutdown]\ndrain_ms = 100\n",
            pid = std::process::id()
        ),
    );
    let mut child = HttpChild::spawn(&["--config", cfg.path()]).await;
    let bus = if store == "memory" { "redis subscription established" } else { "bus subscribed" };
    child.stderr_until_all(&["redis subscription established", bus]).await;
    (child, cfg)
}

async fn initialize(url: &str, caps: Value) -> String {
    let params =
        json!({"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "c", "version": "1"}});
    let r = legacy_post(url, None, &rpc(json!(0), "initialize", params)).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.headers["mcp-session-id"].to_str().unwrap().to_string()
}

/// The session's GET stream on the instance at `url`.
async fn get_stream(url: &str, sid: &str) -> SseReader {
    let resp =
        client().get(url).header("Mcp-Session-Id", sid).header("Accept", "text/event-stream").send().await.unwrap();
    SseReader::from_response(resp)
}

fn call(id: i64, tool: &str, args: Value) -> Value {
    rpc(json!(id), "tools/call", json!({"name": tool, "arguments": args}))
}

#[actix_rt::test]
async fn a_legacy_session_is_served_by_every_instance() {
    let Some(_) = external("legacy_cluster::a_legacy_session_is_served_by_every_instance", &["redis-server"]) else {
        return;
    };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let (a, _fa) = instance("node-a", port, "").await;
    let (b, _fb) = instance("node-b", port, "").await;
    let (c, _fc) = instance("node-c", port, "redis").await;
    let (a_url, b_url, c_url) = (a.url.clone(), b.url.clone(), c.url.clone());

    // Opened on A, used on B and C.
    let sid = initialize(&a_url, json!({"elicitation": {}})).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy_post(&b_url, Some(&sid), &note).await.status, 202);
    let r = legacy_post(&c_url, Some(&sid), &rpc(json!(1), "tools/list", json!({}))).await;
    assert!(r.response()["result"]["tools"].as_array().is_some_and(|t| t.len() > 5), "{}", r.raw);

    // A log level set on B applies on A and C.
    let r = legacy_post(&b_url, Some(&sid), &rpc(json!(2), "logging/setLevel", json!({"level": "debug"}))).await;
    assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
    for url in [&a_url, &c_url] {
        let r = legacy_post(url, Some(&sid), &call(3, "test_tool_with_logging", json!({}))).await;
        let logs = r.messages.iter().filter(|m| m["method"] == "notifications/message").count();
        assert_eq!(logs, 3, "{}", r.raw);
    }

    // The GET stream on C hears an update subscribed on A and caused on B;
    // unsubscribed on B, the next update is not delivered.
    let mut stream = get_stream(&c_url, &sid).await;
    let watched = json!({"uri": "test://watched-resource"});
    let r = legacy_post(&a_url, Some(&sid), &rpc(json!(4), "resources/subscribe", watched.clone())).await;
    assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
    legacy_post(&b_url, Some(&sid), &call(5, "test_trigger_resource_update", json!({}))).await;
    let m = stream.next().await.unwrap();
    assert_eq!(
        (m["method"].as_str(), m["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some("test://watched-resource"))
    );
    let r = legacy_post(&b_url, Some(&sid), &rpc(json!(6), "resources/unsubscribe", watched)).await;
    assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
    legacy_post(&a_url, Some(&sid), &call(7, "test_trigger_resource_update", json!({}))).await;
    legacy_post(&a_url, Some(&sid), &call(8, "test_trigger_tool_change", json!({}))).await;
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/tools/list_changed", "the unsubscribed update came: {m}");

    // A question asked on A's POST stream, answered through B.
    let ask_call = call(9, "test_elicitation", json!({"message": "Who are you?"}));
    let mut asking = SseReader::open_with(&a_url, &ask_call, &[("Mcp-Session-Id", &sid)]).await;
    let ask = asking.next().await.unwrap();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"username": "bob"}}});
    assert_eq!(legacy_post(&b_url, Some(&sid), &answer).await.status, 202);
    let done = asking.next().await.unwrap();
    assert_eq!(done["id"], 9, "{done}");
    assert!(done["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("bob")), "{done}");

    // An answer for an instance that is gone: a clear error, not silence.
    let stray = json!({"jsonrpc": "2.0", "id": "srv-0123456789ab-1", "result": {"action": "decline"}});
    let r = legacy_post(&b_url, Some(&sid), &stray).await;
    assert_eq!(r.status, 410, "{}", r.raw);
    assert!(r.raw.contains("0123456789ab") && r.raw.contains("gone"), "{}", r.raw);

    // A call running on B, cancelled through C: its stream ends without a result.
    let long = call(10, "sleep", json!({"ms": 20000}));
    let mut running = SseReader::open_with(&b_url, &long, &[("Mcp-Session-Id", &sid)]).await;
    // The response began: the call runs on B, and is registered there.
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10, "reason": "bored"}});
    assert_eq!(legacy_post(&c_url, Some(&sid), &cancel).await.status, 202);
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match running.next_within(Duration::from_secs(5)).await {
                Some(Some(m)) if m.get("id").is_some() => return Some(m),
                Some(Some(_)) => continue,
                _ => return None,
            }
        }
    })
    .await
    .expect("the cancelled call's stream ends within 5 s");
    assert_eq!(ended, None, "a cancelled call sends no result");

    // DELETE on C: 404 on every instance, and the GET stream on A ends.
    let mut a_stream = get_stream(&a_url, &sid).await;
    let resp = client().delete(&c_url).header("Mcp-Session-Id", &sid).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(a_stream.next_within(Duration::from_secs(5)).await, Some(None), "A's GET stream ended");
    for url in [&a_url, &b_url, &c_url] {
        let r = legacy_post(url, Some(&sid), &rpc(json!(11), "ping", json!({}))).await;
        assert_eq!(r.status, 404, "{url}: {}", r.raw);
    }

    // Redis down: opening or finding a session answers 503 at once.
    let other = initialize(&a_url, json!({})).await;
    redis.stop().await;
    let started = std::time::Instant::now();
    let r = legacy_post(&b_url, Some(&other), &rpc(json!(12), "ping", json!({}))).await;
    assert_eq!(r.status, 503, "{}", r.raw);
    assert!(r.raw.contains("the session store is unavailable"), "{}", r.raw);
    let params =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    let r = legacy_post(&c_url, None, &rpc(json!(13), "initialize", params)).await;
    assert_eq!(r.status, 503, "{}", r.raw);
    assert!(r.raw.contains("the session store is unavailable"), "{}", r.raw);
    assert!(started.elapsed() < Duration::from_secs(3), "answered at once: {:?}", started.elapsed());
    // What the instance holding the session already has goes on.
    let r = legacy_post(&a_url, Some(&other), &rpc(json!(14), "ping", json!({}))).await;
    assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
    for node in [a, b, c] {
        node.terminate().await;
    }
}

/// Two instances over the Redis on `port`, and a session opened on the
/// first and used on the second, so that each holds a copy.
async fn held_on_both(port: u16, names: [&str; 2]) -> ([(HttpChild, ConfigFile); 2], String) {
    let a = instance(names[0], port, "").await;
    let b = instance(names[1], port, "").await;
    let sid = initialize(&a.0.url, json!({})).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy_post(&b.0.url, Some(&sid), &note).await.status, 202);
    ([a, b], sid)
}

#[actix_rt::test]
async fn a_log_level_set_on_one_instance_applies_to_the_next_call_on_another() {
    let test = "legacy_cluster::a_log_level_set_on_one_instance_applies_to_the_next_call_on_another";
    let Some(_) = external(test, &["redis-server"]) else {
        return;
    };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let ([(a, _fa), (b, _fb)], sid) = held_on_both(port, ["level-a", "level-b"]).await;
    // A level set on B, then at once a call on A that logs one info message:
    // debug lets it through, error does not.
    let mut stale = Vec::new();
    for i in 0..300i64 {
        let (level, expected) = if i % 2 == 0 { ("debug", 1) } else { ("error", 0) };
        let set = rpc(json!(2 * i + 1), "logging/setLevel", json!({"level": level}));
        let r = legacy_post(&b.url, Some(&sid), &set).await;
        assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
        let r = legacy_post(&a.url, Some(&sid), &call(2 * i + 2, "test_streaming_elicitation", json!({}))).await;
        assert!(r.response()["result"]["content"].is_array(), "{}", r.raw);
        let logs = r.messages.iter().filter(|m| m["method"] == "notifications/message").count();
        if logs != expected {
            stale.push((i, level, logs));
        }
    }
    assert!(stale.is_empty(), "calls on A that missed the level just set on B (round, level, log messages): {stale:?}");
    a.terminate().await;
    b.terminate().await;
}

#[actix_rt::test]
async fn a_subscription_changed_on_one_instance_applies_to_the_next_update_on_another() {
    let test = "legacy_cluster::a_subscription_changed_on_one_instance_applies_to_the_next_update_on_another";
    let Some(_) = external(test, &["redis-server"]) else {
        return;
    };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let ([(a, _fa), (b, _fb)], sid) = held_on_both(port, ["subs-a", "subs-b"]).await;
    let mut stream = get_stream(&a.url, &sid).await;
    let watched = json!({"uri": "test://watched-resource"});
    // Subscribed on B, the update a call on A causes reaches A's GET stream;
    // unsubscribed on B, it does not (the tool change after it comes first).
    for i in 0..100i64 {
        let id = |n: i64| 10 * i + n;
        let r = legacy_post(&b.url, Some(&sid), &rpc(json!(id(1)), "resources/subscribe", watched.clone())).await;
        assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
        legacy_post(&a.url, Some(&sid), &call(id(2), "test_trigger_resource_update", json!({}))).await;
        let m = stream.next().await.unwrap();
        assert_eq!(m["method"], "notifications/resources/updated", "round {i}: no update came: {m}");
        let r = legacy_post(&b.url, Some(&sid), &rpc(json!(id(3)), "resources/unsubscribe", watched.clone())).await;
        assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
        legacy_post(&a.url, Some(&sid), &call(id(4), "test_trigger_resource_update", json!({}))).await;
        legacy_post(&a.url, Some(&sid), &call(id(5), "test_trigger_tool_change", json!({}))).await;
        let m = stream.next().await.unwrap();
        assert_eq!(m["method"], "notifications/tools/list_changed", "round {i}: the unsubscribed update came: {m}");
    }
    a.terminate().await;
    b.terminate().await;
}

#[actix_rt::test]
async fn memory_sessions_stay_where_they_were_opened() {
    let Some(_) = external("legacy_cluster::memory_sessions_stay_where_they_were_opened", &["redis-server"]) else {
        return;
    };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let (a, _fa) = instance("mem-a", port, "memory").await;
    let (b, _fb) = instance("mem-b", port, "memory").await;
    let sid = initialize(&a.url, json!({})).await;
    assert_eq!(legacy_post(&a.url, Some(&sid), &rpc(json!(1), "ping", json!({}))).await.status, 200);
    assert_eq!(legacy_post(&b.url, Some(&sid), &rpc(json!(1), "ping", json!({}))).await.status, 404);
    a.terminate().await;
    b.terminate().await;
}
