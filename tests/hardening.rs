//! Regression tests for hostile inputs found by probing the release build:
//! each test names the finding it covers and fails on the code before the
//! fix. Real HTTP over loopback.

use crate::common;

use std::sync::Arc;

use actix_mcp::catalog::{Catalog, Tool};
use common::*;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Value};

fn call(id: i64, tool: &str, args: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": tool, "arguments": args}))
}

/// Finding 5: a repeated `Mcp-*` header is refused (400, HeaderMismatch),
/// whichever copy agrees with the body; so is a repeated `Origin` (403).
#[actix_rt::test]
async fn repeated_mcp_headers_and_origin_are_refused() {
    let srv = TestServer::everything();
    let body = call(1, "test_custom_header", json!({"region": "eu"}));
    let ok = post_with(&srv.url, &body, |h| h.push(("Mcp-Param-Region".into(), "eu".into()))).await;
    assert_eq!(ok.status, 200, "{}", ok.raw);
    for (name, second) in [
        ("Mcp-Name", "evil"),
        ("Mcp-Method", "tools/list"),
        ("MCP-Protocol-Version", "DRAFT-2026-v1"),
        ("Mcp-Param-Region", "evil"),
        ("Mcp-Param-Region", "eu"),
    ] {
        let r = post_with(&srv.url, &body, |h| {
            h.push(("Mcp-Param-Region".into(), "eu".into()));
            h.push((name.into(), second.into()));
        })
        .await;
        assert_eq!(r.status, 400, "second {name}: {second}: {}", r.raw);
        assert_eq!(r.error_code(), Some(-32020), "second {name}: {}", r.raw);
        assert!(r.raw.contains("<repeated>"), "{}", r.raw);
    }
    let r = post_with(&srv.url, &body, |h| {
        h.push(("Mcp-Param-Region".into(), "eu".into()));
        h.push(("Origin".into(), "http://localhost".into()));
        h.push(("Origin".into(), "http://evil.example.com".into()));
    })
    .await;
    assert_eq!(r.status, 403, "{}", r.raw);
    srv.stop().await;
}

/// Finding 8: `Mcp-Param` integers are compared exactly, not through `f64`.
#[actix_rt::test]
async fn mcp_param_integers_compare_exactly() {
    let catalog = Catalog::new();
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}});
    catalog
        .add_tool(Tool::raw("count", "Echoes n", schema, |args, _| async move {
            Ok(CallToolResult::text(args["n"].to_string()))
        }))
        .unwrap();
    let srv = TestServer::start(Arc::new(catalog), test_config());
    for (body, header, status) in [
        (json!(9007199254740993u64), "9007199254740992", 400),
        (json!(9007199254740993u64), "9007199254740993", 200),
        (json!(9223372036854776808u64), "9223372036854775808", 400),
        (json!(42), "42.0", 200),
        (json!(42), "42.5", 400),
    ] {
        let r = post_with(&srv.url, &call(1, "count", json!({"n": body})), |h| {
            h.push(("Mcp-Param-N".into(), header.into()))
        })
        .await;
        assert_eq!(r.status, status, "body {body} header {header}: {}", r.raw);
    }
    srv.stop().await;
}

/// Finding 9: `[::1]` followed by anything but a port is not the loopback.
#[actix_rt::test]
async fn bracketed_hosts_with_trailing_junk_are_refused() {
    let srv = TestServer::everything();
    let body = request(json!(1), "tools/list", json!({}));
    for (name, value) in [("Host", "[::1]evil.com"), ("Origin", "http://[::1]evil.com")] {
        let r = post_with(&srv.url, &body, |h| set(h, name, value)).await;
        assert_eq!(r.status, 403, "{name}: {value}: {}", r.raw);
    }
    let r = post_with(&srv.url, &body, |h| set(h, "Origin", "http://[::1]:3000")).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    srv.stop().await;
}

/// Finding 10: an encoded body and a media type that only starts like JSON
/// are refused with 415.
#[actix_rt::test]
async fn encoded_bodies_and_near_json_media_types_get_415() {
    let srv = TestServer::everything();
    let body = request(json!(1), "tools/list", json!({}));
    for (name, value) in [
        ("Content-Encoding", "foo"),
        ("Content-Encoding", "gzip"),
        ("Content-Type", "application/jsonx"),
        ("Content-Type", "application/json-seq"),
    ] {
        let r = post_with(&srv.url, &body, |h| set(h, name, value)).await;
        assert_eq!(r.status, 415, "{name}: {value}: {}", r.raw);
        assert_eq!(r.error_code(), Some(-32600), "{}", r.raw);
    }
    for (name, value) in [("Content-Encoding", "identity"), ("Content-Type", "application/json; charset=utf-8")] {
        let r = post_with(&srv.url, &body, |h| set(h, name, value)).await;
        assert_eq!(r.status, 200, "{name}: {value}: {}", r.raw);
    }
    srv.stop().await;
}

/// A handler that panics is answered with -32603 (HTTP 500), and the server
/// goes on serving.
#[actix_rt::test]
async fn a_panicking_handler_is_answered_over_http() {
    let srv = TestServer::everything();
    for id in 1..=3 {
        let r = post(&srv.url, &call(id, "panic", json!({}))).await;
        assert_eq!((r.status, r.error_code()), (500, Some(-32603)), "{}", r.raw);
        assert_eq!(r.response()["id"], id);
    }
    let r = post(&srv.url, &call(4, "echo", json!({"text": "still here"}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "still here", "{}", r.raw);
    srv.stop().await;
}

/// Finding 7: a body trickled after its headers is refused with 408 once
/// `http.body_timeout_ms` has passed, instead of holding the connection.
#[actix_rt::test]
async fn a_trickled_body_times_out_with_408() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let srv = TestServer::everything_with(|c| c.http.body_timeout_ms = 300);
    let addr = srv.url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head =
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"";
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    // The server answers and closes; a bound on the wait keeps a hang from
    // blocking the suite.
    tokio::time::timeout(std::time::Duration::from_secs(20), tcp.read_to_end(&mut reply))
        .await
        .expect("the server answers the trickled body")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("-32600") && reply.contains("did not arrive within 300 ms"), "{reply}");
    srv.stop().await;
}

/// Listen streams are bounded: at most `hub.max_resource_subscriptions`
/// distinct URIs, each at most `hub.max_uri_bytes` long (-32602), and each
/// URI is honoured once however often it is named.
#[actix_rt::test]
async fn resource_subscriptions_are_capped_and_deduplicated() {
    let srv = TestServer::everything_with(|c| {
        c.hub.max_resource_subscriptions = 3;
        c.hub.max_uri_bytes = 64;
    });
    let listen = |uris: Vec<String>| {
        request(json!("s"), "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": uris}}))
    };
    let four: Vec<String> = (0..4).map(|i| format!("test://r/{i}")).collect();
    let r = post(&srv.url, &listen(four)).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{}", r.raw);
    assert!(r.raw.contains("limit of 3"), "{}", r.raw);
    let r = post(&srv.url, &listen(vec![format!("test://{}", "x".repeat(100))])).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{}", r.raw);
    // Repeats count once, and the acknowledgement names each URI once.
    let repeated: Vec<String> = ["a", "b", "a", "c", "b", "a"].iter().map(|u| format!("test://{u}")).collect();
    let mut stream = SseReader::open(&srv.url, &listen(repeated)).await;
    let ack = stream.next().await.unwrap();
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["test://a", "test://b", "test://c"]),
        "{ack}"
    );
    drop(stream);
    srv.stop().await;
}

/// Security review finding 9: the status page and its data, and the
/// metrics on the main port, go through the `Host`/`Origin` guard of the
/// MCP endpoint (a DNS-rebinding page reads nothing); health probes answer
/// any host, as a kubelet's probe names the pod's address.
#[actix_rt::test]
async fn browser_facing_routes_pass_the_host_guard_and_probes_need_not() {
    let srv = TestServer::everything_with(|c| {
        c.status.enabled = true;
        c.metrics.enabled = true;
    });
    let base = srv.url.trim_end_matches("/mcp").to_owned();
    let get = |path: &str, host: &str, origin: Option<&str>| {
        let mut req = client().get(format!("{base}{path}")).header("Host", host);
        if let Some(o) = origin {
            req = req.header("Origin", o);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    for path in ["/status", "/status.json", "/metrics"] {
        assert_eq!(get(path, "localhost", None).await, 200, "{path} for an allowed host");
        assert_eq!(get(path, "evil.example", None).await, 403, "{path} for Host: evil.example");
        assert_eq!(get(path, "localhost", Some("http://evil.example")).await, 403, "{path} from a foreign origin");
    }
    for path in ["/healthz", "/readyz"] {
        assert_eq!(get(path, "10.1.2.3:8080", None).await, 200, "{path} for a probe naming the pod's address");
    }
    srv.stop().await;
}
