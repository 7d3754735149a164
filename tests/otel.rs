//! OpenTelemetry spans (the `otel` feature, which the test build enables):
//! a real OTLP/HTTP receiver, started here, decodes what the server exports
//! (protobuf, with `opentelemetry-proto`) and the spans are checked against
//! the MCP semantic conventions: one server span per request, named
//! `{method} {target}`, a child of the caller's `traceparent`, with its
//! attributes, error status, and one span per listen stream.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, status::StatusCode, Span};
use prost::Message;
use serde_json::json;

const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// Spans received, with the `service.name` of their resource.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<(String, Span)>>>);

async fn receive(body: web::Bytes, received: web::Data<Received>) -> HttpResponse {
    let Ok(export) = ExportTraceServiceRequest::decode(body) else { return HttpResponse::BadRequest().finish() };
    for rs in export.resource_spans {
        let service = rs
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|a| a.key == "service.name")
            .and_then(|a| text(a.value.as_ref()?.value.as_ref()?))
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for span in ss.spans {
                received.0.lock().unwrap().push((service.clone(), span));
            }
        }
    }
    HttpResponse::Ok().content_type("application/x-protobuf").body(Vec::new())
}

fn text(v: &AnyValue) -> Option<String> {
    match v {
        AnyValue::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn attrs(span: &Span) -> HashMap<String, String> {
    span.attributes.iter().filter_map(|a| Some((a.key.clone(), text(a.value.as_ref()?.value.as_ref()?)?))).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[actix_rt::test]
async fn spans_reach_an_otlp_receiver_named_and_attributed_by_the_conventions() {
    let received = Received::default();
    let data = web::Data::new(received.clone());
    let receiver =
        HttpServer::new(move || App::new().app_data(data.clone()).route("/v1/traces", web::post().to(receive)))
            .workers(1)
            .bind("127.0.0.1:0")
            .unwrap();
    let collector = format!("http://{}", receiver.addrs()[0]);
    let receiver = receiver.run();
    let stop = receiver.handle();
    actix_rt::spawn(receiver);

    let s = TestServer::everything_with(|c| {
        c.otel.endpoint = collector.clone();
        c.otel.service_name = "otel-test".into();
    });
    // A traced call (the caller's context in the header) that reports progress.
    let mut call = request(json!(1), "tools/call", json!({"name": "test_tool_with_progress", "arguments": {}}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    let tp = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let r = post_with(&s.url, &call, |h| set(h, "traceparent", &tp)).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let progress = r.messages.iter().find(|m| m["method"] == "notifications/progress").expect("progress").clone();
    // Untraced calls: a prompt, and a tool that does not exist.
    let prompt = request(json!(2), "prompts/get", json!({"name": "test_simple_prompt", "arguments": {}}));
    assert_eq!(post(&s.url, &prompt).await.status, 200);
    let unknown = request(json!(3), "tools/call", json!({"name": "no_such_tool", "arguments": {}}));
    assert_eq!(post(&s.url, &unknown).await.error_code(), Some(-32602));
    // A tool that fails as a tool (a result with `isError: true`).
    let failing = request(json!(4), "tools/call", json!({"name": "test_error_handling", "arguments": {}}));
    assert_eq!(post(&s.url, &failing).await.response()["result"]["isError"], true);
    // A listen stream, closed by the client.
    let listen = request(json!("l1"), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&s.url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    drop(stream);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while s.server.hub_stats().await.listeners > 0 {
        assert!(tokio::time::Instant::now() < deadline, "the listen stream closes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    actix_mcp::telemetry::flush_spans();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while received.0.lock().unwrap().len() < 5 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let spans = received.0.lock().unwrap().clone();
    let by_name = |name: &str| {
        spans.iter().find(|(_, s)| s.name == name).map(|(svc, s)| (svc.clone(), s.clone())).unwrap_or_else(|| {
            panic!("no span {name:?} in {:?}", spans.iter().map(|(_, s)| &s.name).collect::<Vec<_>>())
        })
    };

    let (service, traced) = by_name("tools/call test_tool_with_progress");
    assert_eq!(service, "otel-test");
    assert_eq!(traced.kind, SpanKind::Server as i32);
    assert_eq!(hex(&traced.trace_id), CALLER_TRACE, "a child of the caller's trace");
    assert_eq!(hex(&traced.parent_span_id), CALLER_SPAN);
    let a = attrs(&traced);
    assert_eq!(a["mcp.method.name"], "tools/call");
    assert_eq!(a["mcp.protocol.version"], "2026-07-28");
    assert_eq!(a["jsonrpc.request.id"], "1");
    assert_eq!(a["gen_ai.tool.name"], "test_tool_with_progress");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["network.transport"], "tcp");
    assert!(!a.contains_key("error.type"));
    // What the handler sent on names this span as its parent.
    assert_eq!(
        progress["params"]["_meta"]["traceparent"],
        format!("00-{CALLER_TRACE}-{}-01", hex(&traced.span_id)),
        "{progress}"
    );

    let (_, prompt) = by_name("prompts/get test_simple_prompt");
    assert_eq!(attrs(&prompt)["gen_ai.prompt.name"], "test_simple_prompt");
    assert!(prompt.parent_span_id.is_empty(), "untraced: a root span");
    assert_ne!(hex(&prompt.trace_id), CALLER_TRACE);

    let (_, failed) = by_name("tools/call no_such_tool");
    let a = attrs(&failed);
    assert_eq!((a["error.type"].as_str(), a["rpc.response.status_code"].as_str()), ("-32602", "-32602"));
    assert_eq!(failed.status.as_ref().map(|s| s.code), Some(StatusCode::Error as i32));

    let (_, tool_error) = by_name("tools/call test_error_handling");
    let a = attrs(&tool_error);
    assert_eq!(a["error.type"], "tool_error");
    assert!(!a.contains_key("rpc.response.status_code"), "a tool error is a result: {a:?}");
    assert_eq!(tool_error.status.as_ref().map(|s| s.code), Some(StatusCode::Error as i32));

    let (_, listen) = by_name("subscriptions/listen");
    let a = attrs(&listen);
    assert_eq!((a["jsonrpc.request.id"].as_str(), a["mcp.subscription.close_reason"].as_str()), ("l1", "client"));
    assert_eq!(a["mcp.protocol.version"], "2026-07-28");

    s.stop().await;
    stop.stop(true).await;
}
