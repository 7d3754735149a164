//! The client's side of the Events extension against this project's server
//! over real loopback HTTP: the event types, a long poll woken by an
//! occurrence, a poll loop that drains a backlog at once and then waits as
//! the server asks, a push stream to its termination, a refusal, and the
//! command line's `events watch`.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_mcp::client::{Client, ClientOptions, EventStream, EventSubscription, Polled, SubscriptionFilter};
use actix_mcp::prelude::*;
use common::*;
use futures::StreamExt;
use serde_json::Value;

/// Which mail to hear of.
#[derive(Deserialize, JsonSchema)]
struct Inbox {
    /// Only mail from this sender.
    from: Option<String>,
}

/// A mail that arrived.
#[derive(Serialize, JsonSchema)]
struct Mail {
    from: String,
}

async fn start() -> (TestServer, Client, Arc<Catalog>, EventSource) {
    let catalog = Arc::new(Catalog::new());
    let modes = [Delivery::Poll, Delivery::Push];
    let mail = EventType::matching::<Inbox, Mail>("mail", "A mail arrived", &modes, |inbox, data| {
        inbox.from.as_deref().is_none_or(|from| data.get("from").and_then(Value::as_str) == Some(from))
    });
    let source = catalog.add_event_type(mail.max_batch(2).next_poll(Duration::from_millis(200))).unwrap();
    let srv = TestServer::start(catalog.clone(), test_config());
    let client = Client::connect(&srv.url, ClientOptions::new("events-test", "1")).await.unwrap();
    (srv, client, catalog, source)
}

fn mail(from: &str) -> Mail {
    Mail { from: from.into() }
}

#[actix_rt::test]
async fn the_client_lists_polls_long_and_loops_through_a_backlog_in_order() {
    let (srv, client, _catalog, source) = start().await;
    let types = client.list_events().await.unwrap();
    assert_eq!((types.len(), types[0].name.as_str()), (1, "mail"));
    let start = client.poll_events(&EventSubscription::new("mail"), None).await.unwrap();
    let from_start = EventSubscription { cursor: start.cursor.clone(), ..EventSubscription::new("mail") };
    // A long poll (the request's time limit stretched to cover its wait),
    // answered by the first occurrence.
    let held = {
        let (client, from_start) = (client.clone(), from_start.clone());
        actix_rt::spawn(async move { client.poll_events(&from_start, Some(Duration::from_secs(30))).await })
    };
    let began = Instant::now();
    let woken = loop {
        source.emit(mail("ann")).unwrap();
        if held.is_finished() {
            break held.await.unwrap().unwrap();
        }
        assert!(began.elapsed() < Duration::from_secs(10), "the long poll was not woken");
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!woken.events.is_empty() && woken.events[0].name == "mail", "{woken:?}");
    // Five more from bob: the loop reads them in batches of two at once
    // (hasMore), each once and in order.
    let after = EventSubscription {
        cursor: woken.cursor.clone(),
        arguments: json!({"from": "bob"}).as_object().unwrap().clone(),
        ..EventSubscription::new("mail")
    };
    for _ in 0..5 {
        source.emit(mail("bob")).unwrap();
    }
    let seen: Vec<_> = client.poll_loop(after, Duration::from_millis(10)).take(5).collect().await;
    let seen: Vec<_> = seen
        .into_iter()
        .map(|p| match p.unwrap() {
            Polled::Event(o) => *o,
            gap => panic!("nothing was skipped: {gap:?}"),
        })
        .collect();
    assert!(seen.iter().all(|o| o.data["from"] == "bob"), "{seen:?}");
    let cursors: Vec<_> = seen.iter().map(|o| o.cursor.clone().unwrap()).collect();
    let mut distinct = cursors.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "each once: {cursors:?}");
    // A loss between two polls reaches the loop as a gap, before what follows.
    let before = client.poll_events(&EventSubscription::new("mail"), None).await.unwrap().cursor;
    source.lose();
    source.emit(mail("cy")).unwrap();
    let from_before = EventSubscription { cursor: before, ..EventSubscription::new("mail") };
    let items: Vec<_> = client.poll_loop(from_before, Duration::from_millis(10)).take(2).collect().await;
    assert!(matches!(items[0], Ok(Polled::Gap { .. })), "{items:?}");
    assert!(matches!(&items[1], Ok(Polled::Event(o)) if o.data["from"] == "cy"), "{items:?}");
    client.close().await;
    srv.stop().await;
}

#[actix_rt::test]
async fn the_client_streams_until_the_subscription_ends_and_reports_a_refusal() {
    let (srv, client, catalog, source) = start().await;
    let mut stream = client.stream_events(&EventSubscription::new("mail")).await.unwrap();
    assert_eq!(stream.active()["truncated"], false);
    source.emit(mail("ann")).unwrap();
    let first = stream.next().await.unwrap();
    assert_eq!(EventStream::occurrence(&first).unwrap().data["from"], "ann");
    catalog.remove_event_type("mail").unwrap();
    let last = stream.next().await.unwrap();
    assert!(EventStream::ends(&last), "{last:?}");
    assert!(stream.next().await.is_none(), "the stream ends after terminated");
    let refused = client.stream_events(&EventSubscription::new("mail")).await.err().expect("refused");
    assert_eq!(refused.code(), Some(-32601), "no event type left: the extension is gone: {refused}");
    client.close().await;
    srv.stop().await;
}

#[actix_rt::test]
async fn a_legacy_session_is_not_said_to_hear_of_event_type_changes() {
    let (srv, _client, _catalog, _source) = start().await;
    let pinned = actix_mcp::protocol::ProtocolVersion::parse("2025-11-25").unwrap();
    let legacy = Client::connect(&srv.url, ClientOptions::new("legacy", "1").pin(pinned)).await.unwrap();
    let asked = SubscriptionFilter { events_list_changed: true, tools_list_changed: true, ..Default::default() };
    let listen = legacy.listen(asked).await.unwrap();
    assert!(listen.honored().tools_list_changed && !listen.honored().events_list_changed);
    assert_eq!(legacy.list_events().await.unwrap_err().code(), Some(-32601));
    legacy.close().await;
    srv.stop().await;
}

#[actix_rt::test]
async fn the_command_line_watches_an_event_type() {
    let srv = TestServer::everything();
    let out = tokio::process::Command::new(binary())
        .args(["client", &srv.url, "events", "watch", "clock.tick", r#"{"every": 1}"#, "--count", "2"])
        .output();
    let out = actix_rt::time::timeout(Duration::from_secs(20), out).await.expect("two ticks within 20 s").unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["name"] == "clock.tick"), "{lines:?}");
    assert!(lines[0]["data"]["n"].as_u64() < lines[1]["data"]["n"].as_u64());
    srv.stop().await;
}
