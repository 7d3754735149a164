//! Response streams over real loopback HTTP: progress and log notifications
//! on the request's own SSE stream, and cancellation by closing it.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use actix_mcp::catalog::{Catalog, Tool};
use common::*;
use futures::StreamExt;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::json;

#[actix_rt::test]
async fn progress_notifications_precede_the_result_on_sse() {
    let srv = TestServer::everything();
    let mut body = request(json!("p-1"), "tools/call", json!({"name": "test_tool_with_progress", "arguments": {}}));
    body["params"]["_meta"]["progressToken"] = json!("progress-test-1");
    let r = post(&srv.url, &body).await;
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("text/event-stream"), "{}", r.content_type);
    assert_eq!(r.headers["x-accel-buffering"], "no");
    let progress: Vec<_> = r.messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3, "{}", r.raw);
    let values: Vec<f64> = progress.iter().map(|m| m["params"]["progress"].as_f64().unwrap()).collect();
    assert_eq!(values, [0.0, 50.0, 100.0]);
    assert!(progress.iter().all(|m| m["params"]["progressToken"] == "progress-test-1"));
    let last = r.response();
    assert_eq!(last["id"], "p-1");
    assert_eq!(last["result"]["content"][0]["text"], "progress-test-1");
    // Every data line holds exactly one JSON message.
    for line in r.raw.lines().filter(|l| l.starts_with("data:")) {
        serde_json::from_str::<serde_json::Value>(&line[5..]).expect("single-line JSON");
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn log_messages_only_when_requested_and_filtered_by_level() {
    let srv = TestServer::everything();
    let call = request(json!(1), "tools/call", json!({"name": "test_logging_tool", "arguments": {}}));
    let r = post(&srv.url, &call).await;
    assert!(r.messages.iter().all(|m| m["method"] != "notifications/message"), "{}", r.raw);
    assert_eq!(r.response()["result"]["resultType"], "complete");

    let mut with_level = call.clone();
    with_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let r = post(&srv.url, &with_level).await;
    let logs: Vec<_> = r.messages.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 3, "{}", r.raw);
    assert_eq!(logs[0]["params"]["level"], "info");
    assert_eq!(logs[0]["params"]["data"], "Tool execution started");

    let mut above = call.clone();
    above["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("error");
    let r = post(&srv.url, &above).await;
    assert!(r.messages.iter().all(|m| m["method"] != "notifications/message"), "info is below error: {}", r.raw);
    srv.stop().await;
}

/// A tool that never finishes and records whether its future was dropped
/// and whether its cancellation token fired.
fn hanging_catalog(started: Arc<AtomicUsize>, dropped: Arc<AtomicBool>, token_fired: Arc<AtomicBool>) -> Arc<Catalog> {
    struct OnDrop(Arc<AtomicBool>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let catalog = Catalog::new();
    catalog
        .add_tool(Tool::raw("hang", "never returns", json!({"type": "object"}), move |_, ctx| {
            let started = started.clone();
            let dropped = dropped.clone();
            let token_fired = token_fired.clone();
            async move {
                let _guard = OnDrop(dropped);
                started.fetch_add(1, Ordering::SeqCst);
                let token = ctx.cancellation().clone();
                actix_rt::spawn(async move {
                    token.cancelled().await;
                    token_fired.store(true, Ordering::SeqCst);
                });
                ctx.progress(0.0, None, Some("started")).await;
                futures::future::pending::<()>().await;
                Ok(CallToolResult::text("unreachable"))
            }
        }))
        .unwrap();
    Arc::new(catalog)
}

#[actix_rt::test]
async fn closing_the_response_stream_cancels_the_request() {
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    let fired = Arc::new(AtomicBool::new(false));
    let srv = TestServer::start(hanging_catalog(started.clone(), dropped.clone(), fired.clone()), test_config());
    let mut body = request(json!(9), "tools/call", json!({"name": "hang", "arguments": {}}));
    body["params"]["_meta"]["progressToken"] = json!(1);
    let mut req = client().post(&srv.url).json(&body);
    for (k, v) in standard_headers(&body) {
        req = req.header(k, v);
    }
    let resp = req.send().await.unwrap();
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let mut stream = resp.bytes_stream();
    // Read until the progress notification arrives, then hang up.
    let mut seen = String::new();
    while !seen.contains("notifications/progress") {
        let chunk = stream.next().await.expect("stream open").unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert_eq!(started.load(Ordering::SeqCst), 1);
    assert!(!dropped.load(Ordering::SeqCst));
    drop(stream);
    eventually("the handler future is dropped", || dropped.load(Ordering::SeqCst)).await;
    eventually("the cancellation token fires", || fired.load(Ordering::SeqCst)).await;
    srv.stop().await;
}

#[actix_rt::test]
async fn request_timeout_cancels_and_answers_an_error() {
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    let fired = Arc::new(AtomicBool::new(false));
    let mut cfg = test_config();
    cfg.request.timeout_ms = 300;
    let srv = TestServer::start(hanging_catalog(started, dropped.clone(), fired.clone()), cfg);
    let r = post(&srv.url, &request(json!(3), "tools/call", json!({"name": "hang"}))).await;
    assert_eq!(r.response()["id"], 3);
    assert_eq!(r.response()["error"]["code"], -32603, "{}", r.raw);
    assert!(r.response()["error"]["message"].as_str().unwrap().contains("timed out"));
    eventually("the handler future is dropped", || dropped.load(Ordering::SeqCst)).await;
    eventually("the cancellation token fires", || fired.load(Ordering::SeqCst)).await;
    srv.stop().await;
}

#[actix_rt::test]
async fn concurrent_requests_are_independent() {
    let srv = TestServer::everything();
    let mut calls = Vec::new();
    for i in 0..30 {
        let body = match i % 3 {
            0 => request(json!(i), "tools/list", json!({})),
            1 => request(json!(i), "resources/read", json!({"uri": format!("test://template/{i}/data")})),
            _ => request(
                json!(i),
                "prompts/get",
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": format!("v{i}")}}),
            ),
        };
        let url = srv.url.clone();
        calls.push(async move { (body.clone(), post(&url, &body).await) });
    }
    for (body, r) in futures::future::join_all(calls).await {
        assert_eq!(r.status, 200, "{}", r.raw);
        assert_eq!(r.response()["id"], body["id"]);
        let i = body["id"].as_i64().unwrap();
        if i % 3 == 1 {
            assert!(r.raw.contains(&format!("Data for ID: {i}")));
        }
        if i % 3 == 2 {
            assert!(r.raw.contains(&format!("v{i}")));
        }
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn pagination_walks_a_large_catalog_in_order() {
    let catalog = Catalog::new();
    for i in 0..250 {
        catalog
            .add_tool(Tool::raw(format!("tool{i:03}"), "d", json!({"type": "object"}), |_, _| async {
                Ok(CallToolResult::text("x"))
            }))
            .unwrap();
    }
    let srv = TestServer::start(Arc::new(catalog), test_config());
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = post(&srv.url, &request(json!(pages), "tools/list", params)).await;
        let res = &r.response()["result"];
        names.extend(res["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()));
        pages += 1;
        match res["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..250).map(|i| format!("tool{i:03}")).collect();
    assert_eq!(names, expected);
    srv.stop().await;
}
