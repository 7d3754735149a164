//! The Tasks extension over real HTTP: the lifecycle of each kind of tool
//! (optional, required, ending in a result, a tool error, a protocol error,
//! a panic), input required → partial update → completed, cancellation of
//! a running and of a finished task, expiry, the store's bound, the
//! capability gate and the routing header.

use crate::common;

use std::sync::Arc;

use actix_mcp::facts::clock::ManualClock;
use actix_mcp::prelude::*;
use common::*;
use serde_json::{json, Value};

fn call(id: i64, name: &str, args: Value) -> Value {
    with_tasks(id, "tools/call", json!({"name": name, "arguments": args}))
}

fn task_request(id: i64, method: &str, task: &str, extra: Value) -> Value {
    let mut params = json!({"taskId": task});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    with_tasks(id, method, params)
}

fn server_with(edit: impl FnOnce(&mut Config), clock: Option<Arc<ManualClock>>) -> TestServer {
    let mut config = test_config();
    edit(&mut config);
    let panics = Tool::no_args("panics", "Panics inside its task", |ctx| async move {
        ctx.begin_task().await;
        if ctx.in_task() {
            panic!("boom");
        }
        Ok("not a task")
    })
    .with_task_support(TaskSupport::Required);
    let quick = Tool::no_args("quick", "Answers at once", |_ctx| async { Ok("quick") })
        .with_task_support(TaskSupport::Required);
    let mut b = McpServer::builder(server_info!())
        .config(config)
        .catalog(Arc::new(actix_mcp::catalogs::everything::catalog()))
        .tool(panics)
        .tool(quick);
    if let Some(c) = clock {
        b = b.clock(c);
    }
    TestServer::serve(b.build().unwrap())
}

fn server() -> TestServer {
    server_with(|_| {}, None)
}

#[actix_rt::test]
async fn each_kind_of_tool_ends_as_the_extension_says() {
    let s = server();
    // Optional and fast: answered in the call.
    let r = post(&s.url, &call(1, "slow_compute", json!({"seconds": 0}))).await;
    assert_eq!(r.response()["result"]["resultType"], "complete", "{}", r.raw);
    // Optional and slow: a task that completes with the tool's result, its
    // progress recorded as the status message on the way.
    let id = new_task(&s.url, &call(2, "slow_compute", json!({"seconds": 1, "label": "a"}))).await;
    let working = task_get(&s.url, &id).await;
    assert_eq!(working["status"], "working");
    assert_eq!(working["resultType"], "complete");
    let done = until_status(&s.url, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "a: computed in 1 s");
    assert!(done["statusMessage"].as_str().unwrap().starts_with("a: step"), "{done}");
    // Required and instant: still a task, created already completed.
    let id = new_task(&s.url, &call(3, "quick", json!({}))).await;
    assert_eq!(task_get(&s.url, &id).await["result"]["content"][0]["text"], "quick");
    // A tool error: completed with isError.
    let id = new_task(&s.url, &call(4, "failing_job", json!({}))).await;
    assert_eq!(until_status(&s.url, &id, "completed").await["result"]["isError"], true);
    // A protocol error: failed with the error, no result.
    let id = new_task(&s.url, &call(5, "protocol_error_job", json!({}))).await;
    let failed = until_status(&s.url, &id, "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());
    // A panic: failed with -32603, and the server carries on.
    let id = new_task(&s.url, &call(6, "panics", json!({}))).await;
    assert_eq!(until_status(&s.url, &id, "failed").await["error"]["code"], -32603);
    assert_eq!(
        post(&s.url, &call(7, "greet", json!({"name": "x"}))).await.response()["result"]["content"][0]["text"],
        "Hello, x!"
    );
    s.stop().await;
}

#[actix_rt::test]
async fn input_required_then_a_partial_update_then_completed() {
    let s = server();
    let id = new_task(&s.url, &call(1, "multi_input", json!({}))).await;
    let waiting = until_status(&s.url, &id, "input_required").await;
    let mut keys: Vec<&String> = waiting["inputRequests"].as_object().unwrap().keys().collect();
    // In any order: with serde_json's `preserve_order` (the `policy` feature) objects keep theirs.
    keys.sort();
    assert_eq!(keys, ["confirm", "name"]);
    assert_eq!(waiting["inputRequests"]["name"]["method"], "elicitation/create");
    let answer =
        |k: &str| json!({"inputResponses": {k: {"action": "accept", "content": {"name": "Ada", "confirm": true}}}});
    let ack = post(&s.url, &task_request(2, "tasks/update", &id, answer("name"))).await;
    assert_eq!(ack.response()["result"]["resultType"], "complete", "{}", ack.raw);
    assert!(ack.response()["result"].get("status").is_none());
    // Only the unanswered key is left.
    let partial = task_get(&s.url, &id).await;
    assert_eq!(partial["status"], "input_required");
    assert_eq!(partial["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["confirm"]);
    // An answer to a key not outstanding is acknowledged and ignored.
    let stray = post(&s.url, &task_request(3, "tasks/update", &id, answer("nope"))).await;
    assert_eq!(stray.response()["result"]["resultType"], "complete");
    post(&s.url, &task_request(4, "tasks/update", &id, answer("confirm"))).await;
    let done = until_status(&s.url, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada answered; proceed: Some(Bool(true))");
    s.stop().await;
}

#[actix_rt::test]
async fn questions_before_the_task_are_rounds_of_the_call() {
    let s = server();
    let first = post(&s.url, &call(1, "test_tool_with_task", json!({}))).await;
    let result = &first.response()["result"];
    assert_eq!(result["resultType"], "input_required", "{}", first.raw);
    let mut retry = call(2, "test_tool_with_task", json!({}));
    retry["params"]["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    retry["params"]["requestState"] = result["requestState"].clone();
    let id = new_task(&s.url, &retry).await;
    assert_eq!(until_status(&s.url, &id, "completed").await["result"]["content"][0]["text"], "Hello, Alice!");
    s.stop().await;
}

#[actix_rt::test]
async fn cancelling_a_running_task_and_a_finished_one() {
    let s = server();
    let id = new_task(&s.url, &call(1, "slow_compute", json!({"seconds": 60}))).await;
    let ack = post(&s.url, &task_request(2, "tasks/cancel", &id, json!({}))).await;
    assert_eq!(ack.response()["result"]["resultType"], "complete", "{}", ack.raw);
    until_status(&s.url, &id, "cancelled").await;
    // A finished task: acknowledged the same way, and left as it was.
    let id = new_task(&s.url, &call(3, "quick", json!({}))).await;
    let ack = post(&s.url, &task_request(4, "tasks/cancel", &id, json!({}))).await;
    assert_eq!(ack.response()["result"]["resultType"], "complete");
    assert_eq!(task_get(&s.url, &id).await["status"], "completed");
    // A task waiting for input is cancelled at once.
    let id = new_task(&s.url, &call(5, "confirm_delete", json!({"filename": "a"}))).await;
    until_status(&s.url, &id, "input_required").await;
    post(&s.url, &task_request(6, "tasks/cancel", &id, json!({}))).await;
    assert_eq!(task_get(&s.url, &id).await["status"], "cancelled");
    s.stop().await;
}

#[actix_rt::test]
async fn tasks_expire_after_their_ttl_and_the_store_is_bounded() {
    let clock = Arc::new(ManualClock::at(1_700_000_000_000));
    let s = server_with(
        |c| {
            c.tasks.ttl_ms = 60_000;
            c.tasks.max_tasks = 2;
        },
        Some(clock.clone()),
    );
    let a = new_task(&s.url, &call(1, "quick", json!({}))).await;
    let t = task_get(&s.url, &a).await;
    assert_eq!((t["ttlMs"].as_u64(), t["createdAt"].as_str()), (Some(60_000), Some("2023-11-14T22:13:20.000Z")));
    new_task(&s.url, &call(2, "quick", json!({}))).await;
    // Full: a required task cannot be created (load, not a fault: 429,
    // -32000); an optional call is answered in it.
    let full = post(&s.url, &call(3, "quick", json!({}))).await;
    assert_eq!((full.status, full.error_code()), (429, Some(-32000)), "{}", full.raw);
    assert!(full.raw.contains("maximum of 2 tasks"), "{}", full.raw);
    // Past the ttl: gone (as unknown), and their places are free again.
    clock.advance(60_000);
    let gone = post(&s.url, &task_request(4, "tasks/get", &a, json!({}))).await;
    assert_eq!(gone.error_code(), Some(-32602), "{}", gone.raw);
    new_task(&s.url, &call(5, "quick", json!({}))).await;
    s.stop().await;
}

#[actix_rt::test]
async fn the_extension_is_negotiated_and_tasks_are_routed_by_id() {
    let s = server();
    // Advertised.
    let d = post(&s.url, &request(json!(1), "server/discover", json!({}))).await;
    assert_eq!(d.response()["result"]["capabilities"]["extensions"][TASKS_EXT], json!({}));
    // Without the extension: a required tool and tasks/* are -32021 naming it.
    let plain = |id: i64, name: &str| request(json!(id), "tools/call", json!({"name": name, "arguments": {}}));
    let r = post(&s.url, &plain(2, "quick")).await;
    assert_eq!(r.error_code(), Some(-32021), "{}", r.raw);
    assert_eq!(r.response()["error"]["data"]["requiredCapabilities"]["extensions"][TASKS_EXT], json!({}));
    let get_plain = request(json!(3), "tasks/get", json!({"taskId": "x"}));
    assert_eq!(post(&s.url, &get_plain).await.error_code(), Some(-32021));
    // An optional tool just answers.
    let r = post(&s.url, &plain(4, "slow_compute")).await;
    assert_eq!(r.response()["result"]["resultType"], "complete");
    // Mcp-Name must be the task id.
    let id = new_task(&s.url, &call(5, "quick", json!({}))).await;
    let body = task_request(6, "tasks/get", &id, json!({}));
    let r = post_with(&s.url, &body, |h| set(h, "Mcp-Name", "another-task")).await;
    assert_eq!(r.error_code(), Some(-32020), "{}", r.raw);
    // Unknown ids: -32602; ids are UUID v4 (122 random bits).
    let r = post(&s.url, &task_request(7, "tasks/get", "no-such-task", json!({}))).await;
    assert_eq!(r.error_code(), Some(-32602));
    // Ids are UUID v4 (122 random bits): 8-4-4-4-12 hex, version nibble 4,
    // variant bits 10.
    let parts: Vec<&str> = id.split('-').collect();
    assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{id}");
    assert!(parts[2].starts_with('4') && "89ab".contains(&parts[3][..1]), "{id}");
    // Disabled: not advertised, and tasks/* unknown.
    let off = server_with(|c| c.tasks.enabled = false, None);
    let d = post(&off.url, &request(json!(8), "server/discover", json!({}))).await;
    let extensions = &d.response()["result"]["capabilities"]["extensions"];
    assert!(extensions.get("io.modelcontextprotocol/tasks").is_none(), "{}", d.raw);
    assert_eq!(post(&off.url, &task_request(9, "tasks/get", "x", json!({}))).await.error_code(), Some(-32601));
    s.stop().await;
    off.stop().await;
}

#[actix_rt::test]
async fn status_changes_reach_listen_streams_that_asked_for_the_task() {
    let s = server();
    let id = new_task(&s.url, &call(1, "confirm_delete", json!({"filename": "f"}))).await;
    let listen = |caps: Value| {
        request(
            json!("l1"),
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id.clone()], "toolsListChanged": true}, "_meta": meta_with(caps)}),
        )
    };
    // Without the extension: -32021.
    let refused = post(&s.url, &listen(json!({}))).await;
    assert_eq!(refused.error_code(), Some(-32021), "{}", refused.raw);
    let mut stream = SseReader::open(&s.url, &listen(json!({"extensions": {TASKS_EXT: {}}}))).await;
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "{ack}");
    // The task waits for input (it may have got there before the stream
    // opened), then is answered: the stream sees it work and complete.
    until_status(&s.url, &id, "input_required").await;
    let answer = json!({"inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    post(&s.url, &task_request(2, "tasks/update", &id, answer)).await;
    let mut seen = Vec::new();
    while seen.last().map(|n: &Value| n["params"]["status"] != "completed").unwrap_or(true) {
        let n = stream.next().await.expect("a notification");
        assert_eq!(n["method"], "notifications/tasks", "only task notifications here: {n}");
        assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "l1");
        assert_eq!(n["params"]["taskId"], id.as_str());
        seen.push(n);
    }
    // The last one is the whole task, as tasks/get shows it.
    let last = &seen.last().unwrap()["params"];
    let got = task_get(&s.url, &id).await;
    for key in ["status", "result", "createdAt", "lastUpdatedAt", "ttlMs"] {
        assert_eq!(last[key], got[key], "{key}");
    }
    assert_eq!(last["result"]["content"][0]["text"], "Deleted f");
    s.stop().await;
}

#[actix_rt::test]
async fn nginx_routes_tasks_by_mcp_name_to_the_instance_holding_them() {
    let Some(_) = external("tasks::nginx_routes_tasks_by_mcp_name", &["nginx"]) else { return };
    let a = server_with(|c| c.tasks.id_prefix = "a".into(), None);
    let b = server_with(|c| c.tasks.id_prefix = "b".into(), None);
    let host = |u: &str| u.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let lb = common::nginx::Nginx::start_routing_tasks(&[("a", &host(&a.url)), ("b", &host(&b.url))]).await;
    // Calls go round robin: tasks are created on both instances.
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(new_task(&lb.url, &call(i, "quick", json!({}))).await);
    }
    assert!(ids.iter().any(|i| i.starts_with("a.")) && ids.iter().any(|i| i.starts_with("b.")), "{ids:?}");
    // Each tasks/get reaches the instance holding its task.
    for (i, id) in ids.iter().enumerate() {
        let r = post(&lb.url, &task_request(100 + i as i64, "tasks/get", id, json!({}))).await;
        assert_eq!(r.response()["result"]["status"], "completed", "{id}: {}", r.raw);
    }
    // Without routing, the other instance does not know the task.
    let elsewhere = if ids[0].starts_with("a.") { &b.url } else { &a.url };
    assert_eq!(post(elsewhere, &task_request(200, "tasks/get", &ids[0], json!({}))).await.error_code(), Some(-32602));
    drop(lb);
    a.stop().await;
    b.stop().await;
}
