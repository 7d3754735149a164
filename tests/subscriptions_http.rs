//! `subscriptions/listen` over real loopback HTTP: acknowledgement first,
//! tagging, filters, freeing on close, the slow-reader policy, the listener
//! cap and graceful shutdown. Hub state is observed through its `Stats`
//! message, never through sleeps.

use crate::common;

use actix_mcp::catalog::{Prompt, Tool};
use common::*;
use futures::StreamExt;
use mcp_protocol::model::prompts::GetPromptResult;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Value};

/// An open listen stream, read event by event.
struct Listen {
    stream: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>>>>,
    buf: String,
}

impl Listen {
    async fn open(url: &str, id: Value, notifications: Value) -> Self {
        let body = request(id, "subscriptions/listen", json!({"notifications": notifications}));
        let mut req = reqwest::Client::new().post(url).json(&body);
        for (k, v) in standard_headers(&body) {
            req = req.header(k, v);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        assert_eq!(resp.headers()["x-accel-buffering"], "no");
        Listen { stream: Box::pin(resp.bytes_stream()), buf: String::new() }
    }

    /// The next JSON message, or `None` when the stream ended (10 s bound).
    async fn next(&mut self) -> Option<Value> {
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                    return Some(serde_json::from_str(data.trim()).expect("one JSON message per event"));
                }
            }
            let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), self.stream.next())
                .await
                .expect("an event within 10 s");
            match chunk {
                Some(Ok(bytes)) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }
}

fn sub_id(m: &Value) -> &Value {
    &m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

fn dummy_tool(name: &str) -> Tool {
    Tool::raw(name, "d", json!({"type": "object"}), |_, _| async { Ok(CallToolResult::text("x")) })
}

async fn listeners(srv: &TestServer, n: usize) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let s = srv.server.hub_stats().await;
        if s.listeners == n {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "hub has {} listeners, want {n}", s.listeners);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[actix_rt::test]
async fn ack_comes_first_and_every_message_is_tagged_with_the_listen_id() {
    let srv = TestServer::everything();
    let mut numeric = Listen::open(&srv.url, json!(7), json!({"toolsListChanged": true})).await;
    let mut string = Listen::open(&srv.url, json!("7"), json!({"toolsListChanged": true, "bogusKind": true})).await;
    for (l, id) in [(&mut numeric, json!(7)), (&mut string, json!("7"))] {
        let ack = l.next().await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(sub_id(&ack), &id, "the id keeps its JSON type");
        assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    }
    srv.server.catalog().add_tool(dummy_tool("new_tool")).unwrap();
    for (l, id) in [(&mut numeric, json!(7)), (&mut string, json!("7"))] {
        let m = l.next().await.unwrap();
        assert_eq!(m["method"], "notifications/tools/list_changed");
        assert_eq!(sub_id(&m), &id);
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn only_opted_in_types_are_delivered() {
    let srv = TestServer::everything();
    let mut prompts = Listen::open(&srv.url, json!(1), json!({"promptsListChanged": true})).await;
    let mut uris = Listen::open(&srv.url, json!(2), json!({"resourceSubscriptions": ["test://a"]})).await;
    prompts.next().await.unwrap();
    uris.next().await.unwrap();
    let catalog = srv.server.catalog();
    catalog.add_tool(dummy_tool("t1")).unwrap(); // nobody asked
    srv.server.notify_resource_updated("test://b"); // not subscribed
    catalog
        .add_prompt(Prompt::new("p1", "d", |_, _| async {
            Ok(GetPromptResult { description: None, messages: vec![] })
        }))
        .unwrap();
    srv.server.notify_resource_updated("test://a");
    let m = prompts.next().await.unwrap();
    assert_eq!(m["method"], "notifications/prompts/list_changed", "{m}");
    let m = uris.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");
    assert_eq!(m["params"]["uri"], "test://a");
    // Progress and log notifications of other requests never appear here.
    let mut call = request(json!(3), "tools/call", json!({"name": "test_tool_with_progress"}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    post(&srv.url, &call).await;
    srv.server.notify_resource_updated("test://a");
    let m = uris.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");
    srv.stop().await;
}

#[actix_rt::test]
async fn closing_the_stream_frees_the_listener() {
    let srv = TestServer::everything();
    let mut a = Listen::open(&srv.url, json!(1), json!({"toolsListChanged": true})).await;
    let mut b = Listen::open(&srv.url, json!(2), json!({"toolsListChanged": true})).await;
    a.next().await.unwrap();
    b.next().await.unwrap();
    listeners(&srv, 2).await;
    drop(a);
    listeners(&srv, 1).await;
    srv.server.catalog().add_tool(dummy_tool("x")).unwrap();
    assert_eq!(b.next().await.unwrap()["method"], "notifications/tools/list_changed");
    drop(b);
    listeners(&srv, 0).await;
    srv.stop().await;
}

#[actix_rt::test]
async fn a_slow_reader_is_cut_off_while_a_fast_one_keeps_receiving() {
    let srv = TestServer::everything_with(|c| {
        c.hub.listener_buffer = 32;
    });
    // Large notifications fill the slow reader's socket buffers sooner.
    let uri = format!("test://big/{}", "x".repeat(4000));
    let mut fast = Listen::open(&srv.url, json!("fast"), json!({"resourceSubscriptions": [uri]})).await;
    let mut slow = Listen::open(&srv.url, json!("slow"), json!({"resourceSubscriptions": [uri]})).await;
    fast.next().await.unwrap();
    slow.next().await.unwrap();
    let mut sent = 0u64;
    let mut received = 0u64;
    for _batch in 0..4000 {
        for _ in 0..16 {
            srv.server.notify_resource_updated(&uri);
            sent += 1;
        }
        while received < sent {
            let m = fast.next().await.expect("the fast stream stays open");
            assert_eq!(m["params"]["uri"], uri.as_str());
            received += 1;
        }
        if srv.server.hub_stats().await.lagged > 0 {
            break;
        }
    }
    let stats = srv.server.hub_stats().await;
    assert_eq!(stats.lagged, 1, "{stats:?}");
    listeners(&srv, 1).await;
    // The fast reader still gets everything after the cut.
    srv.server.notify_resource_updated(&uri);
    assert_eq!(fast.next().await.unwrap()["params"]["uri"], uri.as_str());
    // The slow stream ends after what was buffered.
    let mut drained = 0;
    while slow.next().await.is_some() {
        drained += 1;
    }
    assert!(drained > 0 && (drained as u64) < sent, "{drained} of {sent}");
    srv.stop().await;
}

#[actix_rt::test]
async fn the_listener_cap_is_enforced() {
    let srv = TestServer::everything_with(|c| c.hub.max_listeners = 1);
    let mut first = Listen::open(&srv.url, json!(1), json!({"toolsListChanged": true})).await;
    first.next().await.unwrap();
    let r = post(
        &srv.url,
        &request(json!(2), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})),
    )
    .await;
    assert_eq!(r.status, 503, "{}", r.raw);
    assert_eq!(r.response()["id"], 2);
    assert!(r.response()["error"]["message"].as_str().unwrap().contains("limit 1"));
    srv.stop().await;
}

#[actix_rt::test]
async fn graceful_shutdown_completes_every_subscription() {
    let srv = TestServer::everything();
    let mut a = Listen::open(&srv.url, json!(11), json!({"toolsListChanged": true})).await;
    let mut b = Listen::open(&srv.url, json!("b"), json!({"resourceSubscriptions": ["test://x"]})).await;
    a.next().await.unwrap();
    b.next().await.unwrap();
    let closed = srv.server.shutdown().await;
    assert_eq!(closed, 2);
    for (l, id) in [(&mut a, json!(11)), (&mut b, json!("b"))] {
        let done = l.next().await.expect("the completion result");
        assert_eq!(done["id"], id);
        assert_eq!(done["result"]["resultType"], "complete");
        assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id);
        assert!(l.next().await.is_none(), "the stream closes after the completion");
    }
    assert_eq!(srv.server.hub_stats().await.listeners, 0);
    // New subscriptions are refused while shutting down.
    let r = post(&srv.url, &request(json!(3), "subscriptions/listen", json!({"notifications": {}}))).await;
    assert_eq!(r.status, 503);
    srv.stop().await;
}

#[actix_rt::test]
async fn discover_declares_list_changed_and_subscribe() {
    let srv = TestServer::everything();
    let r = post(&srv.url, &request(json!(1), "server/discover", json!({}))).await;
    let caps = &r.response()["result"]["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["prompts"]["listChanged"], true);
    assert_eq!(caps["resources"]["listChanged"], true);
    assert_eq!(caps["resources"]["subscribe"], true);
    srv.stop().await;
}

#[actix_rt::test]
async fn quiet_listen_streams_get_keep_alives_from_the_hub() {
    let srv = TestServer::everything_with(|c| c.hub.keep_alive_ms = 50);
    let body = request(json!(7), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&srv.url, &body).await;
    let ack = stream.next().await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // Two keep-alives in a row: they keep coming while the stream is quiet.
    let seen = stream.raw_until(": keep-alive\n\n").await;
    assert!(!seen.contains("data:"), "{seen}");
    stream.raw_until(": keep-alive\n\n").await;
    // Events still arrive between keep-alives, tagged.
    srv.server.catalog().add_tool(dummy_tool("after_keep_alives")).unwrap();
    let note = stream.next().await.expect("list_changed");
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert_eq!(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    srv.stop().await;
}

/// Finding 7: `hub.max_listeners` (100,000 by default) is lowered at start
/// to what the open-files limit can hold, so that the stream past it gets
/// 503 at once instead of a connection that hangs at the file limit.
#[actix_rt::test]
async fn the_listener_cap_fits_the_open_files_limit() {
    let mut served = HttpChild::spawn_with_files_limit(160, &["--catalog", "everything"]).await;
    let line = served.stderr_until("hub.max_listeners lowered").await;
    assert!(line.contains("80"), "{line}");
    // A default that adapts itself to the machine is news, not a warning.
    assert!(line.contains(" INFO ") && !line.contains("WARN"), "{line}");
    let mut streams = Vec::new();
    for i in 0..80 {
        let listen = request(json!(i), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
        let mut s = SseReader::open(&served.url, &listen).await;
        assert_eq!(s.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged", "stream {i}");
        streams.push(s);
    }
    let listen = request(json!("over"), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let r = post(&served.url, &listen).await;
    assert_eq!(r.status, 503, "{}", r.raw);
    assert!(r.response()["error"]["message"].as_str().unwrap().contains("limit 80"), "{}", r.raw);
    drop(streams);
}
