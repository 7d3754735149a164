//! The client against this project's own server, over real loopback HTTP
//! and a real child process: both eras, every method, input rounds, a
//! legacy session's server requests, listen streams, the actor and the
//! command line.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::{Call, Client, ClientError, ClientOptions, RequestOptions, SubscriptionFilter};
use actix_mcp::protocol::model::completion::CompletionRef;
use actix_mcp::protocol::ProtocolVersion;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};

fn text_of(r: &actix_mcp::protocol::model::tools::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap().to_string()
}

/// Every method a server offers, through `client` (either era).
async fn every_method(client: &Client) {
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    let echoed = client.call_tool("echo", json!({"text": "héllo"})).await.unwrap();
    assert!(text_of(&echoed).contains("héllo"));
    let typed: String = client.call("echo", json!({"text": "typed"})).await.unwrap();
    assert_eq!(typed, "typed");
    match client.call_tool("test_error_handling", json!({})).await {
        Err(ClientError::Tool(r)) => assert_eq!(r.is_error, Some(true)),
        other => panic!("a tool error, not {other:?}"),
    }
    match client.call_tool("no_such_tool", json!({})).await {
        Err(e @ ClientError::Protocol(_)) => assert_eq!(e.code(), Some(-32602), "{e}"),
        other => panic!("a protocol error, not {other:?}"),
    }
    let resources = client.list_resources().await.unwrap();
    let first = &resources.first().expect("resources").uri;
    let contents = client.read_resource(first).await.unwrap();
    assert_eq!(contents[0].uri(), first);
    assert!(!client.list_resource_templates().await.unwrap().is_empty());
    let prompts = client.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "test_simple_prompt"));
    let prompt = client.get_prompt("test_prompt_with_arguments", json!({"arg1": "a", "arg2": "b"})).await.unwrap();
    assert!(!prompt.messages.is_empty());
    let prompt = CompletionRef::Prompt { name: "test_prompt_with_arguments".into() };
    let done = client.complete(prompt, "arg1", "").await.unwrap();
    let _ = done.values;
    // Progress, to the request's own callback.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let ropts = RequestOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
    client.call_tool_with("test_tool_with_progress", json!({}), ropts).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![0.0, 50.0, 100.0]);
}

#[actix_rt::test]
async fn stateless_http_every_method_and_input_rounds() {
    let server = TestServer::everything();
    let client = Client::connect(&server.url, answering()).await.unwrap();
    let info = client.server();
    assert!(info.stateless);
    assert_eq!(info.version, "2026-07-28");
    assert_eq!(info.name(), Some("actix-mcp"));
    assert!(info.has_extension("io.modelcontextprotocol/tasks"));
    every_method(&client).await;
    // Input rounds: one, several at once, and several in a row.
    let r = client.call_tool("test_input_required_result_elicitation", json!({})).await.unwrap();
    assert!(text_of(&r).contains("Ada"), "{}", text_of(&r));
    let r = client.call_tool("test_input_required_result_multiple_inputs", json!({})).await.unwrap();
    assert!(text_of(&r).contains("Paris Ada (1 root(s))"), "{}", text_of(&r));
    client.call_tool("test_input_required_result_multi_round", json!({})).await.unwrap();
    // Without handlers the client declares no capability, and the server
    // says which one it needs.
    let bare = Client::connect(&server.url, ClientOptions::new("bare", "1")).await.unwrap();
    let err = bare.call_tool("test_input_required_result_elicitation", json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32021), "{err}");
    server.stop().await;
}

#[actix_rt::test]
async fn a_limit_on_rounds_and_on_time() {
    let server = TestServer::everything();
    let one_round = answering().max_input_rounds(1);
    let client = Client::connect(&server.url, one_round).await.unwrap();
    let err = client.call_tool("test_input_required_result_multi_round", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("after 1 rounds"), "{err}");
    let ropts = RequestOptions::new().timeout(Duration::from_millis(200));
    let err = client.call_tool_with("sleep", json!({"ms": 5000}), ropts).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout(_)), "{err}");
    server.stop().await;
}

#[actix_rt::test]
async fn legacy_http_session_answers_server_requests() {
    let server = TestServer::everything();
    let options = answering().pin(ProtocolVersion::V2025_11_25);
    let client = Client::connect(&server.url, options).await.unwrap();
    let info = client.server();
    assert!(!info.stateless);
    assert_eq!(info.version, "2025-11-25");
    every_method(&client).await;
    // The server asks inside the call; the handlers answer in the session.
    let r = client.call_tool("test_elicitation", json!({"message": "name?"})).await.unwrap();
    assert!(text_of(&r).contains("accept"), "{}", text_of(&r));
    let r = client.call_tool("test_sampling", json!({"prompt": "capital?"})).await.unwrap();
    assert!(text_of(&r).contains("Paris"), "{}", text_of(&r));
    client.close().await;
    server.stop().await;
}

#[actix_rt::test]
async fn listen_streams_in_both_eras() {
    let server = TestServer::everything();
    for options in [answering(), answering().pin(ProtocolVersion::V2025_11_25)] {
        let client = Client::connect(&server.url, options).await.unwrap();
        let filter = SubscriptionFilter { tools_list_changed: true, ..Default::default() };
        let mut stream = client.listen(filter).await.unwrap();
        assert!(stream.honored().tools_list_changed);
        client.call_tool("test_trigger_tool_change", json!({})).await.unwrap();
        let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("a notification");
        assert_eq!(n.unwrap().method, "notifications/tools/list_changed");
        drop(stream);
        client.close().await;
    }
    server.stop().await;
}

#[actix_rt::test]
async fn the_connection_is_an_actor() {
    let server = TestServer::everything();
    let addr = Client::connect(&server.url, answering()).await.unwrap().start();
    let recipient = addr.clone().recipient::<Call>();
    let r = recipient.send(Call::new("tools/call", json!({"name": "echo", "arguments": {"text": "via actor"}}))).await;
    assert_eq!(r.unwrap().unwrap()["content"][0]["text"], "via actor");
    let err = addr.send(Call::new("no/such", json!({}))).await.unwrap().unwrap_err();
    assert_eq!(err.code(), Some(-32601), "{err}");
    server.stop().await;
}

#[actix_rt::test]
async fn stdio_child_in_both_eras() {
    let bin = binary();
    for pin in [None, Some(ProtocolVersion::V2025_11_25)] {
        let mut command = tokio::process::Command::new(&bin);
        command.args(["stdio", "--catalog", "everything"]).stderr(std::process::Stdio::null());
        let options = match pin {
            Some(v) => answering().pin(v),
            None => answering(),
        };
        let client = Client::spawn(command, options).await.unwrap();
        assert_eq!(client.server().stateless, pin.is_none());
        every_method(&client).await;
        let r = client.call_tool("test_input_required_result_elicitation", json!({})).await;
        match pin {
            None => assert!(text_of(&r.unwrap()).contains("Ada")),
            // Not offered to a legacy session: the server refuses it there.
            Some(_) => drop(r),
        }
        let filter = SubscriptionFilter { prompts_list_changed: true, ..Default::default() };
        let mut stream = client.listen(filter).await.unwrap();
        client.call_tool("test_trigger_prompt_change", json!({})).await.unwrap();
        let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("a notification");
        assert_eq!(n.unwrap().method, "notifications/prompts/list_changed");
        client.close().await;
        let err = client.call_tool("echo", json!({"text": "x"})).await.unwrap_err();
        assert!(matches!(err, ClientError::Transport(_)), "{err}");
    }
}

#[actix_rt::test]
async fn a_legacy_only_server_is_reached_by_falling_back() {
    let config = ConfigFile::new("client-legacy-only", "[server]\nversions = [\"2025-11-25\"]\n");
    let mut child = HttpChild::spawn(&["--config", config.path(), "--catalog", "everything"]).await;
    // A stateless request is told the versions served, so a client knows to fall back.
    let r = post(&child.url, &request(json!(1), "server/discover", json!({}))).await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.response()["error"]["code"], -32022);
    assert_eq!(r.response()["error"]["data"]["supported"], json!(["2025-11-25"]));
    let client = Client::connect(&child.url, answering()).await.unwrap();
    assert!(!client.server().stateless);
    assert_eq!(client.server().version, "2025-11-25");
    every_method(&client).await;
    client.close().await;
    child.stderr_until("legacy session opened").await;
    // Pinned to the stateless era, the client says why it cannot connect.
    let pinned = Client::connect(&child.url, answering().pin(ProtocolVersion::V2026_07_28)).await;
    assert!(matches!(&pinned, Err(ClientError::Protocol(e)) if e.code.0 == -32022), "{:?}", pinned.err());
    let _ = child.child.kill().await;
}

#[actix_rt::test]
async fn the_command_line_prints_json() {
    let server_child = HttpChild::spawn(&["--catalog", "everything"]).await;
    let run = |args: &[&str]| {
        let out = std::process::Command::new(binary()).arg("client").args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let url = server_child.url.as_str();
    let (ok, out, err) = run(&[url, "call", "echo", r#"{"text":"cli"}"#]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["content"][0]["text"], "cli");
    let (ok, out, _) = run(&[url, "--protocol-version", "2025-11-25", "discover"]);
    assert!(ok);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["protocolVersion"], "2025-11-25");
    let (ok, out, _) = run(&[url, "tools"]);
    assert!(ok);
    assert!(serde_json::from_str::<Value>(&out).unwrap()["tools"].as_array().unwrap().len() > 10);
    let (ok, _, err) = run(&[url, "call", "test_error_handling"]);
    assert!(!ok);
    assert!(err.contains("The tool reported an error"), "{err}");
    let (ok, _, err) = run(&[url, "call", "echo", "[1]"]);
    assert!(!ok);
    assert!(err.contains("must be a JSON object"), "{err}");
    // listen prints each notification as a line, and stops after --count.
    let mut listen = std::process::Command::new(binary())
        .args(["client", url, "listen", "--resource", "test://static-text", "--count", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    // Updates until one reaches the stream (it may not be open yet).
    while listen.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "listen printed no notification");
        let (ok, _, err) = run(&[url, "call", "test_trigger_resource_update", r#"{"uri":"test://static-text"}"#]);
        assert!(ok, "{err}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let out = listen.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["method"], "notifications/resources/updated");
    assert_eq!(line["params"]["uri"], "test://static-text");
    let stdio = format!("{} stdio --catalog everything 2>/dev/null", binary().display());
    let (ok, out, err) = run(&["--stdio", &stdio, "read", "test://static-text"]);
    assert!(ok, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["contents"][0]["uri"], "test://static-text");
}

#[actix_rt::test]
async fn tasks_are_followed_to_their_end() {
    use actix_mcp::client::Started;
    use actix_mcp::protocol::tasks::TaskStatus;
    let server = TestServer::everything();
    let client = Client::connect(&server.url, answering().tasks()).await.unwrap();
    // A question inside the task, answered through tasks/update.
    let r = client.call_tool("confirm_delete", json!({"filename": "a.txt"})).await.unwrap();
    assert!(text_of(&r).contains("a.txt"), "{}", text_of(&r));
    // A round of the call first, then the task.
    let r = client.call_tool("test_tool_with_task", json!({})).await.unwrap();
    assert!(text_of(&r).contains("Ada"), "{}", text_of(&r));
    // A failed task is the error it failed with.
    let err = client.call_tool("protocol_error_job", json!({})).await.unwrap_err();
    assert!(matches!(err, ClientError::Protocol(_)), "{err}");
    // One step at a time: the task, its notifications on a listen stream, cancel.
    let params = json!({"name": "slow_compute", "arguments": {"seconds": 30}});
    let Started::Task(task) = client.request_task("tools/call", params).await.unwrap() else {
        panic!("slow_compute becomes a task")
    };
    let filter = SubscriptionFilter { task_ids: vec![task.task_id.clone()], ..Default::default() };
    let mut stream = client.listen(filter).await.unwrap();
    client.cancel_task(&task.task_id).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("a task notification").unwrap();
    assert_eq!(n.method, "notifications/tasks");
    assert_eq!(n.params["taskId"], json!(task.task_id));
    let got = client.get_task(&task.task_id).await.unwrap();
    assert_eq!(got.task.status, TaskStatus::Cancelled);
    // Dropping the follower of a task cancels the task.
    let params = json!({"name": "slow_compute", "arguments": {"seconds": 30}});
    let Started::Task(task) = client.request_task("tools/call", params).await.unwrap() else {
        panic!("slow_compute becomes a task")
    };
    let id = task.task_id.clone();
    assert!(tokio::time::timeout(Duration::from_millis(300), client.follow_task(task)).await.is_err());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while client.get_task(&id).await.unwrap().task.status != TaskStatus::Cancelled {
        assert!(std::time::Instant::now() < deadline, "the dropped follower's task was not cancelled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await;
}

#[actix_rt::test]
async fn lists_are_cached_for_their_ttl_until_they_change() {
    let server = TestServer::everything_with(|c| c.cache.list_ttl_ms = 60_000);
    let client = Client::connect(&server.url, answering().cache_lists()).await.unwrap();
    let has_dynamic =
        |tools: &[actix_mcp::protocol::model::tools::Tool]| tools.iter().any(|t| t.name == "test_dynamic_tool");
    assert!(!has_dynamic(&client.list_tools().await.unwrap()));
    // Changed behind the client's back: the cached list is what it sees.
    client.call_tool("test_trigger_tool_change", json!({})).await.unwrap();
    assert!(!has_dynamic(&client.list_tools().await.unwrap()), "served from the cache");
    // A list_changed on a listen stream makes it ask again.
    let filter = SubscriptionFilter { tools_list_changed: true, ..Default::default() };
    let mut stream = client.listen(filter).await.unwrap();
    client.call_tool("test_trigger_tool_change", json!({})).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("a notification").unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    // Toggled twice: removed again, and the fresh list says so.
    assert!(!has_dynamic(&client.list_tools().await.unwrap()));
    client.call_tool("test_trigger_tool_change", json!({})).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("a notification").unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    assert!(has_dynamic(&client.list_tools().await.unwrap()), "asked again after the change");
    // Without the option, every call asks.
    let plain = Client::connect(&server.url, answering()).await.unwrap();
    assert!(has_dynamic(&plain.list_tools().await.unwrap()));
    server.stop().await;
}
