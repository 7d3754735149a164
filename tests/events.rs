//! The Events extension (`io.modelcontextprotocol/events`) over real
//! loopback HTTP: event types declared by an author, `events/list` in pages,
//! `events/poll` from now and from a cursor with the subscription's
//! arguments applied, every refusal of the design's error table the poll
//! can meet, and the stateless era only (a legacy session, and a server
//! without event types, find neither the methods nor the capability).

use crate::common;

use std::sync::Arc;

use actix_mcp::prelude::*;
use common::*;
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
    subject: String,
}

fn start() -> (TestServer, EventSource) {
    let catalog = Catalog::new();
    let mail =
        EventType::matching::<Inbox, Mail>("mail.received", "A mail arrived", &[Delivery::Poll], |inbox, data| {
            inbox.from.as_deref().is_none_or(|from| data.get("from").and_then(Value::as_str) == Some(from))
        });
    let source = catalog.add_event_type(mail).unwrap();
    catalog.add_event_type(EventType::new::<Inbox, Mail>("mail.pushed", "Pushed only", &[Delivery::Push])).unwrap();
    let mut config = test_config();
    config.server.page_size = 1;
    (TestServer::start(Arc::new(catalog), config), source)
}

async fn answer(url: &str, method: &str, params: Value) -> Value {
    post(url, &request(json!(1), method, params)).await.response().clone()
}

async fn result(url: &str, method: &str, params: Value) -> Value {
    let reply = answer(url, method, params).await;
    reply.get("result").cloned().unwrap_or_else(|| panic!("{method}: {reply}"))
}

#[actix_rt::test]
async fn event_types_are_declared_and_listed_in_pages() {
    let (srv, _source) = start();
    let discover = result(&srv.url, "server/discover", json!({})).await;
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/events"],
        json!({"listChanged": true}),
        "{discover}"
    );
    let first = result(&srv.url, "events/list", json!({})).await;
    assert_eq!(first["resultType"], "complete");
    let event = &first["events"][0];
    assert_eq!((&event["name"], &event["delivery"]), (&json!("mail.pushed"), &json!(["push"])), "{first}");
    let cursor = first["nextCursor"].as_str().expect("a second page");
    let second = result(&srv.url, "events/list", json!({"cursor": cursor})).await;
    let event = &second["events"][0];
    assert_eq!(event["name"], "mail.received");
    assert_eq!(event["description"], "A mail arrived");
    assert_eq!(event["inputSchema"]["properties"]["from"]["description"], "Only mail from this sender.");
    assert_eq!(event["payloadSchema"]["properties"]["subject"]["type"], "string");
    assert!(second.get("nextCursor").is_none(), "{second}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_poll_starts_from_now_and_reads_what_its_arguments_let_through() {
    let (srv, source) = start();
    let from_ann = json!({"from": "ann@example.com"});
    let start = result(&srv.url, "events/poll", json!({"name": "mail.received", "arguments": from_ann})).await;
    assert_eq!(start["events"], json!([]), "{start}");
    assert_eq!((&start["truncated"], &start["hasMore"]), (&json!(false), &json!(false)));
    assert!(start["nextPollMs"].is_u64(), "{start}");
    let cursor = start["cursor"].as_str().expect("a cursor").to_owned();
    source.emit(Mail { from: "bob@example.com".into(), subject: "not for ann".into() }).unwrap();
    let emitted = source.emit(Mail { from: "ann@example.com".into(), subject: "hello".into() }).unwrap();
    let params = json!({"name": "mail.received", "arguments": from_ann, "cursor": cursor});
    let next = result(&srv.url, "events/poll", params).await;
    let events = next["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{next}");
    assert_eq!(events[0]["eventId"], json!(emitted.event_id));
    assert_eq!(events[0]["name"], "mail.received");
    assert_eq!(events[0]["data"]["subject"], "hello");
    assert!(events[0]["timestamp"].as_str().unwrap().contains('T'), "{next}");
    // A quiet poll from the new cursor: nothing, and the cursor stays a string.
    let quiet = result(&srv.url, "events/poll", json!({"name": "mail.received", "cursor": next["cursor"]})).await;
    assert_eq!(quiet["events"], json!([]));
    assert!(quiet["cursor"].is_string());
    // A cursor this server did not issue (another instance's, after a
    // restart): truncated, from now, with a fresh cursor; not an error.
    let foreign = result(&srv.url, "events/poll", json!({"name": "mail.received", "cursor": "not-ours"})).await;
    assert_eq!((&foreign["events"], &foreign["truncated"]), (&json!([]), &json!(true)), "{foreign}");
    assert_eq!(foreign["cursor"], quiet["cursor"]);
    srv.stop().await;
}

#[actix_rt::test]
async fn every_refusal_of_a_poll_has_its_code_and_data() {
    let (srv, _source) = start();
    let cases = [
        (json!({"name": "no.such.event", "arguments": {}}), -32011, json!({"kind": "event"})),
        (json!({"name": "mail.pushed"}), -32014, json!({"feature": "deliveryMode", "value": "poll"})),
    ];
    for (params, code, data) in cases {
        let reply = answer(&srv.url, "events/poll", params.clone()).await;
        assert_eq!(reply["error"]["code"], code, "{params}: {reply}");
        assert_eq!(reply["error"]["data"], data, "{params}: {reply}");
    }
    let invalid = [
        (json!({"arguments": {}, "cursor": null}), "name"),
        (json!({"name": "mail.received", "arguments": {"from": 12345}}), "from"),
        (json!({"name": "mail.received", "cursor": 42}), "cursor"),
        (json!({"name": "mail.received", "maxEvents": 0}), "maxEvents"),
    ];
    for (params, names) in invalid {
        let reply = answer(&srv.url, "events/poll", params.clone()).await;
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(names), "{params}: {message} should name {names}");
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn events_are_served_on_the_stateless_era_only_and_only_when_declared() {
    let (srv, _source) = start();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}}});
    let r = legacy_post(&srv.url, None, &init).await;
    let capabilities = &r.response()["result"]["capabilities"];
    assert!(capabilities["extensions"].get("io.modelcontextprotocol/events").is_none(), "{capabilities}");
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
    for method in ["events/list", "events/poll", "events/stream"] {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"name": "mail.received"}});
        let r = legacy_post(&srv.url, Some(&sid), &call).await;
        assert_eq!(r.error_code(), Some(-32601), "{method}: {}", r.raw);
    }
    srv.stop().await;

    let bare = TestServer::start(Arc::new(Catalog::new()), test_config());
    let discover = result(&bare.url, "server/discover", json!({})).await;
    assert!(discover["capabilities"]["extensions"].get("io.modelcontextprotocol/events").is_none(), "{discover}");
    for method in ["events/list", "events/poll", "events/stream"] {
        let reply = answer(&bare.url, method, json!({"name": "mail.received"})).await;
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
    bare.stop().await;
}

#[actix_rt::test]
async fn a_listen_stream_that_opted_in_hears_that_the_event_types_changed() {
    let (srv, _source) = start();
    let discover = result(&srv.url, "server/discover", json!({})).await;
    assert_eq!(discover["capabilities"]["extensions"]["io.modelcontextprotocol/events"], json!({"listChanged": true}));
    let catalog = srv.server.catalog().clone();
    let listen = request(json!(8), "subscriptions/listen", json!({"notifications": {"eventsListChanged": true}}));
    let mut stream = SseReader::open(&srv.url, &listen).await;
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"], json!({"eventsListChanged": true}), "{ack}");
    let others = request(json!(9), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut deaf = SseReader::open(&srv.url, &others).await;
    deaf.next().await.unwrap();
    catalog.remove_event_type("mail.pushed").unwrap();
    let changed = stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/events/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 8);
    catalog.add_event_type(EventType::new::<Inbox, Mail>("mail.pushed", "Back", &[Delivery::Push])).unwrap();
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/events/list_changed");
    // A stream that did not opt in hears nothing of it: the next thing it
    // gets is the tools change made after.
    catalog.remove_tool("no-such-tool");
    catalog.add_tool(Tool::new("t", "A tool", |_: NoArgs, _| async { Ok("ok") })).unwrap();
    assert_eq!(deaf.next().await.unwrap()["method"], "notifications/tools/list_changed");
    srv.stop().await;
}
