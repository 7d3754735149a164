//! Every validation error of the Streamable HTTP transport, over real
//! loopback HTTP: JSON-RPC code, HTTP status and id echo.

use crate::common;

use common::*;
use serde_json::{json, Value};

struct Case {
    name: &'static str,
    body: Value,
    edit: fn(&mut Vec<(String, String)>),
    status: u16,
    code: i64,
}

fn keep(_: &mut Vec<(String, String)>) {}

fn discover_with_meta(id: i64, meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {"_meta": meta}})
}

#[actix_rt::test]
async fn validation_errors_have_code_status_and_id() {
    let srv = TestServer::everything();
    let v = "io.modelcontextprotocol/protocolVersion";
    let c = "io.modelcontextprotocol/clientCapabilities";
    let cases = vec![
        Case {
            name: "no _meta",
            body: json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}),
            edit: |h| set(h, "MCP-Protocol-Version", "2026-07-28"),
            status: 400,
            code: -32602,
        },
        Case {
            name: "no protocolVersion",
            body: discover_with_meta(102, json!({c: {}})),
            edit: |h| set(h, "MCP-Protocol-Version", "2026-07-28"),
            status: 400,
            code: -32602,
        },
        Case {
            name: "no clientCapabilities",
            body: discover_with_meta(104, json!({v: "2026-07-28"})),
            edit: keep,
            status: 400,
            code: -32602,
        },
        Case {
            name: "capabilities not an object",
            body: discover_with_meta(105, json!({v: "2026-07-28", c: []})),
            edit: keep,
            status: 400,
            code: -32602,
        },
        Case {
            name: "header/body version mismatch",
            body: discover_with_meta(106, json!({v: "v999.0.0", c: {}})),
            edit: |h| set(h, "MCP-Protocol-Version", "2026-07-28"),
            status: 400,
            code: -32020,
        },
        Case {
            name: "missing version header",
            body: discover_with_meta(107, json!({v: "2026-07-28", c: {}})),
            edit: |h| without(h, "MCP-Protocol-Version"),
            status: 400,
            code: -32020,
        },
        Case {
            name: "unsupported version",
            body: discover_with_meta(301, json!({v: "v999.0.0", c: {}})),
            edit: keep,
            status: 400,
            code: -32022,
        },
        Case {
            name: "draft: header mismatch uses -32001",
            body: discover_with_meta(
                108,
                json!({v: "DRAFT-2026-v1", c: {}, "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"}}),
            ),
            edit: |h| set(h, "MCP-Protocol-Version", "2026-07-28"),
            status: 400,
            code: -32001,
        },
        Case {
            name: "draft: clientInfo required",
            body: discover_with_meta(109, json!({v: "DRAFT-2026-v1", c: {}})),
            edit: keep,
            status: 400,
            code: -32602,
        },
        Case {
            name: "initialize removed",
            body: request(json!(110), "initialize", json!({})),
            edit: keep,
            status: 404,
            code: -32601,
        },
        Case {
            name: "ping removed",
            body: request(json!(111), "ping", json!({})),
            edit: keep,
            status: 404,
            code: -32601,
        },
        Case {
            name: "logging/setLevel removed",
            body: request(json!(112), "logging/setLevel", json!({"level": "info"})),
            edit: keep,
            status: 404,
            code: -32601,
        },
        Case {
            name: "resources/subscribe removed",
            body: request(json!(113), "resources/subscribe", json!({"uri": "test://static-text"})),
            edit: keep,
            status: 404,
            code: -32601,
        },
        Case {
            name: "resources/unsubscribe removed",
            body: request(json!(114), "resources/unsubscribe", json!({"uri": "test://static-text"})),
            edit: keep,
            status: 404,
            code: -32601,
        },
        Case {
            name: "unknown method",
            body: request(json!("s-1"), "unknown/method", json!({})),
            edit: keep,
            status: 404,
            code: -32601,
        },
        Case {
            name: "missing Mcp-Method",
            body: request(json!(115), "tools/list", json!({})),
            edit: |h| without(h, "Mcp-Method"),
            status: 400,
            code: -32020,
        },
        Case {
            name: "Mcp-Method value case differs",
            body: request(json!(116), "tools/list", json!({})),
            edit: |h| set(h, "Mcp-Method", "TOOLS/LIST"),
            status: 400,
            code: -32020,
        },
        Case {
            name: "Mcp-Name mismatch",
            body: request(json!(117), "tools/call", json!({"name": "test_simple_text"})),
            edit: |h| set(h, "Mcp-Name", "other"),
            status: 400,
            code: -32020,
        },
        Case {
            name: "Mcp-Name missing on resources/read",
            body: request(json!(118), "resources/read", json!({"uri": "test://static-text"})),
            edit: |h| without(h, "Mcp-Name"),
            status: 400,
            code: -32020,
        },
        Case {
            name: "Mcp-Param missing while the body has the value",
            body: request(
                json!(119),
                "tools/call",
                json!({"name": "test_custom_header", "arguments": {"region": "eu"}}),
            ),
            edit: keep,
            status: 400,
            code: -32020,
        },
        Case {
            name: "Mcp-Param with bad base64",
            body: request(
                json!(120),
                "tools/call",
                json!({"name": "test_custom_header", "arguments": {"region": "Hello"}}),
            ),
            edit: |h| set(h, "Mcp-Param-Region", "=?base64?SGVsbG8?="),
            status: 400,
            code: -32020,
        },
        Case {
            name: "missing capability",
            body: request(json!(121), "tools/call", json!({"name": "test_missing_capability", "arguments": {}})),
            edit: keep,
            status: 400,
            code: -32021,
        },
        Case {
            name: "unknown tool",
            body: request(json!(122), "tools/call", json!({"name": "no_such_tool"})),
            edit: keep,
            status: 400,
            code: -32602,
        },
        Case {
            name: "tools/call without a name",
            body: request(json!(123), "tools/call", json!({"arguments": {}})),
            edit: |h| set(h, "Mcp-Name", "x"),
            status: 400,
            code: -32602,
        },
        Case {
            name: "invalid cursor",
            body: request(json!(124), "tools/list", json!({"cursor": "not-a-cursor!"})),
            edit: keep,
            status: 400,
            code: -32602,
        },
        Case {
            name: "prompt without its required argument",
            body: request(
                json!(125),
                "prompts/get",
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}),
            ),
            edit: keep,
            status: 400,
            code: -32602,
        },
    ];
    for case in cases {
        let reply = post_with(&srv.url, &case.body, case.edit).await;
        assert_eq!(reply.status, case.status, "{}: {}", case.name, reply.raw);
        assert_eq!(reply.error_code(), Some(case.code), "{}: {}", case.name, reply.raw);
        assert_eq!(reply.response()["id"], case.body["id"], "{}: id must be echoed", case.name);
        assert_eq!(reply.content_type, "application/json", "{}", case.name);
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn typed_error_data() {
    let srv = TestServer::everything();
    let body = discover_with_meta(
        301,
        json!({"io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {}}),
    );
    let r = post(&srv.url, &body).await;
    assert_eq!(r.response()["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(r.response()["error"]["data"]["supported"], json!(["2026-07-28", "DRAFT-2026-v1"]));

    let r = post(&srv.url, &request(json!(5), "tools/call", json!({"name": "test_missing_capability"}))).await;
    assert_eq!(r.response()["error"]["data"], json!({"requiredCapabilities": {"sampling": {}}}));

    let mut draft = request(json!(6), "tools/call", json!({"name": "test_missing_capability"}));
    draft["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("DRAFT-2026-v1");
    let r = post(&srv.url, &draft).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32003)), "{}", r.raw);

    let mut cfg = test_config();
    cfg.server.versions = vec!["2026-07-28".into()];
    let only_release = TestServer::start(std::sync::Arc::new(actix_mcp::catalogs::everything::catalog()), cfg);
    let mut d = discover_with_meta(
        8,
        json!({"io.modelcontextprotocol/protocolVersion": "DRAFT-2026-v1", "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"}}),
    );
    let r = post(&only_release.url, &d).await;
    // A known version the server does not serve: the draft's own code for it.
    assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{}", r.raw);
    assert_eq!(r.response()["error"]["data"]["supported"], json!(["2026-07-28"]));
    d["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    assert_eq!(post(&only_release.url, &d).await.status, 200);
    only_release.stop().await;
    srv.stop().await;
}

#[actix_rt::test]
async fn transport_level_refusals() {
    let mut cfg = test_config();
    cfg.http.max_body_bytes = 1024;
    let srv = TestServer::start(std::sync::Arc::new(actix_mcp::catalogs::everything::catalog()), cfg);
    let list = request(json!(1), "tools/list", json!({}));

    // DNS rebinding: foreign Host or Origin → 403
    let r = post_with(&srv.url, &list, |h| set(h, "Host", "evil.example.com")).await;
    assert_eq!(r.status, 403, "{}", r.raw);
    let r = post_with(&srv.url, &list, |h| set(h, "Origin", "http://evil.example.com")).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.response()["error"]["code"], -32600);
    let r = post_with(&srv.url, &list, |h| set(h, "Origin", "http://localhost:1234")).await;
    assert_eq!(r.status, 200);

    // Body over the limit → 413 with a JSON-RPC error
    let big = request(json!(2), "tools/list", json!({"pad": "x".repeat(4096)}));
    let r = post(&srv.url, &big).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), Some(-32600));

    // Not JSON → -32700, 400
    let r = post_raw(&srv.url, &standard_headers(&list), b"{not json".to_vec()).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32700)));
    assert_eq!(r.response()["id"], Value::Null);

    // Batch → -32600, 400
    let batch = serde_json::to_vec(&json!([list])).unwrap();
    let r = post_raw(&srv.url, &standard_headers(&list), batch).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32600)));

    // Notification → 202, no body
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let r = post(&srv.url, &note).await;
    assert_eq!(r.status, 202);
    assert!(r.raw.is_empty());

    // Wrong content type → 415
    let r = post_with(&srv.url, &list, |h| set(h, "Content-Type", "text/plain")).await;
    assert_eq!(r.status, 415);

    // GET / DELETE are not part of 2026-07-28 (only of legacy sessions) → 405,
    // and no other method is served either
    let others = [reqwest::Method::PUT, reqwest::Method::PATCH, reqwest::Method::HEAD, reqwest::Method::OPTIONS];
    for method in [reqwest::Method::GET, reqwest::Method::DELETE].into_iter().chain(others) {
        let resp = client().request(method.clone(), &srv.url).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 405, "{method}");
        assert!(resp.headers()["allow"].to_str().unwrap().contains("POST"));
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn results_carry_result_type_cache_hints_and_server_info() {
    let srv = TestServer::everything();
    let r = post(&srv.url, &request(json!(1), "server/discover", json!({}))).await;
    let res = &r.response()["result"];
    assert_eq!(res["resultType"], "complete");
    assert_eq!(res["supportedVersions"][0], "2026-07-28");
    assert!(res["capabilities"]["tools"].is_object());
    assert_eq!(res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "actix-mcp");
    for (method, params) in [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/read", json!({"uri": "test://static-text"})),
    ] {
        let r = post(&srv.url, &request(json!(2), method, params)).await;
        let res = &r.response()["result"];
        assert_eq!(res["resultType"], "complete", "{method}");
        assert!(res["ttlMs"].as_u64().is_some(), "{method}: {res}");
        assert!(["public", "private"].contains(&res["cacheScope"].as_str().unwrap()), "{method}");
        assert!(res["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(), "{method}");
    }
    let r = post(&srv.url, &request(json!(3), "tools/call", json!({"name": "test_simple_text"}))).await;
    assert_eq!(r.response()["result"]["resultType"], "complete");
    assert_eq!(r.content_type, "application/json");
    srv.stop().await;
}

#[actix_rt::test]
async fn custom_header_params_are_validated() {
    let srv = TestServer::everything();
    let call = |region: &str| {
        request(json!(1), "tools/call", json!({"name": "test_custom_header", "arguments": {"region": region}}))
    };
    let r = post_with(&srv.url, &call("Hello"), |h| set(h, "Mcp-Param-Region", "=?base64?SGVsbG8=?=")).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r =
        post_with(&srv.url, &call("Hello, 世界"), |h| set(h, "mcp-param-region", "=?base64?SGVsbG8sIOS4lueVjA==?="))
            .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = post_with(&srv.url, &call("us-west1"), |h| set(h, "Mcp-Param-Region", "us-east1")).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)));
    let r = post_with(&srv.url, &call("SGVsbG8="), |h| set(h, "Mcp-Param-Region", "SGVsbG8=")).await;
    assert_eq!(r.status, 200, "a value without the sentinel is literal");
    srv.stop().await;
}
