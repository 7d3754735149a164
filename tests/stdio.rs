//! The `actix-mcp stdio` binary as a real child process.

use crate::common;

use common::*;
use serde_json::{json, Value};

#[actix_rt::test]
async fn answers_requests_and_exits_on_eof() {
    let mut p = StdioChild::spawn(&[]);
    p.send(&request(json!(1), "server/discover", json!({}))).await;
    let r = p.recv().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["supportedVersions"][0], "2026-07-28");
    assert!(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    let status = p.close().await;
    assert!(status.success(), "{status:?}");
}

#[actix_rt::test]
async fn validation_errors_on_stdio() {
    let mut p = StdioChild::spawn(&[]);
    let cases: Vec<(Value, i64)> = vec![
        (json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}), -32602),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "v999", "io.modelcontextprotocol/clientCapabilities": {}}}}),
            -32022,
        ),
        (request(json!(3), "initialize", json!({})), -32601),
        (request(json!(4), "ping", json!({})), -32601),
        (request(json!("five"), "tools/call", json!({"name": "test_missing_capability"})), -32021),
        (request(json!(6), "resources/read", json!({"uri": "test://nope"})), -32602),
    ];
    for (msg, code) in &cases {
        p.send(msg).await;
        let r = p.recv().await;
        assert_eq!(r["id"], msg["id"], "{r}");
        assert_eq!(r["error"]["code"], *code, "{r}");
    }
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn progress_and_logs_interleave_before_the_result() {
    let mut p = StdioChild::spawn(&[]);
    let mut call = request(json!(7), "tools/call", json!({"name": "test_tool_with_progress"}));
    call["params"]["_meta"]["progressToken"] = json!(42);
    p.send(&call).await;
    let msgs = p.recv_until_id(&json!(7)).await;
    let progress: Vec<_> = msgs.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3);
    assert!(progress.iter().all(|m| m["params"]["progressToken"] == 42));
    assert_eq!(msgs.last().unwrap()["result"]["content"][0]["text"], "42");
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn fifty_concurrent_mixed_requests_each_answered_once() {
    let mut p = StdioChild::spawn(&[]);
    let mut expected = std::collections::HashMap::new();
    let mut batch = Vec::new();
    for i in 0..50 {
        let id = if i % 2 == 0 { json!(i) } else { json!(format!("req-{i}")) };
        let msg = match i % 5 {
            0 => request(id.clone(), "tools/list", json!({})),
            1 => request(id.clone(), "tools/call", json!({"name": "sleep", "arguments": {"ms": 50 + (i * 7) % 100}})),
            2 => request(id.clone(), "resources/read", json!({"uri": format!("test://template/{i}/data")})),
            3 => request(id.clone(), "prompts/get", json!({"name": "test_simple_prompt"})),
            _ => request(id.clone(), "tools/call", json!({"name": "no_such_tool"})),
        };
        expected.insert(id.to_string(), i % 5);
        batch.extend(serde_json::to_vec(&msg).unwrap());
        batch.push(b'\n');
    }
    p.send_raw(&batch).await;
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 50 {
        let m = p.recv().await;
        if m.get("method").is_some() {
            continue; // notifications
        }
        let key = m["id"].to_string();
        let kind = *expected.get(&key).unwrap_or_else(|| panic!("unexpected id {key}"));
        assert!(seen.insert(key.clone()), "{key} answered twice");
        match kind {
            4 => assert_eq!(m["error"]["code"], -32602, "{m}"),
            2 => {
                let i: i64 = key.trim_matches('"').trim_start_matches("req-").parse().unwrap();
                assert!(m["result"]["contents"][0]["text"].as_str().unwrap().contains(&format!("Data for ID: {i}")));
            }
            _ => assert_eq!(m["result"]["resultType"], "complete", "{m}"),
        }
    }
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn cancelled_notification_stops_the_handler_and_nothing_follows() {
    let mut p = StdioChild::spawn(&["--log-level", "info"]);
    let mut call = request(json!("slow"), "tools/call", json!({"name": "sleep", "arguments": {"ms": 30000}}));
    call["params"]["_meta"]["progressToken"] = json!("t");
    p.send(&call).await;
    // The handler is running once its first progress notification arrives.
    let first = p.recv().await;
    assert_eq!(first["method"], "notifications/progress");
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow", "reason": "user"}}))
        .await;
    p.stderr_until("handler observed cancellation").await;
    // A later request is answered, and nothing for the cancelled id came before it.
    p.send(&request(json!(2), "tools/list", json!({}))).await;
    let msgs = p.recv_until_id(&json!(2)).await;
    for m in &msgs[..msgs.len() - 1] {
        assert_ne!(m.get("id"), Some(&json!("slow")), "a response after cancellation: {m}");
    }
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn malformed_input_corpus_gets_errors_and_no_panic() {
    let mut p = StdioChild::spawn(&[]);
    let huge_id = "123456789012345678901234567890";
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
        "[".repeat(3000),
        "]".repeat(3000)
    );
    let corpus: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/li".to_vec(), -32700, Value::Null),
        (b"\xff\xfe\xfd".to_vec(), -32700, Value::Null),
        (b"[]".to_vec(), -32600, Value::Null),
        (br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.to_vec(), -32600, Value::Null),
        (b"42".to_vec(), -32600, Value::Null),
        (b"\"just a string\"".to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":3,"method":7}"#.to_vec(), -32600, json!(3)),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"1.0","id":4,"method":"tools/list"}"#.to_vec(), -32600, json!(4)),
        (br#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"x"}"#.to_vec(), -32602, json!(5)),
        (format!(r#"{{"jsonrpc":"2.0","id":{huge_id},"method":"nope","params":{{}}}}"#).into_bytes(), -32602, Value::Null),
        (deep.into_bytes(), -32700, Value::Null),
        (
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":["x"],"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
            -32602,
            json!(6),
        ),
        (
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
            -32602,
            json!(8),
        ),
    ];
    for (bytes, code, id) in &corpus {
        let mut line = bytes.clone();
        line.push(b'\n');
        p.send_raw(&line).await;
        let r = p.recv().await;
        assert_eq!(r["error"]["code"], *code, "input {:?} → {r}", String::from_utf8_lossy(bytes));
        if !id.is_null() {
            assert_eq!(&r["id"], id);
        }
    }
    // A huge integer id is echoed digit for digit.
    p.send_raw(format!("{{\"jsonrpc\":\"2.0\",\"id\":{huge_id},\"method\":\"tools/list\"}}\n").as_bytes()).await;
    let line =
        tokio::time::timeout(std::time::Duration::from_secs(10), p.stdout.next_line()).await.unwrap().unwrap().unwrap();
    assert!(line.contains(&format!("\"id\":{huge_id}")), "{line}");
    // Still serving.
    p.send(&request(json!(99), "tools/list", json!({}))).await;
    assert_eq!(p.recv().await["id"], 99);
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn an_over_long_line_is_refused_and_skipped() {
    let dir = tempfile::Builder::new().prefix("actix-mcp-test-").tempdir().unwrap();
    let cfg = dir.path().join("small.toml");
    std::fs::write(&cfg, "[stdio]\nmax_line_bytes = 256\n").unwrap();
    let mut p = StdioChild::spawn(&["--config", cfg.to_str().unwrap()]);
    let big = request(json!(1), "tools/list", json!({"pad": "x".repeat(1000)}));
    p.send(&big).await;
    assert_eq!(p.recv().await["error"]["code"], -32600);
    p.send(&request(json!(2), "tools/list", json!({}))).await;
    assert_eq!(p.recv().await["id"], 2);
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn stdout_carries_only_protocol_messages() {
    let mut p = StdioChild::spawn(&["--log-level", "debug"]);
    for i in 0..5 {
        p.send(&request(json!(i), "tools/call", json!({"name": "test_simple_text"}))).await;
    }
    for _ in 0..5 {
        let m = p.recv().await; // panics on any non-JSON line
        assert_eq!(m["jsonrpc"], "2.0");
    }
    drop(p.stdin.take());
    // After EOF nothing but the logs: stdout closes without further lines.
    let rest = tokio::time::timeout(std::time::Duration::from_secs(10), p.stdout.next_line()).await.unwrap().unwrap();
    assert!(rest.is_none(), "{rest:?}");
}

#[actix_rt::test]
async fn the_default_catalog_serves_a_directory() {
    let dir = tempfile::Builder::new().prefix("actix-mcp-stdio-fs-").tempdir().unwrap();
    std::fs::write(dir.path().join("note.md"), "# Note\n").unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut p = StdioChild::spawn_args(&["--root", root.to_str().unwrap()]);
    p.send(&request(json!(1), "resources/list", json!({}))).await;
    let r = p.recv().await;
    assert_eq!(r["result"]["resources"][0]["name"], "note.md", "{r}");
    assert_eq!(r["result"]["resources"][0]["mimeType"], "text/markdown");
    p.send(&request(json!(2), "tools/call", json!({"name": "read_file", "arguments": {"path": "note.md"}}))).await;
    assert_eq!(p.recv().await["result"]["content"][0]["text"], "# Note\n");
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn a_three_round_input_required_flow() {
    let mut p = StdioChild::spawn(&[]);
    let caps = json!({"elicitation": {}});
    let call = |id: i64, extra: Value| {
        let mut params = json!({"name": "test_input_required_result_multi_round", "_meta": meta_with(caps.clone())});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    p.send(&call(1, json!({}))).await;
    let r1 = p.recv().await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let key1 = r1["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    p.send(&call(
        2,
        json!({"inputResponses": {key1: {"action": "accept", "content": {"name": "Alice"}}}, "requestState": r1["result"]["requestState"]}),
    ))
    .await;
    let r2 = p.recv().await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert_ne!(r2["result"]["requestState"], r1["result"]["requestState"]);
    let key2 = r2["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    p.send(&call(
        3,
        json!({"inputResponses": {key2: {"action": "accept", "content": {"color": "blue"}}}, "requestState": r2["result"]["requestState"]}),
    ))
    .await;
    let r3 = p.recv().await;
    assert_eq!(r3["result"]["resultType"], "complete", "{r3}");
    assert_eq!(r3["result"]["content"][0]["text"], "Alice likes blue");
    assert!(p.close().await.success());
}

/// A handler that panics is answered with -32603 on stdio too (it was never
/// answered), and the connection goes on.
#[actix_rt::test]
async fn a_panicking_handler_is_answered_on_stdio() {
    let mut c = StdioChild::spawn(&[]);
    c.send(&request(json!(1), "tools/call", json!({"name": "panic", "arguments": {}}))).await;
    let r = c.recv().await;
    assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(1), json!(-32603)), "{r}");
    c.send(&request(json!(2), "tools/call", json!({"name": "echo", "arguments": {"text": "after"}}))).await;
    let r = c.recv().await;
    assert_eq!(r["result"]["content"][0]["text"], "after", "{r}");
}

/// Finding 6: at `stdio.max_in_flight` the server reads no further input
/// until a request ends (back-pressure): with two places, an `echo` sent
/// after three sleeps waits for two of them, and every request is answered.
#[actix_rt::test]
async fn the_in_flight_cap_holds_input_back_and_drops_nothing() {
    let config = ConfigFile::new("cap", "[stdio]\nmax_in_flight = 2\n");
    let mut c = StdioChild::spawn(&["--config", config.path()]);
    for id in 1..=3 {
        c.send(&request(json!(id), "tools/call", json!({"name": "sleep", "arguments": {"ms": 300}}))).await;
    }
    c.send(&request(json!(4), "tools/call", json!({"name": "echo", "arguments": {"text": "late"}}))).await;
    let mut order = Vec::new();
    while order.len() < 4 {
        let r = c.recv().await;
        if let Some(id) = r["id"].as_i64() {
            assert!(r.get("result").is_some(), "{r}");
            order.push(id);
        }
    }
    let pos = |id: i64| order.iter().position(|&x| x == id).unwrap();
    assert!(pos(4) > pos(1) && pos(4) > pos(2), "echo ran only after two sleeps ended: {order:?}");
}
