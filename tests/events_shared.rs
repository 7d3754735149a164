//! Event histories shared by several instances over a real Redis
//! (`events.history`, "auto" with the Redis hub): a poll cursor minted on
//! one instance resumes on another, a stream on one hears what is emitted
//! on another, every instance sees the occurrences in the same order, an
//! occurrence several instances emit with one id is added once, and an
//! instance started later replays what was emitted before it started.

use crate::common;

use std::sync::Arc;

use actix_mcp::prelude::*;
use common::redis::Redis;
use common::*;
use serde_json::{json, Value};

/// A mail that arrived.
#[derive(Serialize, JsonSchema)]
struct Mail {
    n: u64,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct Inbox {}

/// An instance over the Redis at `port`, its own catalog with `mail`.
fn instance(port: u16) -> (TestServer, EventSource) {
    let catalog = Arc::new(Catalog::new());
    let mail = catalog
        .add_event_type(EventType::new::<Inbox, Mail>("mail", "A mail arrived", &[Delivery::Poll, Delivery::Push]))
        .unwrap();
    let mut config = test_config();
    config.hub.backend = actix_mcp::config::HubBackend::Redis;
    config.hub.redis_url = format!("redis://127.0.0.1:{port}/");
    config.events.heartbeat_ms = 200;
    (TestServer::start(catalog, config), mail)
}

async fn poll(url: &str, cursor: Value, timeout_ms: u64) -> Value {
    let params = json!({"name": "mail", "cursor": cursor, "timeoutMs": timeout_ms, "maxEvents": 100});
    let reply = post(url, &request(json!(1), "events/poll", params)).await;
    reply.response()["result"].clone()
}

fn numbers(result: &Value) -> Vec<u64> {
    result["events"].as_array().unwrap().iter().map(|e| e["data"]["n"].as_u64().unwrap()).collect()
}

/// Polls `url` from `cursor` until `count` occurrences came (each poll
/// held until one comes), all of them in order.
async fn read(url: &str, mut cursor: Value, count: usize) -> (Vec<u64>, Value) {
    let mut got = Vec::new();
    for _ in 0..20 {
        let result = poll(url, cursor.clone(), 3000).await;
        assert_eq!(result["truncated"], false, "{result}");
        got.extend(numbers(&result));
        cursor = result["cursor"].clone();
        if got.len() >= count {
            break;
        }
    }
    (got, cursor)
}

#[actix_rt::test]
async fn cursors_streams_and_order_are_shared_by_every_instance() {
    let test = "events_shared::cursors_streams_and_order_are_shared_by_every_instance";
    let Some(_) = external(test, &["redis-server"]) else { return };
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let (a, mail_a) = instance(port);
    let (b, mail_b) = instance(port);

    // A stream on B hears what is emitted on A.
    let stream = request(json!("s-b"), "events/stream", json!({"name": "mail", "cursor": null}));
    let mut on_b = SseReader::open(&b.url, &stream).await;
    assert_eq!(on_b.next().await.unwrap()["method"], "notifications/events/active");
    // Both instances mirror the history before this: a cursor from A.
    let start = poll(&a.url, Value::Null, 0).await["cursor"].clone();
    mail_a.emit(Mail { n: 1 }).unwrap();
    // Heartbeats come meanwhile (every 200 ms): at most 50 of them.
    let mut heard = Value::Null;
    for _ in 0..50 {
        let m = on_b.next().await.unwrap();
        if m["method"] == "notifications/events/event" {
            heard = m;
            break;
        }
    }
    assert_eq!(heard["params"]["data"]["n"], 1, "{heard}");

    // Emitted on both, alternately: each instance reads the same order,
    // from A's cursor, and B's cursor resumes on A.
    for n in 2..=7 {
        let source = if n % 2 == 0 { &mail_b } else { &mail_a };
        source.emit(Mail { n }).unwrap();
    }
    let (on_a, _) = read(&a.url, start.clone(), 7).await;
    let (from_b, b_cursor) = read(&b.url, start.clone(), 7).await;
    assert_eq!(on_a.len(), 7, "{on_a:?}");
    assert_eq!(on_a, from_b, "one order on every instance");
    mail_b.emit(Mail { n: 8 }).unwrap();
    let (resumed, after_8) = read(&a.url, b_cursor, 1).await;
    assert_eq!(resumed, [8], "B's cursor resumes on A, nothing replayed twice");

    // A source both instances observe emits the same id on each: added once.
    mail_a.emit_with_id("observed-twice", Mail { n: 9 }).unwrap();
    mail_b.emit_with_id("observed-twice", Mail { n: 9 }).unwrap();
    mail_a.emit(Mail { n: 10 }).unwrap();
    let (once, _) = read(&b.url, after_8, 2).await;
    assert_eq!(once, [9, 10], "within hub.dedup_ms, one id is one occurrence");

    // An instance started later replays what came before it.
    let (c, _mail_c) = instance(port);
    let (replayed, _) = read(&c.url, start, 10).await;
    assert_eq!(replayed, [on_a.clone(), vec![8, 9, 10]].concat());

    for s in [a, b, c] {
        s.stop().await;
    }
    redis.stop().await;
}
