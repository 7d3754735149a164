//! W3C trace context over real HTTP: `traceparent` from the header and from
//! `_meta` (which wins for its request) reaches the handler's context and
//! every log record of the request; a malformed one is ignored, never an
//! error.

use crate::common;

use std::sync::{Arc, Mutex};

use actix_mcp::prelude::*;
use common::*;
use serde_json::{json, Value};

const HEADER_TP: &str = "00-11111111111111111111111111111111-2222222222222222-01";
const META_TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

/// A log record's message and the `trace_id` it carries, if any.
type Record = (String, Option<String>);

/// Every log record.
#[derive(Clone, Default)]
struct Records(Arc<Mutex<Vec<Record>>>);

impl slog::Drain for Records {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record<'_>, values: &slog::OwnedKVList) -> Result<(), slog::Never> {
        struct TraceId(Option<String>);
        impl slog::Serializer for TraceId {
            fn emit_arguments(&mut self, key: slog::Key, val: &std::fmt::Arguments<'_>) -> slog::Result {
                if key == "trace_id" {
                    self.0 = Some(val.to_string());
                }
                Ok(())
            }
        }
        let mut id = TraceId(None);
        slog::KV::serialize(&record.kv(), record, &mut id).ok();
        slog::KV::serialize(values, record, &mut id).ok();
        self.0.lock().unwrap().push((record.msg().to_string(), id.0));
        Ok(())
    }
}

fn call(id: i64, meta_traceparent: Option<&str>) -> Value {
    let mut body = request(json!(id), "tools/call", json!({"name": "traced", "arguments": {}}));
    if let Some(tp) = meta_traceparent {
        body["params"]["_meta"]["traceparent"] = json!(tp);
        body["params"]["_meta"]["tracestate"] = json!("vendor=abc");
    }
    body
}

#[actix_rt::test]
async fn trace_context_from_header_and_meta_reaches_handler_and_logs() {
    let records = Records::default();
    let log = slog::Logger::root(slog::Drain::fuse(records.clone()), slog::o!());
    let traced = |ctx: RequestContext| async move {
        slog::info!(ctx.logger(), "handler ran");
        Ok(match ctx.trace_context() {
            Some(t) => format!("{} {}", t.trace_id(), t.tracestate.as_deref().unwrap_or("-")),
            None => "none".to_owned(),
        })
    };
    let server = McpServer::builder(server_info!())
        .config(test_config())
        .logger(log)
        .tool(Tool::no_args("traced", "Reports its trace context", traced))
        .build()
        .unwrap();
    let s = TestServer::serve(server);
    let text = |r: &Reply| r.response()["result"]["content"][0]["text"].as_str().unwrap().to_owned();

    // From the header.
    let r = post_with(&s.url, &call(1, None), |h| set(h, "traceparent", HEADER_TP)).await;
    assert_eq!(text(&r), "11111111111111111111111111111111 -");
    // `_meta` wins over the header for its request.
    let r = post_with(&s.url, &call(2, Some(META_TP)), |h| set(h, "traceparent", HEADER_TP)).await;
    assert_eq!(text(&r), "0af7651916cd43dd8448eb211c80319c vendor=abc");
    // Malformed: ignored, the request succeeds; a malformed `_meta` value
    // leaves the header's.
    let r = post_with(&s.url, &call(3, Some("00-xyz")), |h| set(h, "traceparent", "garbage")).await;
    assert_eq!((r.status, text(&r)), (200, "none".to_owned()), "{}", r.raw);
    let r = post_with(&s.url, &call(4, Some("00-xyz")), |h| set(h, "traceparent", HEADER_TP)).await;
    assert_eq!(text(&r), "11111111111111111111111111111111 -");
    // Untraced.
    assert_eq!(text(&post(&s.url, &call(5, None)).await), "none");

    let ran: Vec<Option<String>> =
        records.0.lock().unwrap().iter().filter(|(m, _)| m == "handler ran").map(|(_, t)| t.clone()).collect();
    assert_eq!(
        ran,
        [
            Some("11111111111111111111111111111111".to_owned()),
            Some("0af7651916cd43dd8448eb211c80319c".to_owned()),
            None,
            Some("11111111111111111111111111111111".to_owned()),
            None,
        ]
    );
    s.stop().await;
}

#[actix_rt::test]
async fn slow_requests_are_logged_at_info_and_fast_ones_are_not() {
    let records = Records::default();
    let log =
        slog::Logger::root(slog::Drain::fuse(slog::LevelFilter::new(records.clone(), slog::Level::Info)), slog::o!());
    let mut config = test_config();
    config.log.slow_ms = 50;
    let slow = |ctx: RequestContext| async move {
        ctx.sleep(std::time::Duration::from_millis(120)).await?;
        Ok("done")
    };
    let server = McpServer::builder(server_info!())
        .config(config)
        .logger(log)
        .tool(Tool::no_args("slow", "Takes its time", slow))
        .tool(Tool::no_args("fast", "Answers at once", |_ctx| async { Ok("done") }))
        .build()
        .unwrap();
    let s = TestServer::serve(server);
    let call = |id: i64, name: &str| request(json!(id), "tools/call", json!({"name": name, "arguments": {}}));
    assert_eq!(post(&s.url, &call(1, "fast")).await.status, 200);
    assert_eq!(post_with(&s.url, &call(2, "slow"), |h| set(h, "traceparent", HEADER_TP)).await.status, 200);
    let slow_lines: Vec<Record> =
        records.0.lock().unwrap().iter().filter(|(m, _)| m == "slow request").cloned().collect();
    assert_eq!(slow_lines, [("slow request".to_owned(), Some("11111111111111111111111111111111".to_owned()))]);
    s.stop().await;
}

#[actix_rt::test]
async fn notifications_a_traced_request_sends_carry_its_trace_context() {
    let s = TestServer::everything();
    let mut body = request(json!(1), "tools/call", json!({"name": "test_tool_with_progress", "arguments": {}}));
    body["params"]["_meta"]["progressToken"] = json!("p1");
    body["params"]["_meta"]["traceparent"] = json!(META_TP);
    let r = post(&s.url, &body).await;
    let progress: Vec<&Value> = r.messages.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert!(!progress.is_empty(), "{}", r.raw);
    for p in &progress {
        assert_eq!(p["params"]["_meta"]["traceparent"], META_TP, "{p}");
        assert_eq!(p["params"]["progressToken"], "p1");
    }
    // Untraced: no `_meta` added.
    body["params"]["_meta"].as_object_mut().unwrap().remove("traceparent");
    let r = post(&s.url, &body).await;
    assert!(r
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .all(|p| p["params"].get("_meta").is_none()));
    s.stop().await;
}

#[actix_rt::test]
async fn hub_notifications_a_traced_request_causes_carry_its_trace_context() {
    let s = TestServer::everything();
    let listen = request(json!("l1"), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&s.url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    let trigger =
        |id: i64| request(json!(id), "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
    // Traced (from the header): the list change it makes carries its context.
    let r = post_with(&s.url, &trigger(1), |h| set(h, "traceparent", HEADER_TP)).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let n = stream.next().await.unwrap();
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "l1");
    assert_eq!(n["params"]["_meta"]["traceparent"], HEADER_TP, "{n}");
    // Untraced: only the subscription id.
    assert_eq!(post(&s.url, &trigger(2)).await.status, 200);
    let n = stream.next().await.unwrap();
    assert_eq!(n["params"]["_meta"], json!({"io.modelcontextprotocol/subscriptionId": "l1"}), "{n}");
    s.stop().await;
}
