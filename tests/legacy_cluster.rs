//! Legacy sessions on any instance (`legacy.store = "redis"`): three real
//! `actix-mcp serve` processes over a real `redis-server`, each message of
//! one session sent to another instance than the one before — state, log
//! level and subscriptions shared, the GET stream fed wherever the change
//! happened, a question answered through another instance, a cancellation
//! reaching the instance running the call, DELETE ending the session (and
//! its streams) everywhere, and clear errors when Redis is down. A change
//! answered on one instance shows on the very next request on another:
//! hundreds of log levels and subscriptions changed on B, each followed at
//! once by a call on A. The bus between the instances: letters past its
//! buffer dropped, counted and logged at most once a second; a letter
//! Redis does not take given up after `redis.bus_timeout_ms`.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::redis::{redis_cli, Redis};
use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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

/// The prefix every instance of this file uses in Redis.
fn prefix() -> String {
    format!("lc-{}", std::process::id())
}

/// The Redis key of session `sid`.
fn session_key(sid: &str) -> String {
    format!("{}:session:{sid}", prefix())
}

/// The server's change script (the same file it runs): sets (or, with "", deletes) one field of a
/// session that exists, raises its revision and reads it back — the write
/// of `logging/setLevel` or `resources/subscribe`, without the letter
/// that tells the other instances (a lost letter).
const CHANGE: &str = include_str!("../actors/src/pipeline/legacy/change.lua");

/// Changes `field` of session `sid` in the Redis at `port` as an instance
/// answering a change does, but tells no instance.
async fn change_silently(port: u16, sid: &str, field: &str, value: &str) {
    let out = redis_cli(port, &["EVAL", CHANGE, "1", &session_key(sid), field, value, "1800000"]).await;
    assert!(out.contains("rev"), "the session is there: {out}");
}

/// How many log messages a call on `url` that logs one `info` message
/// delivered (1 when the session's level lets it through, 0 when not).
async fn logs_heard(url: &str, sid: &str, id: i64) -> usize {
    let r = legacy_post(url, Some(sid), &call(id, "test_streaming_elicitation", json!({}))).await;
    assert!(r.response()["result"]["content"].is_array(), "{}", r.raw);
    r.messages.iter().filter(|m| m["method"] == "notifications/message").count()
}

#[actix_rt::test]
async fn a_change_whose_letter_was_lost_shows_at_the_next_message_on_every_instance() {
    let test = "legacy_cluster::a_change_whose_letter_was_lost_shows_at_the_next_message_on_every_instance";
    let Some(_) = external(test, &["redis-server", "redis-cli"]) else {
        return;
    };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let ([(a, _fa), (b, _fb)], sid) = held_on_both(port, ["lost-a", "lost-b"]).await;
    let key = session_key(&sid);

    // A level set on B (letter and all) holds on A: both copies at its revision.
    let r = legacy_post(&b.url, Some(&sid), &rpc(json!(1), "logging/setLevel", json!({"level": "error"}))).await;
    assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
    assert_eq!(logs_heard(&a.url, &sid, 2).await, 0);
    assert_eq!(logs_heard(&b.url, &sid, 3).await, 0);

    // The level changed in Redis without raising the revision: each copy is
    // current, and the whole session is not read again — the copies' level holds.
    assert_eq!(redis_cli(port, &["HSET", &key, "level", "debug"]).await, "0");
    assert_eq!(logs_heard(&a.url, &sid, 4).await, 0, "A read the session again though its revision is the copy's");
    assert_eq!(logs_heard(&b.url, &sid, 5).await, 0, "B read the session again though its revision is the copy's");

    // Each use marks the session: its idle time starts again.
    assert_eq!(redis_cli(port, &["PEXPIRE", &key, "60000"]).await, "1");
    assert_eq!(legacy_post(&a.url, Some(&sid), &rpc(json!(6), "ping", json!({}))).await.status, 200);
    let ttl: i64 = redis_cli(port, &["PTTL", &key]).await.parse().unwrap();
    assert!(ttl > 60_000, "a message on A did not start the idle time again: {ttl} ms left");

    // A level changed as a change is written, its letter lost: the next
    // message on each instance serves by it.
    let mut stale = Vec::new();
    for i in 0..40i64 {
        let (level, expected) = if i % 2 == 0 { ("debug", 1) } else { ("error", 0) };
        change_silently(port, &sid, "level", level).await;
        for (node, url) in [("A", &a.url), ("B", &b.url)] {
            let heard = logs_heard(url, &sid, 100 + 2 * i + i64::from(node == "B")).await;
            if heard != expected {
                stale.push((i, node, level, heard));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "calls that missed a level whose letter was lost (round, instance, level, logs): {stale:?}"
    );

    // A subscription made without a letter is delivered on A's GET stream
    // when the next call on A updates the resource; removed without one, not.
    let mut stream = get_stream(&a.url, &sid).await;
    for i in 0..20i64 {
        let id = |n: i64| 1000 + 10 * i + n;
        change_silently(port, &sid, "sub:test://watched-resource", "1").await;
        legacy_post(&a.url, Some(&sid), &call(id(1), "test_trigger_resource_update", json!({}))).await;
        let m = stream.next().await.unwrap();
        assert_eq!(m["method"], "notifications/resources/updated", "round {i}: no update came: {m}");
        change_silently(port, &sid, "sub:test://watched-resource", "").await;
        legacy_post(&a.url, Some(&sid), &call(id(2), "test_trigger_resource_update", json!({}))).await;
        legacy_post(&a.url, Some(&sid), &call(id(3), "test_trigger_tool_change", json!({}))).await;
        let m = stream.next().await.unwrap();
        assert_eq!(m["method"], "notifications/tools/list_changed", "round {i}: the unsubscribed update came: {m}");
    }
    a.terminate().await;
    b.terminate().await;
}

#[actix_rt::test]
async fn a_session_removed_without_its_letter_answers_404_at_the_next_message() {
    let test = "legacy_cluster::a_session_removed_without_its_letter_answers_404_at_the_next_message";
    let Some(_) = external(test, &["redis-server", "redis-cli"]) else {
        return;
    };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let ([(a, _fa), (b, _fb)], sid) = held_on_both(port, ["gone-a", "gone-b"]).await;
    let mut stream = get_stream(&a.url, &sid).await;
    assert_eq!(legacy_post(&a.url, Some(&sid), &rpc(json!(1), "ping", json!({}))).await.status, 200);
    // The session leaves Redis and no instance is told.
    assert_eq!(redis_cli(port, &["DEL", &session_key(&sid)]).await, "1");
    let r = legacy_post(&a.url, Some(&sid), &rpc(json!(2), "ping", json!({}))).await;
    assert_eq!(r.status, 404, "A still serves a session that is gone: {}", r.raw);
    assert_eq!(stream.next_within(Duration::from_secs(5)).await, Some(None), "A's GET stream ended with its copy");
    let r = legacy_post(&b.url, Some(&sid), &rpc(json!(3), "tools/list", json!({}))).await;
    assert_eq!(r.status, 404, "B still serves a session that is gone: {}", r.raw);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy_post(&b.url, Some(&sid), &note).await.status, 404);
    a.terminate().await;
    b.terminate().await;
}

/// Like [`instance`] (the store left to its default), with `redis` added
/// to the `[redis]` section.
async fn instance_with(name: &str, redis_port: u16, redis: &str) -> (HttpChild, ConfigFile) {
    let cfg = ConfigFile::new(
        &format!("legacy-cluster-{name}-{redis_port}"),
        &format!(
            "[server]\nname = \"{name}\"\n[hub]\nbackend = \"redis\"\nredis_channel_prefix = \"{prefix}\"\n\
             [redis]\nurl = \"redis://127.0.0.1:{redis_port}/\"\n{redis}\n\
             [mrtr]\nkey = \"{KEY}\"\n[catalog]\nname = \"everything\"\n[shutdown]\ndrain_ms = 100\n",
            prefix = prefix()
        ),
    );
    let mut child = HttpChild::spawn(&["--config", cfg.path()]).await;
    child.stderr_until_all(&["redis subscription established", "bus subscribed"]).await;
    (child, cfg)
}

#[actix_rt::test]
async fn letters_past_the_bus_buffer_are_dropped_newest_first_and_counted() {
    let test = "legacy_cluster::letters_past_the_bus_buffer_are_dropped_newest_first_and_counted";
    let Some(_) = external(test, &["redis-server", "redis-cli"]) else {
        return;
    };
    const DROPPED: &str = "mcp_server_bus_dropped_total";
    const BURST: u64 = 1000;
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    // A holds one letter waiting; B the default 1024, more than the burst.
    let (a, _fa) = instance_with("tiny-bus-a", port, "bus_buffer = 1").await;
    let (b, _fb) = instance_with("tiny-bus-b", port, "").await;
    let on_a = initialize(&a.url, json!({})).await;
    let on_b = initialize(&b.url, json!({})).await;
    let mut a_stream = get_stream(&a.url, &on_a).await;
    let mut b_stream = get_stream(&b.url, &on_b).await;
    assert_eq!(counter(&a.url, DROPPED).await, 0);

    // A burst on the bus from another instance, all at once: a letter
    // ending the session held on A, letters about no session at all, and
    // last a letter ending the session held on B.
    let letter = |s: &str| format!("elsewhere\n{}", json!({"k": "ended", "s": s}));
    let burst = "redis.call('PUBLISH', KEYS[1], ARGV[1]) \
                 for i = 1, tonumber(ARGV[3]) do redis.call('PUBLISH', KEYS[1], ARGV[2]) end \
                 redis.call('PUBLISH', KEYS[1], ARGV[4]) return 1";
    let channel = format!("{}:all", prefix());
    let (first, filler, last) = (letter(&on_a), letter("no-such-session"), letter(&on_b));
    let fillers = (BURST - 2).to_string();
    assert_eq!(redis_cli(port, &["EVAL", burst, "1", &channel, &first, &filler, &fillers, &last]).await, "1");

    // A's queue overflowed: the drops are counted.
    wait_for("A counts the letters it dropped", Duration::from_secs(10), Duration::from_millis(50), async || {
        match counter(&a.url, DROPPED).await {
            0 => Err("none counted".to_owned()),
            _ => Ok(()),
        }
    })
    .await;
    // The newest are dropped, not the one waiting: the first letter was
    // handled, and the session's GET stream on A ended.
    assert_eq!(
        a_stream.next_within(Duration::from_secs(5)).await,
        Some(None),
        "the first letter of the burst was not handled: A's GET stream goes on"
    );
    let dropped = counter(&a.url, DROPPED).await;
    assert!((1..BURST).contains(&dropped), "{dropped} of {BURST} letters dropped on A, the first among them");
    // B, with room for the whole burst, handled its last letter and dropped none.
    assert_eq!(b_stream.next_within(Duration::from_secs(5)).await, Some(None), "B's GET stream ended");
    assert_eq!(counter(&b.url, DROPPED).await, 0, "B dropped letters within its bus_buffer");
    // Dropped letters are logged the first of a burst, then at most once
    // a second: a burst is a line or two, not one a letter.
    let warned = a.early_lines().iter().filter(|l| l.contains("bus letter dropped")).count();
    assert_eq!(warned, 0, "nothing dropped before the burst");
    let mut a = a;
    let pid = a.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let mut lines = 0;
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(20), a.stderr.next_line()).await {
        lines += usize::from(line.contains("bus letter dropped"));
    }
    assert!((1..=3).contains(&lines), "{lines} lines for {dropped} letters dropped in one burst");
    let status = tokio::time::timeout(Duration::from_secs(15), a.child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
    b.terminate().await;
}

/// The time of day a text log line was written (`2026-12-04 09:15:02.123Z
/// WARN …`), in ms.
fn written_at(line: &str) -> u64 {
    let clock = line.split(' ').nth(1).and_then(|t| t.strip_suffix('Z'));
    let (hms, ms) = clock.and_then(|c| c.split_once('.')).unwrap_or_else(|| panic!("no time in {line:?}"));
    let hms: Vec<u64> = hms.split(':').map(|p| p.parse::<u64>().unwrap_or_else(|_| panic!("{line:?}"))).collect();
    ((hms[0] * 60 + hms[1]) * 60 + hms[2]) * 1000 + ms.parse::<u64>().unwrap_or_else(|_| panic!("{line:?}"))
}

/// The `left_out` a log line tells.
fn left_out(line: &str) -> u64 {
    let n = line.split(", left_out: ").nth(1).and_then(|rest| rest.split(',').next());
    n.and_then(|n| n.trim().parse::<u64>().ok()).unwrap_or_else(|| panic!("no left_out in {line:?}"))
}

/// A dropped letter is "logged (the first of a burst, then at most once a
/// second)" (actors/src/hub/bus.rs) — the lines a second apart: letters
/// keep coming, burst after burst, to an instance that holds one waiting,
/// until it has logged three lines. Each line is written at least a second
/// after the one before (less the little the logger's own thread may
/// delay one line more than the next: 100 ms), and each after the first
/// tells of drops left out since: drops went on between the lines, unlogged.
#[actix_rt::test]
async fn dropped_letters_are_logged_at_most_once_a_second() {
    let test = "legacy_cluster::dropped_letters_are_logged_at_most_once_a_second";
    let Some(_) = external(test, &["redis-server", "redis-cli"]) else {
        return;
    };
    const DAY_MS: u64 = 86_400_000;
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let (mut a, _fa) = instance_with("drop-log-a", port, "bus_buffer = 1").await;
    let burst = "for i = 1, tonumber(ARGV[2]) do redis.call('PUBLISH', KEYS[1], ARGV[1]) end return 1";
    let channel = format!("{}:all", prefix());
    let filler = format!("elsewhere\n{}", json!({"k": "ended", "s": "no-such-session"}));
    let mut logged: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while logged.len() < 3 {
        assert!(std::time::Instant::now() < deadline, "not three lines within 30 s of drops: {logged:#?}");
        assert_eq!(redis_cli(port, &["EVAL", burst, "1", &channel, &filler, "200"]).await, "1");
        // What A has logged so far (a read cut short loses no line).
        while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_millis(5), a.stderr.next_line()).await {
            if line.contains("bus letter dropped") {
                logged.push(line);
            }
        }
    }
    let logged = &logged[..3];
    for pair in logged.windows(2) {
        let apart = (written_at(&pair[1]) + DAY_MS - written_at(&pair[0])) % DAY_MS;
        assert!(apart >= 900, "two lines {apart} ms apart: {pair:#?}");
        assert!(left_out(&pair[1]) > 0, "no drop between two lines: {pair:#?}");
    }
    a.terminate().await;
}

/// A loopback proxy in front of a real `redis-server`: it passes every
/// command on and every reply back, except that while it holds, a letter
/// of the bus (a `PUBLISH` to `{prefix}:all` or to an inbox) is not passed
/// on, nor anything after it on its connection — to the instance sending
/// it, Redis stops answering exactly at that letter, after answering
/// everything before it (a session's read) at once.
struct BusHold {
    port: u16,
    holding: Arc<AtomicBool>,
    held: Arc<AtomicUsize>,
}

impl BusHold {
    /// A proxy to the Redis on `redis_port`, passing everything on.
    async fn start(redis_port: u16) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (holding, held) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (h, n) = (holding.clone(), held.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if let Ok(redis) = TcpStream::connect(("127.0.0.1", redis_port)).await {
                    tokio::spawn(pass_on(client, redis, h.clone(), n.clone()));
                }
            }
        });
        BusHold { port, holding, held }
    }

    /// Holds the bus's letters from now on (`true`), or passes them on again.
    fn hold(&self, on: bool) {
        self.holding.store(on, Ordering::SeqCst);
    }

    /// How many letters it has held.
    fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }
}

/// Passes the commands `client` sends on to `redis`, one whole command at
/// a time, and the replies back, until a letter is held ([`BusHold`]).
async fn pass_on(client: TcpStream, redis: TcpStream, holding: Arc<AtomicBool>, held: Arc<AtomicUsize>) {
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_redis, mut to_redis) = redis.into_split();
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from_redis, &mut to_client).await;
    });
    let (all, inbox) = (format!("{}:all", prefix()).into_bytes(), format!("{}:inbox:", prefix()).into_bytes());
    let (mut pending, mut chunk) = (Vec::new(), vec![0u8; 16 * 1024]);
    loop {
        match from_client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
        }
        while let Some((len, letter)) = first_command(&pending, &all, &inbox) {
            if letter && holding.load(Ordering::SeqCst) {
                held.fetch_add(1, Ordering::SeqCst);
                // Nothing more goes to Redis; what the client sends is read
                // until it hangs up.
                while matches!(from_client.read(&mut chunk).await, Ok(n) if n > 0) {}
                return;
            }
            if to_redis.write_all(&pending[..len]).await.is_err() {
                return;
            }
            pending.drain(..len);
        }
    }
}

/// The length of the first whole command in `bytes` (an array of bulk
/// strings, as clients send commands), and whether it is a letter of the
/// bus: a `PUBLISH` to `all`, or to a channel beginning with `inbox`.
/// `None` until the command is whole.
fn first_command(bytes: &[u8], all: &[u8], inbox: &[u8]) -> Option<(usize, bool)> {
    let (mut at, head) = line(bytes, 0)?;
    let Some(count) = head.strip_prefix(b"*") else { return Some((at, false)) };
    let count: usize = std::str::from_utf8(count).ok()?.parse().ok()?;
    let mut args: Vec<&[u8]> = Vec::with_capacity(count);
    for _ in 0..count {
        let (start, size) = line(bytes, at)?;
        let size: usize = std::str::from_utf8(size.strip_prefix(b"$")?).ok()?.parse().ok()?;
        let end = start + size;
        if bytes.len() < end + 2 {
            return None;
        }
        args.push(&bytes[start..end]);
        at = end + 2;
    }
    let publish = args.first().is_some_and(|name| name.eq_ignore_ascii_case(b"publish"));
    let to_bus = args.get(1).is_some_and(|channel| *channel == all || channel.starts_with(inbox));
    Some((at, publish && to_bus))
}

/// The line of `bytes` that begins at `at` (without its CRLF), and where
/// the next one begins; `None` until it is whole.
fn line(bytes: &[u8], at: usize) -> Option<(usize, &[u8])> {
    let rest = bytes.get(at..)?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((at + end + 2, &rest[..end]))
}

/// Sending a bus letter "is bounded by `redis.bus_timeout_ms`" (1000 by
/// default; scaling_out.rs, config/default.toml): Redis takes each
/// instance's letter and never answers it (a proxy holds it, after
/// passing on at once the session's read before it). An answer to a
/// question asked on A, posted to B (`bus_timeout_ms = 300`), is refused
/// 503 saying the session store is unavailable after 300 ms; one asked on
/// B and posted to A (the default), after 1000 ms; `logging/setLevel` on C
/// (1500 ms), whose letter tells the other instances, is answered after
/// 1500 ms, its change standing in Redis. Each waited its own bound, and
/// less than 500 ms more: the windows exclude each other's bounds and the
/// task store's 2000 ms. Letters passed on again, each question answered
/// where it was asked completes its call.
#[actix_rt::test]
async fn a_letter_redis_does_not_take_is_given_up_after_bus_timeout_ms() {
    let test = "legacy_cluster::a_letter_redis_does_not_take_is_given_up_after_bus_timeout_ms";
    let Some(_) = external(test, &["redis-server", "redis-cli"]) else {
        return;
    };
    let port = free_fixed_port();
    let _redis = Redis::start(port).await;
    let proxy = BusHold::start(port).await;
    let (a, _fa) = instance_with("bus-bound-a", proxy.port, "").await;
    let (b, _fb) = instance_with("bus-bound-b", proxy.port, "bus_timeout_ms = 300").await;
    let (c, _fc) = instance_with("bus-bound-c", proxy.port, "bus_timeout_ms = 1500").await;
    let sid = initialize(&a.url, json!({"elicitation": {}})).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    for url in [&b.url, &c.url] {
        assert_eq!(legacy_post(url, Some(&sid), &note).await.status, 202);
    }
    let ask = |id: i64| call(id, "test_elicitation", json!({"message": "Who are you?"}));
    let answer = |question: &Value, name: &str| {
        let accepted = json!({"action": "accept", "content": {"username": name}});
        json!({"jsonrpc": "2.0", "id": question["id"], "result": accepted})
    };
    // Given up after `bound` ms, and less than 500 ms more.
    let within = |took: Duration, bound: u128| (bound..bound + 500).contains(&took.as_millis());
    let mut on_a = SseReader::open_with(&a.url, &ask(1), &[("Mcp-Session-Id", &sid)]).await;
    let asked_on_a = on_a.next().await.unwrap();
    assert_eq!(asked_on_a["method"], "elicitation/create", "{asked_on_a}");
    proxy.hold(true);

    // Posted to B, the answer's letter to A is given up after B's 300 ms.
    let sent = std::time::Instant::now();
    let r = legacy_post(&b.url, Some(&sid), &answer(&asked_on_a, "bob")).await;
    let took = sent.elapsed();
    assert_eq!(proxy.held(), 1, "the letter did not reach Redis: {}", r.raw);
    assert_eq!(r.status, 503, "{}", r.raw);
    assert!(r.raw.contains("the session store is unavailable"), "{}", r.raw);
    assert!(within(took, 300), "given up after {took:?}, not after bus_timeout_ms = 300");

    // Asked on B, posted to A: given up after A's 1000 ms, the default.
    let mut on_b = SseReader::open_with(&b.url, &ask(2), &[("Mcp-Session-Id", &sid)]).await;
    let asked_on_b = on_b.next().await.unwrap();
    assert_eq!(asked_on_b["method"], "elicitation/create", "{asked_on_b}");
    let sent = std::time::Instant::now();
    let r = legacy_post(&a.url, Some(&sid), &answer(&asked_on_b, "ann")).await;
    let took = sent.elapsed();
    assert_eq!(proxy.held(), 2, "the letter did not reach Redis: {}", r.raw);
    assert_eq!(r.status, 503, "{}", r.raw);
    assert!(r.raw.contains("the session store is unavailable"), "{}", r.raw);
    assert!(within(took, 1000), "given up after {took:?}, not after the default 1000 ms");

    // A change on C: written, its letter to the others given up after 1500 ms.
    let set = rpc(json!(3), "logging/setLevel", json!({"level": "error"}));
    let sent = std::time::Instant::now();
    let r = legacy_post(&c.url, Some(&sid), &set).await;
    let took = sent.elapsed();
    assert_eq!(proxy.held(), 3, "the letter did not reach Redis: {}", r.raw);
    assert_eq!(r.response()["result"], json!({}), "{}", r.raw);
    assert!(within(took, 1500), "answered after {took:?}, not after bus_timeout_ms = 1500");
    assert_eq!(redis_cli(port, &["HGET", &session_key(&sid), "level"]).await, "error", "the change stands");

    // Letters pass again; each question, answered where it was asked, completes.
    proxy.hold(false);
    let waiting = [(&a.url, &asked_on_a, &mut on_a, "bob"), (&b.url, &asked_on_b, &mut on_b, "ann")];
    for (url, asked, stream, name) in waiting {
        assert_eq!(legacy_post(url, Some(&sid), &answer(asked, name)).await.status, 202);
        let done = stream.next().await.unwrap();
        assert!(done["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains(name)), "{done}");
    }
    for node in [a, b, c] {
        node.terminate().await;
    }
}
