//! Every kind of bad input gets its exact HTTP status and JSON-RPC error
//! code, over real loopback HTTP and the binary's stdio; after each batch
//! the server still answers a good request.

use crate::common;

use common::*;
use serde_json::{json, Value};

/// A request of each method, valid as it stands.
fn requests() -> Vec<Value> {
    let uri = "test://static-text";
    [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": uri})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "test_simple_prompt"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "a"}}),
        ),
        ("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (method, params))| request(json!(i), method, params))
    .collect()
}

type Headers = Vec<(String, String)>;
type Edit = fn(&mut Value, &mut Headers);
/// A case: its name, headers, body, and the status and code it must get.
type Case = (&'static str, Headers, Vec<u8>, u16, Option<i64>);
/// A case built from a request: name, body, header edit, status, code.
type RequestCase = (&'static str, Value, fn(&mut Headers), u16, Option<i64>);
/// A stdio line: name, text, and the (id, code) it must get (code 0: a result).
type Line = (&'static str, String, Option<(Value, i64)>);

/// Faults of `_meta` and of the `Mcp-*` headers, each with its status and code.
fn faults() -> Vec<(&'static str, Edit, u16, i64)> {
    vec![
        ("no Mcp-Method", |_, h| without(h, "Mcp-Method"), 400, -32020),
        ("another Mcp-Method", |_, h| set(h, "Mcp-Method", "tools/lists"), 400, -32020),
        (
            "a second Mcp-Method",
            |b, h| h.push(("Mcp-Method".into(), b["method"].as_str().unwrap().into())),
            400,
            -32020,
        ),
        ("no MCP-Protocol-Version", |_, h| without(h, "MCP-Protocol-Version"), 400, -32020),
        ("another MCP-Protocol-Version", |_, h| set(h, "MCP-Protocol-Version", "DRAFT-2026-v1"), 400, -32020),
        (
            "a second MCP-Protocol-Version",
            |_, h| h.push(("MCP-Protocol-Version".into(), "2026-07-28".into())),
            400,
            -32020,
        ),
        ("no _meta", |b, _| drop(b["params"].as_object_mut().unwrap().remove("_meta")), 400, -32602),
        ("_meta not an object", |b, _| b["params"]["_meta"] = json!([1]), 400, -32602),
        (
            "an unsupported version",
            |b, h| {
                b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
                set(h, "MCP-Protocol-Version", "1999-01-01");
            },
            400,
            -32022,
        ),
        (
            "a numeric version",
            |b, _| b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(20260728),
            400,
            -32602,
        ),
        (
            "no clientCapabilities",
            |b, _| {
                drop(b["params"]["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities"))
            },
            400,
            -32602,
        ),
        (
            "clientCapabilities a string",
            |b, _| b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!("all"),
            400,
            -32602,
        ),
        (
            "clientInfo without a name",
            |b, _| b["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = json!({"version": "1"}),
            400,
            -32602,
        ),
        ("a progressToken object", |b, _| b["params"]["_meta"]["progressToken"] = json!({"t": 1}), 400, -32602),
        (
            "a bad logLevel",
            |b, _| b["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud"),
            400,
            -32602,
        ),
    ]
}

async fn healthy(url: &str) {
    let r =
        post(url, &request(json!("ok"), "tools/call", json!({"name": "echo", "arguments": {"text": "alive"}}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "alive", "the server still serves: {}", r.raw);
}

#[actix_rt::test]
async fn every_method_with_every_meta_and_header_fault() {
    let srv = TestServer::everything();
    let mut cases = 0;
    for good in requests() {
        let method = good["method"].as_str().unwrap().to_owned();
        for (fault, edit, status, code) in faults() {
            let mut body = good.clone();
            let mut headers = standard_headers(&body);
            edit(&mut body, &mut headers);
            let r = post_raw(&srv.url, &headers, serde_json::to_vec(&body).unwrap()).await;
            assert_eq!((r.status, r.error_code()), (status, Some(code)), "{method} with {fault}: {}", r.raw);
            assert_eq!(r.response()["id"], good["id"], "{method} with {fault}: the request's id");
            cases += 1;
        }
        healthy(&srv.url).await;
    }
    assert_eq!(cases, 150);
    srv.stop().await;
}

/// Transport-level and method-level refusals, one by one.
#[actix_rt::test]
async fn envelope_transport_and_params_faults() {
    let srv = TestServer::everything();
    let url = srv.url.clone();
    let call = |args: Value| request(json!(1), "tools/call", json!({"name": "echo", "arguments": args}));
    let raw = |body: &str| (standard_headers(&json!({})), body.as_bytes().to_vec());
    let mut table: Vec<Case> = Vec::new();
    for (name, body, status, code) in [
        ("empty body", "", 400, -32700),
        ("not JSON", "{", 400, -32700),
        ("a JSON number", "1", 400, -32600),
        ("a JSON string", "\"x\"", 400, -32600),
        ("null", "null", 400, -32600),
        ("an empty object", "{}", 400, -32600),
        ("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#, 400, -32600),
        ("no jsonrpc", r#"{"id":1,"method":"tools/list"}"#, 400, -32600),
        ("a batch", r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#, 400, -32600),
        ("an empty batch", "[]", 400, -32600),
        ("a method that is a number", r#"{"jsonrpc":"2.0","id":1,"method":7}"#, 400, -32600),
        ("an id that is an object", r#"{"jsonrpc":"2.0","id":{},"method":"tools/list"}"#, 400, -32600),
    ] {
        let (h, b) = raw(body);
        table.push((name, h, b, status, Some(code)));
    }
    let with = |b: Value, edit: fn(&mut Headers)| {
        let mut h = standard_headers(&b);
        edit(&mut h);
        (h, serde_json::to_vec(&b).unwrap())
    };
    let cases: Vec<RequestCase> = vec![
        ("an unknown method", request(json!(1), "tools/lists", json!({})), |_| {}, 404, Some(-32601)),
        ("initialize with stateless _meta", request(json!(1), "initialize", json!({})), |_| {}, 404, Some(-32601)),
        ("a tool without a name", request(json!(1), "tools/call", json!({"arguments": {}})), |_| {}, 400, Some(-32602)),
        (
            "an unknown tool",
            request(json!(1), "tools/call", json!({"name": "nope"})),
            |h| set(h, "Mcp-Name", "nope"),
            400,
            Some(-32602),
        ),
        // Invalid tool arguments are a tool result with isError (the model
        // can correct them), not a protocol error.
        ("echo without text", call(json!({})), |_| {}, 200, None),
        ("echo with a number", call(json!({"text": 5})), |_| {}, 200, None),
        (
            "arguments not an object",
            request(json!(1), "tools/call", json!({"name": "echo", "arguments": [1]})),
            |_| {},
            400,
            Some(-32602),
        ),
        ("another Mcp-Name", call(json!({"text": "x"})), |h| set(h, "Mcp-Name", "other"), 400, Some(-32020)),
        ("no Mcp-Name", call(json!({"text": "x"})), |h| without(h, "Mcp-Name"), 400, Some(-32020)),
        (
            "an undecodable Mcp-Name",
            call(json!({"text": "x"})),
            |h| set(h, "Mcp-Name", "=?base64?!!!?="),
            400,
            Some(-32020),
        ),
        (
            "a second Mcp-Name",
            call(json!({"text": "x"})),
            |h| h.push(("Mcp-Name".into(), "echo".into())),
            400,
            Some(-32020),
        ),
        (
            "an unknown resource",
            request(json!(1), "resources/read", json!({"uri": "test://nope"})),
            |h| set(h, "Mcp-Name", "test://nope"),
            400,
            Some(-32602),
        ),
        ("read without a uri", request(json!(1), "resources/read", json!({})), |_| {}, 400, Some(-32602)),
        (
            "an unknown prompt",
            request(json!(1), "prompts/get", json!({"name": "nope"})),
            |h| set(h, "Mcp-Name", "nope"),
            400,
            Some(-32602),
        ),
        ("a bad cursor", request(json!(1), "tools/list", json!({"cursor": "!!"})), |_| {}, 400, Some(-32602)),
        (
            "listen without notifications",
            request(json!(1), "subscriptions/listen", json!({})),
            |_| {},
            400,
            Some(-32602),
        ),
        ("text/plain", call(json!({"text": "x"})), |h| set(h, "Content-Type", "text/plain"), 415, Some(-32600)),
        ("gzip", call(json!({"text": "x"})), |h| set(h, "Content-Encoding", "gzip"), 415, Some(-32600)),
        ("an evil Host", call(json!({"text": "x"})), |h| set(h, "Host", "evil.example.com"), 403, Some(-32600)),
        (
            "an evil Origin",
            call(json!({"text": "x"})),
            |h| set(h, "Origin", "https://evil.example.com"),
            403,
            Some(-32600),
        ),
        ("an unknown session", call(json!({"text": "x"})), |h| set(h, "Mcp-Session-Id", "0123"), 404, Some(-32600)),
    ];
    for (name, body, edit, status, code) in cases {
        let (h, b) = with(body, edit);
        table.push((name, h, b, status, code));
    }
    let (h, _) = raw("");
    table.push(("a body over the limit", h, vec![b' '; 4 * 1024 * 1024 + 1], 413, Some(-32600)));
    let count = table.len();
    for (name, headers, body, status, code) in table {
        let r = post_raw(&url, &headers, body).await;
        assert_eq!((r.status, r.error_code()), (status, code), "{name}: {}", r.raw);
    }
    assert_eq!(count, 34);
    healthy(&url).await;
    srv.stop().await;
}

/// stdio: every message gets its error with the right code and id (none for
/// notifications and responses), in order, and the connection goes on.
#[actix_rt::test]
async fn stdio_faults_in_one_session() {
    let mut c = StdioChild::spawn(&[]);
    let lines: Vec<Line> = {
        let good = |id: i64, method: &str, params: Value| request(json!(id), method, params).to_string();
        let mut v: Vec<Line> = vec![
            ("not JSON", "{".into(), Some((Value::Null, -32700))),
            ("a number", "1".into(), Some((Value::Null, -32600))),
            ("null", "null".into(), Some((Value::Null, -32600))),
            ("an empty object", "{}".into(), Some((Value::Null, -32600))),
            ("a batch", r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.into(), Some((Value::Null, -32600))),
            ("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#.into(), Some((json!(2), -32600))),
            (
                "no _meta",
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#.into(),
                Some((json!(3), -32602)),
            ),
            ("no params", r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#.into(), Some((json!(4), -32602))),
            ("an unknown method", good(5, "tools/lists", json!({})), Some((json!(5), -32601))),
            ("a tool without a name", good(6, "tools/call", json!({})), Some((json!(6), -32602))),
            ("an unknown tool", good(7, "tools/call", json!({"name": "nope"})), Some((json!(7), -32602))),
            // A tool result with isError (code 0 below: no JSON-RPC error).
            ("echo without text", good(8, "tools/call", json!({"name": "echo", "arguments": {}})), Some((json!(8), 0))),
            ("an unknown resource", good(9, "resources/read", json!({"uri": "test://nope"})), Some((json!(9), -32602))),
            ("an unknown prompt", good(10, "prompts/get", json!({"name": "nope"})), Some((json!(10), -32602))),
            ("a bad cursor", good(11, "tools/list", json!({"cursor": "!!"})), Some((json!(11), -32602))),
            ("listen without notifications", good(12, "subscriptions/listen", json!({})), Some((json!(12), -32602))),
            ("a panicking tool", good(13, "tools/call", json!({"name": "panic"})), Some((json!(13), -32603))),
            ("a notification", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(), None),
            (
                "a cancellation of nothing",
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#.into(),
                None,
            ),
            ("a response", r#"{"jsonrpc":"2.0","id":77,"result":{}}"#.into(), None),
            ("a blank line", "   ".into(), None),
        ];
        let faults = faults();
        for (i, (fault, edit, _, code)) in faults.iter().enumerate() {
            // Header faults have no stdio form; the _meta ones do.
            if fault.contains("Mcp-") || fault.contains("MCP-") {
                continue;
            }
            let mut body = request(json!(100 + i), "tools/list", json!({}));
            edit(&mut body, &mut Vec::new());
            v.push((fault, body.to_string(), Some((json!(100 + i), *code))));
        }
        v
    };
    let expected: Vec<(&str, (Value, i64))> = lines.iter().filter_map(|(n, _, e)| e.clone().map(|e| (*n, e))).collect();
    assert_eq!(lines.len(), 30);
    for (_, line, _) in &lines {
        c.send_raw(format!("{line}\n").as_bytes()).await;
    }
    // The answers, in any order (requests run concurrently), each exactly once.
    let mut got = Vec::new();
    while got.len() < expected.len() {
        let r = c.recv().await;
        got.push((r["id"].clone(), r["error"]["code"].as_i64().unwrap_or(0)));
    }
    for (name, want) in &expected {
        let i = got.iter().position(|g| g == want).unwrap_or_else(|| panic!("{name}: {want:?} not among {got:?}"));
        got.remove(i);
    }
    c.send(&request(json!("ok"), "tools/call", json!({"name": "echo", "arguments": {"text": "alive"}}))).await;
    let r = c.recv().await;
    assert_eq!((r["id"].clone(), r["result"]["content"][0]["text"].clone()), (json!("ok"), json!("alive")), "{r}");
}
