//! Hostile and careless input to the Events extension over real loopback
//! HTTP, each answered with a clear error or a bounded outcome: forged
//! cursors and another type's, `maxEvents` and `timeoutMs` at their
//! extremes and of the wrong type, a flood of streams, an `events/stream`
//! sent as a notification, and payloads over their cap.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_mcp::prelude::*;
use base64::Engine;
use common::*;
use serde_json::Value;

/// A mail that arrived.
#[derive(Serialize, JsonSchema)]
struct Mail {
    from: String,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct Any {}

fn start(edit: impl FnOnce(&mut Config)) -> (TestServer, EventSource, EventSource) {
    let catalog = Catalog::new();
    let modes = [Delivery::Poll, Delivery::Push];
    let mail = catalog.add_event_type(EventType::new::<Any, Mail>("mail", "Mail", &modes).max_payload(1024)).unwrap();
    let other = catalog.add_event_type(EventType::new::<Any, Mail>("other", "Other", &modes)).unwrap();
    let mut config = test_config();
    edit(&mut config);
    (TestServer::start(Arc::new(catalog), config), mail, other)
}

async fn poll(url: &str, params: Value) -> Value {
    post(url, &request(json!(1), "events/poll", params)).await.response().clone()
}

#[actix_rt::test]
async fn forged_cursors_and_another_types_are_a_fresh_start_never_an_error() {
    let (srv, mail, other) = start(|_| {});
    let mail_start = poll(&srv.url, json!({"name": "mail"})).await["result"]["cursor"].clone();
    let other_start = poll(&srv.url, json!({"name": "other"})).await["result"]["cursor"].clone();
    mail.emit(Mail { from: "ann".into() }).unwrap();
    other.emit(Mail { from: "bob".into() }).unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let forged = [
        other_start.clone(),             // another type's
        json!("not base64 at all!"),     // no cursor
        json!(b64("ev1:1:1")),           // the format, another epoch
        json!(b64("ev1:x:y")),           // the format, no numbers
        json!(b64(&"9".repeat(10_000))), // long
        json!(""),                       // empty
    ];
    for cursor in forged {
        let answer = poll(&srv.url, json!({"name": "mail", "cursor": cursor})).await;
        let result = &answer["result"];
        assert_eq!((&result["events"], &result["truncated"]), (&json!([]), &json!(true)), "{cursor}: {answer}");
        assert!(result["cursor"].is_string(), "a fresh cursor: {answer}");
    }
    // The type's own cursor still reads what followed it, and only its own.
    let own = poll(&srv.url, json!({"name": "mail", "cursor": mail_start})).await;
    assert_eq!(own["result"]["events"][0]["data"]["from"], "ann", "{own}");
    assert_eq!(own["result"]["events"].as_array().unwrap().len(), 1);
    srv.stop().await;
}

#[actix_rt::test]
async fn max_events_and_timeout_ms_at_their_extremes_are_refused_or_bounded() {
    let (srv, mail, _other) = start(|c| c.events.max_poll_wait_ms = 300);
    let start = poll(&srv.url, json!({"name": "mail"})).await["result"]["cursor"].clone();
    for (field, value) in [
        ("maxEvents", json!(0)),
        ("maxEvents", json!(-1)),
        ("maxEvents", json!("10")),
        ("maxEvents", json!(1.5)),
        ("timeoutMs", json!(-1)),
        ("timeoutMs", json!("1000")),
        ("maxAgeMs", json!(-5)),
    ] {
        let mut params = json!({"name": "mail", "cursor": start});
        params[field] = value.clone();
        let answer = poll(&srv.url, params).await;
        assert_eq!(answer["error"]["code"], -32602, "{field}={value}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(field), "names {field}: {answer}");
    }
    for _ in 0..150 {
        mail.emit(Mail { from: "ann".into() }).unwrap();
    }
    let huge = poll(&srv.url, json!({"name": "mail", "cursor": start, "maxEvents": u64::MAX})).await;
    let result = &huge["result"];
    assert_eq!((result["events"].as_array().unwrap().len(), &result["hasMore"]), (100, &json!(true)), "capped");
    // The longest timeoutMs there is, held no longer than the server allows.
    let began = Instant::now();
    let held = json!({"name": "mail", "cursor": poll(&srv.url, json!({"name": "mail"})).await["result"]["cursor"],
        "timeoutMs": u64::MAX});
    assert_eq!(poll(&srv.url, held).await["result"]["events"], json!([]));
    assert!(began.elapsed() < Duration::from_secs(10), "bounded by events.max_poll_wait_ms");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_flood_of_streams_is_refused_past_the_cap_and_a_stream_notification_starts_nothing() {
    let (srv, _mail, _other) = start(|c| c.events.max_streams = 3);
    let mut open = Vec::new();
    for id in 0..3 {
        let mut stream = SseReader::open(&srv.url, &request(json!(id), "events/stream", json!({"name": "mail"}))).await;
        assert_eq!(stream.next().await.unwrap()["method"], "notifications/events/active");
        open.push(stream);
    }
    for id in 3..20 {
        let refused = post(&srv.url, &request(json!(id), "events/stream", json!({"name": "other"}))).await;
        assert_eq!(refused.error_code(), Some(-32013), "{}", refused.raw);
        assert_eq!(refused.response()["error"]["data"], json!({"limit": "subscriptions", "max": 3}));
    }
    // As a notification (no id) it is accepted and starts nothing: the cap
    // still refuses the next one with the same data, no place was taken.
    let mut notification = request(json!(0), "events/stream", json!({"name": "mail"}));
    notification.as_object_mut().unwrap().remove("id");
    let accepted = post(&srv.url, &notification).await;
    assert_eq!(accepted.status, 202, "{}", accepted.raw);
    let still = post(&srv.url, &request(json!(99), "events/stream", json!({"name": "other"}))).await;
    assert_eq!(still.response()["error"]["data"], json!({"limit": "subscriptions", "max": 3}), "{}", still.raw);
    drop(open);
    srv.stop().await;
}

#[actix_rt::test]
async fn a_payload_over_its_cap_is_refused_by_the_emitter_and_reaches_no_one() {
    let (srv, mail, _other) = start(|_| {});
    let start = poll(&srv.url, json!({"name": "mail"})).await["result"]["cursor"].clone();
    let refused = mail.emit(Mail { from: "x".repeat(2048) }).unwrap_err();
    assert!(refused.0.contains("1024-byte cap"), "{refused}");
    mail.emit(Mail { from: "ann".into() }).unwrap();
    let after = poll(&srv.url, json!({"name": "mail", "cursor": start})).await;
    let events = after["result"]["events"].as_array().unwrap();
    assert_eq!((events.len(), &events[0]["data"]["from"]), (1, &json!("ann")), "{after}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_caller_past_its_own_cap_is_refused_with_32013() {
    let (srv, _mail, _other) = start(|c| c.events.max_streams_per_caller = 2);
    let mut open = Vec::new();
    for id in 0..2 {
        let mut stream = SseReader::open(&srv.url, &request(json!(id), "events/stream", json!({"name": "mail"}))).await;
        assert_eq!(stream.next().await.unwrap()["method"], "notifications/events/active");
        open.push(stream);
    }
    let refused = post(&srv.url, &request(json!(2), "events/stream", json!({"name": "other"}))).await;
    assert_eq!(refused.error_code(), Some(-32013), "{}", refused.raw);
    assert_eq!(refused.response()["error"]["data"], json!({"limit": "subscriptions_per_caller", "max": 2}));
    drop(open);
    srv.stop().await;
}
