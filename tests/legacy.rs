//! Dual-era: legacy clients (initialize + Mcp-Session-Id, 2025-11-25 and
//! earlier) on the same endpoint as stateless clients, over real loopback
//! HTTP and a real stdio child process. One tool implementation that elicits
//! serves both eras.

use crate::common;

use common::*;
use serde_json::{json, Value};

fn rpc(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn init_params(version: &str, caps: Value) -> Value {
    json!({"protocolVersion": version, "capabilities": caps, "clientInfo": {"name": "legacy-client", "version": "1.0"}})
}

async fn initialize(url: &str, version: &str, caps: Value) -> (String, Reply) {
    let r = legacy_post(url, None, &rpc(json!(0), "initialize", init_params(version, caps))).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
    legacy_post(url, Some(&sid), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    (sid, r)
}

#[actix_rt::test]
async fn initialize_negotiates_and_opens_a_session() {
    let srv = TestServer::everything();
    let (sid, r) = initialize(&srv.url, "2025-06-18", json!({})).await;
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{sid}");
    let res = &r.response()["result"];
    assert_eq!(res["protocolVersion"], "2025-06-18");
    assert_eq!(res["serverInfo"]["name"], "actix-mcp");
    assert_eq!(res["capabilities"]["resources"]["subscribe"], true);
    let (_, r) = initialize(&srv.url, "2024-11-05", json!({})).await;
    assert_eq!(r.response()["result"]["protocolVersion"], "2025-11-25", "unknown versions get the newest legacy one");

    let r = legacy_post(&srv.url, Some(&sid), &rpc(json!(1), "tools/list", json!({}))).await;
    let res = &r.response()["result"];
    assert!(res["tools"].as_array().unwrap().len() > 5);
    assert!(res.get("resultType").is_none() && res.get("ttlMs").is_none(), "legacy results carry no stateless fields");
    assert_eq!(
        legacy_post(&srv.url, Some(&sid), &rpc(json!(2), "ping", json!({}))).await.response()["result"],
        json!({})
    );
    let r = legacy_post(&srv.url, Some(&sid), &rpc(json!(3), "resources/read", json!({"uri": "test://nope"}))).await;
    assert_eq!(r.error_code(), Some(-32002), "legacy: resource not found is -32002: {}", r.raw);
    let r =
        legacy_post(&srv.url, Some(&sid), &rpc(json!(4), "subscriptions/listen", json!({"notifications": {}}))).await;
    assert_eq!(r.error_code(), Some(-32601));

    // Stateless clients are served alongside, with no session.
    let r = post(&srv.url, &request(json!(5), "tools/list", json!({}))).await;
    assert_eq!(r.response()["result"]["resultType"], "complete");
    assert!(r.headers.get("mcp-session-id").is_none());
    // An initialize carrying stateless _meta is a stateless request: removed method.
    let r = post(&srv.url, &request(json!(6), "initialize", json!({}))).await;
    assert_eq!((r.status, r.error_code()), (404, Some(-32601)));

    // DELETE ends the session; its id then answers 404.
    let resp = client().delete(&srv.url).header("Mcp-Session-Id", &sid).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let r = legacy_post(&srv.url, Some(&sid), &rpc(json!(7), "ping", json!({}))).await;
    assert_eq!(r.status, 404);
    let r = legacy_post(&srv.url, Some("not-a-session"), &rpc(json!(8), "ping", json!({}))).await;
    assert_eq!(r.status, 404);
    srv.stop().await;
}

#[actix_rt::test]
async fn one_eliciting_tool_serves_both_eras() {
    let srv = TestServer::everything();
    // Legacy: the question arrives as a server-to-client request on the POST's
    // SSE stream; the client POSTs its answer; the result follows.
    let (sid, _) = initialize(&srv.url, "2025-11-25", json!({"elicitation": {}})).await;
    let call =
        rpc(json!(10), "tools/call", json!({"name": "test_elicitation", "arguments": {"message": "Who are you?"}}));
    let mut stream = SseReader::open_with(&srv.url, &call, &[("Mcp-Session-Id", &sid)]).await;
    let ask = stream.next().await.unwrap();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Who are you?");
    let answer =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"username": "bob"}}});
    assert_eq!(legacy_post(&srv.url, Some(&sid), &answer).await.status, 202);
    let done = stream.next().await.unwrap();
    assert_eq!(done["id"], 10);
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("accept") && text.contains("bob"), "{text}");
    assert!(done["result"].get("resultType").is_none());

    // Stateless: the same tool answers with an InputRequiredResult.
    let caps = json!({"elicitation": {}});
    let mut body =
        request(json!(11), "tools/call", json!({"name": "test_elicitation", "arguments": {"message": "Who are you?"}}));
    body["params"]["_meta"] = meta_with(caps.clone());
    let r1 = post(&srv.url, &body).await;
    let res = &r1.response()["result"];
    assert_eq!(res["resultType"], "input_required", "{}", r1.raw);
    body["params"]["inputResponses"] = json!({"elicitation": {"action": "accept", "content": {"username": "bob"}}});
    body["params"]["requestState"] = res["requestState"].clone();
    let r2 = post(&srv.url, &body).await;
    assert!(r2.response()["result"]["content"][0]["text"].as_str().unwrap().contains("bob"), "{}", r2.raw);

    // Legacy without the capability: refused with an error, not a request.
    let (plain, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    let r = legacy_post(&srv.url, Some(&plain), &call).await;
    assert!(r.response().get("error").is_some(), "{}", r.raw);
    srv.stop().await;
}

#[actix_rt::test]
async fn set_level_subscribe_and_the_get_stream() {
    let srv = TestServer::everything();
    let (sid, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    assert_eq!(
        legacy_post(&srv.url, Some(&sid), &rpc(json!(1), "logging/setLevel", json!({"level": "debug"})))
            .await
            .response()["result"],
        json!({})
    );
    let r = legacy_post(
        &srv.url,
        Some(&sid),
        &rpc(json!(2), "tools/call", json!({"name": "test_tool_with_logging", "arguments": {}})),
    )
    .await;
    let logs = r.messages.iter().filter(|m| m["method"] == "notifications/message").count();
    assert_eq!(logs, 3, "{}", r.raw);

    // GET opens the session's notification stream.
    let resp = reqwest::Client::new()
        .get(&srv.url)
        .header("Mcp-Session-Id", &sid)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let mut stream = SseReader::from_response(resp);
    let sub = rpc(json!(3), "resources/subscribe", json!({"uri": "test://watched-resource"}));
    assert_eq!(legacy_post(&srv.url, Some(&sid), &sub).await.response()["result"], json!({}));
    srv.server.notify_resource_updated("test://watched-resource");
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated");
    assert_eq!(m["params"]["uri"], "test://watched-resource");
    assert!(m["params"].get("_meta").is_none(), "legacy notifications are untagged");
    let unsub = rpc(json!(4), "resources/unsubscribe", json!({"uri": "test://watched-resource"}));
    assert_eq!(legacy_post(&srv.url, Some(&sid), &unsub).await.response()["result"], json!({}));
    srv.server.notify_resource_updated("test://watched-resource");
    srv.server
        .catalog()
        .add_tool(actix_mcp::catalog::Tool::raw("late", "d", json!({"type": "object"}), |_, _| async {
            Ok(mcp_protocol::model::tools::CallToolResult::text("x"))
        }))
        .unwrap();
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/tools/list_changed", "the unsubscribed update never came: {m}");
    srv.stop().await;
}

#[actix_rt::test]
async fn sessions_are_capped_and_expire() {
    let srv = TestServer::everything_with(|c| {
        c.legacy.max_sessions = 1;
        c.legacy.idle_timeout_ms = 300;
    });
    let (sid, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    let r = legacy_post(&srv.url, None, &rpc(json!(1), "initialize", init_params("2025-11-25", json!({})))).await;
    assert_eq!(r.status, 503, "{}", r.raw);
    // Idle past the timeout: the session is gone and its slot is free again.
    let url = srv.url.clone();
    let mut expired = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        if srv.server.session_count().await == 0 {
            expired = true;
            break;
        }
    }
    assert!(expired, "the reaper removes idle sessions");
    assert_eq!(legacy_post(&url, Some(&sid), &rpc(json!(2), "ping", json!({}))).await.status, 404);
    let (_, r) = initialize(&url, "2025-11-25", json!({})).await;
    assert_eq!(r.status, 200);
    srv.stop().await;
}

/// Finding 12: a table filled by `initialize` calls that are never used
/// again locks nobody out for long: once the oldest session has been unused
/// for `legacy.evict_idle_ms`, a new client takes its place; a session in
/// use keeps its place.
#[actix_rt::test]
async fn a_full_table_evicts_the_session_unused_the_longest() {
    let srv = TestServer::everything_with(|c| {
        c.legacy.max_sessions = 2;
        c.legacy.evict_idle_ms = 400;
    });
    let (abandoned, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    let (active, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    let full = legacy_post(&srv.url, None, &rpc(json!(1), "initialize", init_params("2025-11-25", json!({})))).await;
    assert_eq!(full.status, 503, "nothing is evictable yet: {}", full.raw);
    // The active client keeps using its session; the abandoned one does not.
    for i in 0..6 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(legacy_post(&srv.url, Some(&active), &rpc(json!(10 + i), "ping", json!({}))).await.status, 200);
    }
    let (newcomer, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    assert_eq!(legacy_post(&srv.url, Some(&abandoned), &rpc(json!(2), "ping", json!({}))).await.status, 404);
    assert_eq!(legacy_post(&srv.url, Some(&active), &rpc(json!(3), "ping", json!({}))).await.status, 200);
    assert_eq!(legacy_post(&srv.url, Some(&newcomer), &rpc(json!(4), "ping", json!({}))).await.status, 200);
    srv.stop().await;
}

#[actix_rt::test]
async fn a_modern_only_server_names_its_versions() {
    let srv = TestServer::everything_with(|c| c.server.versions = vec!["2026-07-28".into()]);
    let r = legacy_post(&srv.url, None, &rpc(json!(1), "initialize", init_params("2025-11-25", json!({})))).await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.response()["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert!(r.response()["error"]["message"].as_str().unwrap().contains("2026-07-28"));
    assert!(r.headers.get("mcp-session-id").is_none());
    srv.stop().await;
}

#[actix_rt::test]
async fn legacy_and_modern_stdio_clients_against_the_binary() {
    // Legacy: initialize, then a tool that elicits: the request comes on
    // stdout, the answer goes on stdin.
    let mut legacy = StdioChild::spawn(&[]);
    legacy.send(&rpc(json!(1), "initialize", init_params("2025-11-25", json!({"elicitation": {}})))).await;
    let r = legacy.recv().await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    legacy.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    legacy
        .send(&rpc(json!(2), "tools/call", json!({"name": "test_elicitation", "arguments": {"message": "Name?"}})))
        .await;
    let ask = legacy.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    legacy
        .send(
            &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"username": "ann"}}}),
        )
        .await;
    let done = legacy.recv().await;
    assert_eq!(done["id"], 2);
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("ann"), "{done}");
    legacy.send(&rpc(json!(3), "ping", json!({}))).await;
    assert_eq!(legacy.recv().await["result"], json!({}));
    assert!(legacy.close().await.success());

    // Modern: the same tool answers with an InputRequiredResult.
    let mut modern = StdioChild::spawn(&[]);
    let mut body =
        request(json!(1), "tools/call", json!({"name": "test_elicitation", "arguments": {"message": "Name?"}}));
    body["params"]["_meta"] = meta_with(json!({"elicitation": {}}));
    modern.send(&body).await;
    let r = modern.recv().await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    body["id"] = json!(2);
    body["params"]["inputResponses"] = json!({"elicitation": {"action": "accept", "content": {"username": "ann"}}});
    body["params"]["requestState"] = r["result"]["requestState"].clone();
    modern.send(&body).await;
    let r = modern.recv().await;
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("ann"), "{r}");
    assert!(modern.close().await.success());
}

/// "actix-mcp also sends `X-Accel-Buffering: no` on every stream"
/// (scaling_out.rs: so that nginx passes it on unbuffered) — a legacy
/// session's streams, from the binary: its GET stream (which then delivers
/// an update), and a POST in it answered as a stream (log messages before
/// the result).
#[actix_rt::test]
async fn a_legacy_sessions_streams_tell_a_proxy_not_to_buffer_them() {
    let srv = HttpChild::spawn(&["--catalog", "everything"]).await;
    let (sid, _) = initialize(&srv.url, "2025-11-25", json!({})).await;
    let resp = client().get(&srv.url).header("Mcp-Session-Id", &sid).header("Accept", "text/event-stream");
    let resp = resp.send().await.unwrap();
    let accel = resp.headers().get("x-accel-buffering").map(|v| v.to_str().unwrap_or("?").to_owned());
    assert_eq!(accel.as_deref(), Some("no"), "the GET stream: {:?}", resp.headers());
    let mut stream = SseReader::from_response(resp);
    let sub = rpc(json!(1), "resources/subscribe", json!({"uri": "test://watched-resource"}));
    assert_eq!(legacy_post(&srv.url, Some(&sid), &sub).await.response()["result"], json!({}));
    let update = rpc(json!(2), "tools/call", json!({"name": "test_trigger_resource_update", "arguments": {}}));
    assert_eq!(legacy_post(&srv.url, Some(&sid), &update).await.status, 200);
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");

    let level = rpc(json!(3), "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(legacy_post(&srv.url, Some(&sid), &level).await.response()["result"], json!({}));
    let logging = rpc(json!(4), "tools/call", json!({"name": "test_tool_with_logging", "arguments": {}}));
    let r = legacy_post(&srv.url, Some(&sid), &logging).await;
    assert!(r.content_type.starts_with("text/event-stream"), "{}: {}", r.content_type, r.raw);
    let accel = r.headers.get("x-accel-buffering").map(|v| v.to_str().unwrap_or("?").to_owned());
    assert_eq!(accel.as_deref(), Some("no"), "the POST's stream: {:?}", r.headers);
    assert_eq!(r.messages.iter().filter(|m| m["method"] == "notifications/message").count(), 3, "{}", r.raw);
}
