//! The client against this project's own server, over real loopback HTTP
//! and a real child process: both eras, every method, input rounds, a
//! legacy session's server requests, listen streams, the actor and the
//! command line; against fake servers of the test's own, tools with
//! invalid annotations and refused tokens.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::auth::{Refusal, TokenProvider};
use actix_mcp::client::{Call, Client, ClientError, ClientOptions, RequestOptions, SubscriptionFilter};
use actix_mcp::protocol::model::completion::CompletionRef;
use actix_mcp::protocol::ProtocolVersion;
use common::*;
use futures::future::BoxFuture;
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

/// What a fake server answers one POST: the HTTP status, headers and the
/// JSON body.
type Answered = (u16, Vec<(&'static str, String)>, Value);

/// A stateless MCP server of the test's own on a loopback port, answering
/// each POST to `/mcp` with `answer(request, its Authorization header)`;
/// it keeps each request it received, with that header.
/// The requests a [`FakeServer`] received, each with its Authorization header.
type Received = Arc<Mutex<Vec<(Value, Option<String>)>>>;

struct FakeServer {
    url: String,
    received: Received,
    handle: actix_web::dev::ServerHandle,
}

impl FakeServer {
    fn start(answer: impl Fn(&Value, Option<&str>) -> Answered + Send + Sync + 'static) -> Self {
        use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
        let received: Received = Arc::default();
        let answer = Arc::new(answer);
        let kept = received.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = HttpServer::new(move || {
            let (kept, answer) = (kept.clone(), answer.clone());
            App::new().route(
                "/mcp",
                web::post().to(move |req: HttpRequest, body: web::Bytes| {
                    let (kept, answer) = (kept.clone(), answer.clone());
                    async move {
                        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let auth = req.headers().get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
                        kept.lock().unwrap().push((request.clone(), auth.clone()));
                        let (status, headers, body) = (*answer)(&request, auth.as_deref());
                        let mut reply = HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap());
                        for header in headers {
                            reply.insert_header(header);
                        }
                        reply.content_type("application/json").body(body.to_string())
                    }
                }),
            )
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        FakeServer { url, received, handle }
    }

    /// The requests received so far, with their Authorization header.
    fn received(&self) -> Vec<(Value, Option<String>)> {
        self.received.lock().unwrap().clone()
    }

    async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// A whole `server/discover` answer, as the specification requires one.
fn discovered(request: &Value) -> Answered {
    let result = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
        "ttlMs": 0, "cacheScope": "public"});
    (200, vec![], json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

#[actix_rt::test]
async fn a_tool_whose_annotations_are_invalid_is_left_out_of_list_tools() {
    let tool = |name: &str, properties: Value| json!({"name": name, "inputSchema": {"type": "object", "properties": properties}});
    let first_page = vec![
        json!({"name": "plain", "inputSchema": {"type": "object"}}),
        tool("on_a_number", json!({"n": {"type": "number", "x-mcp-header": "N"}})),
        tool(
            "good",
            json!({"region": {"type": "string", "x-mcp-header": "Region"},
                   "n": {"type": "integer", "x-mcp-header": "N"},
                   "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}),
        ),
        tool("not_a_token", json!({"a": {"type": "string", "x-mcp-header": "A B"}})),
        tool("empty_name", json!({"a": {"type": "string", "x-mcp-header": ""}})),
        tool("not_a_string", json!({"a": {"type": "string", "x-mcp-header": 7}})),
        tool(
            "twice",
            json!({"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "region"}}),
        ),
    ];
    // The second page, reached with the first page's cursor.
    let second_page = vec![
        tool(
            "nested_good",
            json!({"opts": {"type": "object", "properties": {"depth": {"type": "integer", "x-mcp-header": "Depth"}}}}),
        ),
        tool("in_items", json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}})),
        tool("in_any_of", json!({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}})),
        json!({"name": "in_defs", "inputSchema": {"type": "object",
            "$defs": {"r": {"type": "string", "x-mcp-header": "R"}}, "properties": {"r": {"$ref": "#/$defs/r"}}}}),
        tool("on_an_object", json!({"o": {"type": "object", "x-mcp-header": "O"}})),
        tool("without_a_type", json!({"a": {"x-mcp-header": "A"}})),
        tool("not_ascii", json!({"a": {"type": "string", "x-mcp-header": "Régión"}})),
    ];
    let server = FakeServer::start(move |request, _| match request["method"].as_str() {
        Some("server/discover") => discovered(request),
        Some("tools/list") => {
            let (tools, next) = match request["params"]["cursor"].as_str() {
                Some("2") => (&second_page, None),
                _ => (&first_page, Some("2")),
            };
            let mut result = json!({"tools": tools, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"});
            if let Some(cursor) = next {
                result["nextCursor"] = json!(cursor);
            }
            (200, vec![], json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        }
        _ => {
            let error = json!({"code": -32601, "message": "Method not found"});
            (200, vec![], json!({"jsonrpc": "2.0", "id": request["id"], "error": error}))
        }
    });
    let options = ClientOptions::new("annotations-test", "1").timeout(Duration::from_secs(20));
    let client = Client::connect(&server.url, options).await.unwrap();
    let names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["plain", "good", "nested_good"], "the tools with invalid annotations are left out");
    let lists = server.received().iter().filter(|(r, _)| r["method"] == "tools/list").count();
    assert_eq!(lists, 2, "both pages were read");
    server.stop().await;
}

/// A token provider handing out `tokens` in turn: the first until the
/// server refuses it, then the next (the last one stays); it keeps each
/// refusal it is told of, and asks for another try when `retry`.
#[derive(Clone)]
struct Tokens {
    left: Arc<Mutex<Vec<&'static str>>>,
    told: Arc<Mutex<Vec<Refusal>>>,
    retry: bool,
}

impl Tokens {
    fn new(tokens: &[&'static str], retry: bool) -> Self {
        Tokens { left: Arc::new(Mutex::new(tokens.to_vec())), told: Arc::default(), retry }
    }

    fn told(&self) -> Vec<Refusal> {
        self.told.lock().unwrap().clone()
    }
}

impl TokenProvider for Tokens {
    fn token(&self) -> BoxFuture<'static, Result<Option<String>, ClientError>> {
        let token = self.left.lock().unwrap().first().map(|t| t.to_string());
        Box::pin(async move { Ok(token) })
    }

    fn refused(&self, refusal: Refusal) -> BoxFuture<'static, Result<bool, ClientError>> {
        self.told.lock().unwrap().push(refusal);
        let mut left = self.left.lock().unwrap();
        if left.len() > 1 {
            left.remove(0);
        }
        let retry = self.retry;
        Box::pin(async move { Ok(retry) })
    }
}

#[actix_rt::test]
async fn a_refused_token_is_told_to_the_provider_and_the_request_tried_once_more() {
    const INVALID: &str = r#"Bearer error="invalid_token", error_description="the token expired""#;
    const SCOPE: &str = r#"Bearer error="insufficient_scope", scope="notes:write""#;
    // The token the server takes, and how it refuses any other: the status
    // and its challenge.
    let takes: Arc<Mutex<(&'static str, u16, &'static str)>> = Arc::new(Mutex::new(("t2", 401, INVALID)));
    let taking = takes.clone();
    let server = FakeServer::start(move |request, auth| {
        let (token, status, challenge) = *taking.lock().unwrap();
        if auth != Some(format!("Bearer {token}").as_str()) {
            let error = json!({"code": -32001, "message": "unauthorized"});
            let refused = json!({"jsonrpc": "2.0", "id": request["id"], "error": error});
            return (status, vec![("WWW-Authenticate", challenge.to_owned())], refused);
        }
        match request["method"].as_str() {
            Some("server/discover") => discovered(request),
            _ => {
                let result = json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]});
                (200, vec![], json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            }
        }
    });
    let options = |provider: &Tokens| {
        ClientOptions::new("token-test", "1").timeout(Duration::from_secs(20)).token_provider(provider.clone())
    };
    let refusal =
        |status: u16, challenge: &str| Refusal { status, challenge: Some(challenge.into()), dpop_nonce: None };

    // The first token is refused at the handshake (401): the provider is
    // told, with the challenge, and the same request goes once more with
    // the token it has then.
    let provider = Tokens::new(&["t1", "t2", "t3"], true);
    let client = Client::connect(&server.url, options(&provider)).await.unwrap();
    assert_eq!(provider.told(), [refusal(401, INVALID)]);
    let seen = server.received();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!((seen[0].1.as_deref(), seen[1].1.as_deref()), (Some("Bearer t1"), Some("Bearer t2")));
    assert_eq!(seen[0].0, seen[1].0, "the same request, once more");

    // Later the server wants another token and refuses the call with 403:
    // told again, tried once more, answered.
    *takes.lock().unwrap() = ("t3", 403, SCOPE);
    let r = client.call_tool("echo", json!({"text": "x"})).await.unwrap();
    assert!(text_of(&r).contains("done"), "{}", text_of(&r));
    assert_eq!(provider.told(), [refusal(401, INVALID), refusal(403, SCOPE)]);
    let seen = server.received();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!((seen[2].1.as_deref(), seen[3].1.as_deref()), (Some("Bearer t2"), Some("Bearer t3")));
    assert_eq!(seen[2].0, seen[3].0, "the same call, once more");
    assert_eq!(seen[3].0["method"], "tools/call");

    // A provider that gives up: told, and the request is not sent again;
    // the caller gets the refusal, with its challenge.
    *takes.lock().unwrap() = ("t9", 401, INVALID);
    let before = server.received().len();
    let giving_up = Tokens::new(&["t1"], false);
    match Client::connect(&server.url, options(&giving_up)).await {
        Err(ClientError::Auth { status, challenge, .. }) => {
            assert_eq!((status, challenge.as_deref()), (401, Some(INVALID)))
        }
        other => panic!("the refusal, not {:?}", other.err()),
    }
    assert_eq!(giving_up.told(), [refusal(401, INVALID)]);
    assert_eq!(server.received().len() - before, 1, "not sent again");

    // A provider whose new tokens are refused too: each try after the
    // first follows a refusal the provider was told of, and the client
    // stops trying (the caller gets the refusal, not a timeout).
    let before = server.received().len();
    let stale = Tokens::new(&["t1", "t2", "t4"], true);
    match Client::connect(&server.url, options(&stale)).await {
        Err(ClientError::Auth { status, .. }) => assert_eq!(status, 401),
        other => panic!("the refusal, not {:?}", other.err()),
    }
    let (sent, told) = (server.received().len() - before, stale.told().len());
    assert!(told >= 1 && sent >= 2 && sent <= told + 1, "{sent} requests sent, {told} refusals told");
    server.stop().await;
}

/// Whether process `pid` is gone (or a zombie nobody waits for).
fn gone(pid: i32) -> Result<(), String> {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    match state.split_whitespace().nth(2) {
        None | Some("Z") => Ok(()),
        Some(s) => Err(format!("process {pid} in state {s}")),
    }
}

#[actix_rt::test]
async fn stopping_the_actor_closes_the_connection() {
    // A legacy session: the server sees it ended by the client.
    let mut child = HttpChild::spawn(&["--catalog", "everything", "--log-format", "json"]).await;
    let client = Client::connect(&child.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    let opened: Value = serde_json::from_str(&child.stderr_until("legacy session opened").await).unwrap();
    let session = opened["session"].as_str().expect("the session id").to_owned();
    let addr = client.start();
    let r = addr.send(Call::new("tools/call", json!({"name": "echo", "arguments": {"text": "via actor"}}))).await;
    assert_eq!(r.unwrap().unwrap()["content"][0]["text"], "via actor");
    // Its last address dropped, the actor stops.
    drop(addr);
    let ended: Value = serde_json::from_str(&child.stderr_until("legacy session ended by the client").await).unwrap();
    assert_eq!(ended["session"].as_str(), Some(session.as_str()), "{ended}");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}});
    assert_eq!(legacy_post(&child.url, Some(&session), &ping).await.status, 404, "the session is gone");
    let _ = child.child.kill().await;

    // A stdio child: it is gone.
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let line = format!(
        "echo $$ > {:?}; exec {:?} stdio --catalog everything 2>/dev/null",
        pidfile.display().to_string(),
        binary().display().to_string()
    );
    let client = Client::spawn_shell(&line, answering()).await.unwrap();
    // Written before the server started, so before it answered the handshake.
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let addr = client.start();
    let r = addr.send(Call::new("tools/call", json!({"name": "echo", "arguments": {"text": "over stdio"}}))).await;
    assert_eq!(r.unwrap().unwrap()["content"][0]["text"], "over stdio");
    assert!(gone(pid).is_err(), "the server runs while the actor does");
    drop(addr);
    wait_for("the stdio server ends with the actor", Duration::from_secs(10), Duration::from_millis(50), async || {
        gone(pid)
    })
    .await;
}

/// One request a fake legacy server received: its HTTP method, its
/// `Mcp-Session-Id` header and, for a POST, its JSON-RPC method.
type Hit = (String, Option<String>, Option<String>);

/// The client guide: a legacy session sends "`DELETE` at
/// [`close`](Client::close)". A legacy server of the test's own hands out
/// a session id at `initialize`: every request after it carries the id,
/// nothing is deleted while the client is in use, and `close` sends one
/// `DELETE` with that id — the last request the server sees.
#[actix_rt::test]
async fn a_legacy_session_is_deleted_at_close() {
    use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
    const SESSION: &str = "session-4f2a";
    let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
    let kept = hits.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = HttpServer::new(move || {
        let kept = kept.clone();
        App::new().route(
            "/mcp",
            web::route().to(move |req: HttpRequest, body: web::Bytes| {
                let kept = kept.clone();
                async move {
                    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
                    let method = message["method"].as_str().map(str::to_owned);
                    kept.lock().unwrap().push((req.method().to_string(), session, method.clone()));
                    match (req.method().as_str(), method.as_deref()) {
                        ("POST", Some("initialize")) => {
                            let result = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                "serverInfo": {"name": "legacy-fake", "version": "1"}});
                            HttpResponse::Ok()
                                .insert_header(("Mcp-Session-Id", SESSION))
                                .json(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                        }
                        ("POST", _) if message.get("id").is_none() => HttpResponse::Accepted().finish(),
                        ("POST", _) => {
                            HttpResponse::Ok().json(json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}))
                        }
                        ("DELETE", _) => HttpResponse::Ok().finish(),
                        // No GET stream: the client goes on without one.
                        _ => HttpResponse::MethodNotAllowed().finish(),
                    }
                }
            }),
        )
    })
    .workers(1)
    .disable_signals()
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_rt::spawn(server);

    let options =
        ClientOptions::new("delete-test", "1").timeout(Duration::from_secs(20)).pin(ProtocolVersion::V2025_11_25);
    let client = Client::connect(&url, options).await.unwrap();
    assert!(!client.server().stateless);
    client.request("ping", json!({})).await.unwrap();
    let deletes = |hits: &[Hit]| hits.iter().filter(|(method, ..)| method == "DELETE").count();
    assert_eq!(deletes(&hits.lock().unwrap()), 0, "nothing deleted while the client is in use");
    client.close().await;
    let seen = hits.lock().unwrap().clone();
    let (first, rest) = seen.split_first().expect("the server was asked");
    assert_eq!(first, &("POST".to_owned(), None, Some("initialize".to_owned())), "{seen:?}");
    assert!(
        rest.iter().all(|(_, session, _)| session.as_deref() == Some(SESSION)),
        "each request in the session: {seen:?}"
    );
    assert!(rest.iter().any(|(_, _, method)| method.as_deref() == Some("ping")), "{seen:?}");
    assert_eq!(deletes(&seen), 1, "{seen:?}");
    assert_eq!(seen.last(), Some(&("DELETE".to_owned(), Some(SESSION.to_owned()), None)), "{seen:?}");
    handle.stop(false).await;
}
