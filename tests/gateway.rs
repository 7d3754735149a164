//! The gateway: the binary serving other MCP servers' items, here its own
//! `stdio --catalog everything` started as child processes (one configured
//! legacy-only with `[[upstreams]]` and no prefix, one stateless from
//! `--upstream NAME=COMMAND`), driven over real loopback HTTP by the client.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::{Client, ClientError, RequestOptions, SubscriptionFilter};
use actix_mcp::protocol::model::completion::CompletionRef;
use actix_mcp::protocol::ProtocolVersion;
use common::*;
use futures::StreamExt;
use serde_json::json;

/// The gateway, with a legacy-only upstream `ev` (no prefix, its URIs
/// under `ev+`, from the file) and a stateless one `two` (from the flag);
/// the legacy upstream's config path, which names its process.
async fn gateway(dir: &std::path::Path) -> (HttpChild, String) {
    let legacy = dir.join("legacy.toml");
    std::fs::write(&legacy, "[server]\nversions = [\"2025-11-25\"]\n").unwrap();
    let config = dir.join("gateway.toml");
    let bin = binary().display().to_string();
    let text = format!(
        "[gateway]\nrestart_initial_ms = 200\n\n[[upstreams]]\nname = \"ev\"\nprefix = \"\"\nuri_prefix = \"ev+\"\ncommand = {bin:?}\n\
         args = [\"stdio\", \"--catalog\", \"everything\", \"--log-level\", \"error\", \"--config\", {:?}]\n",
        legacy.display().to_string()
    );
    std::fs::write(&config, text).unwrap();
    let flag = format!("two={bin} stdio --catalog everything --log-level error");
    let gw = HttpChild::spawn(&["--config", config.to_str().unwrap(), "--upstream", &flag]).await;
    (gw, legacy.display().to_string())
}

#[actix_rt::test]
async fn upstream_items_are_served_and_follow_their_upstream_down_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, legacy) = gateway(dir.path()).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["echo", "two__echo"], true).await;

    // Calls reach each upstream under its served name; results, tool errors
    // and protocol errors come back as the upstream gave them.
    let a: String = client.call("echo", json!({"text": "to ev"})).await.unwrap();
    let b: String = client.call("two__echo", json!({"text": "to two"})).await.unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("to ev", "to two"));
    match client.call_tool("two__test_error_handling", json!({})).await {
        Err(ClientError::Tool(r)) => assert_eq!(r.is_error, Some(true)),
        other => panic!("the upstream's tool error, not {other:?}"),
    }
    // Progress flows down from the legacy upstream.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let ropts = RequestOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
    client.call_tool_with("test_tool_with_progress", json!({}), ropts).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![0.0, 50.0, 100.0]);
    // Prompts are prefixed like tools; resources keep their URIs, or take
    // the upstream's uri_prefix (both serve the same ones).
    let prompt = client.get_prompt("two__test_prompt_with_arguments", json!({"arg1": "a", "arg2": "b"})).await;
    assert!(!prompt.unwrap().messages.is_empty());
    assert!(client.list_prompts().await.unwrap().iter().any(|p| p.name == "test_simple_prompt"));
    let contents = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(contents[0].uri(), "test://static-text");
    let templated = client.read_resource("test://template/7/data").await.unwrap();
    assert_eq!(templated[0].uri(), "test://template/7/data");
    let prefixed = client.read_resource("ev+test://template/7/data").await.unwrap();
    assert_eq!(prefixed[0].uri(), "ev+test://template/7/data");
    assert!(serde_json::to_string(&prefixed).unwrap().contains("Data for ID: 7"));
    // Completion goes to the upstream that owns the prompt or template,
    // under its own name there (a prompt of each upstream, one template).
    for prompt in ["test_prompt_with_arguments", "two__test_prompt_with_arguments"] {
        let done = client.complete(CompletionRef::Prompt { name: prompt.into() }, "arg1", "tes").await.unwrap();
        assert_eq!(done.values, ["test", "testing", "tested"], "{prompt}");
    }
    for uri in ["test://template/{id}/data", "ev+test://template/{id}/data"] {
        let template = CompletionRef::Resource { uri: uri.into() };
        assert_eq!(client.complete(template, "id", "1").await.unwrap().values, ["1", "123"], "{uri}");
    }

    // The legacy upstream's process dies: its items leave (a listener hears
    // it), and come back when the gateway has started it again.
    let filter = SubscriptionFilter { tools_list_changed: true, ..Default::default() };
    let mut changes = client.listen(filter).await.unwrap();
    let killed = std::process::Command::new("pkill").args(["-f", &legacy]).status().unwrap();
    assert!(killed.success(), "the legacy upstream's process was found");
    let heard = tokio::time::timeout(Duration::from_secs(10), changes.next()).await.expect("a change within 10 s");
    assert_eq!(heard.unwrap().method, "notifications/tools/list_changed");
    until_tools(&client, &["two__echo"], true).await;
    until_tools(&client, &["echo"], true).await;
    let again: String = client.call("echo", json!({"text": "back"})).await.unwrap();
    assert_eq!(again, "back");
}

fn text_of(r: &actix_mcp::protocol::model::tools::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap().to_string()
}

#[actix_rt::test]
async fn input_the_legacy_upstream_asks_for_is_asked_of_the_caller_in_its_era() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = gateway(dir.path()).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&stateless, &["echo"], true).await;
    // A stateless caller: InputRequiredResult rounds, the upstream request
    // waiting in between; several callers at once.
    let calls = (0..4).map(|_| stateless.call_tool("test_input_required_result_multiple_inputs", json!({})));
    for r in futures::future::join_all(calls).await {
        let r = r.unwrap();
        assert!(text_of(&r).contains("Paris Ada (1 root(s))"), "{}", text_of(&r));
    }
    stateless.call_tool("test_input_required_result_multi_round", json!({})).await.unwrap();
    // A legacy caller is asked in its session.
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    assert!(!legacy.server().stateless);
    let r = legacy.call_tool("test_elicitation", json!({"message": "name?"})).await.unwrap();
    assert!(text_of(&r).contains("accept"), "{}", text_of(&r));
    // A caller without the capability is told which one it needs, in its
    // era's code, whatever code the legacy upstream used.
    let bare = Client::connect(&gw.url, actix_mcp::client::ClientOptions::new("bare", "1")).await.unwrap();
    let err = bare.call_tool("test_input_required_result_elicitation", json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32021), "{err}");
    let err = bare.call_tool("test_missing_capability", json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32021), "{err}");
}

#[actix_rt::test]
async fn an_upstream_that_cannot_start_is_retried_and_the_others_serve() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, "[status]\nenabled = true\n").unwrap();
    let gw = HttpChild::spawn(&[
        "--config",
        config.to_str().unwrap(),
        "--upstream",
        "broken=/nonexistent/program",
        "--upstream",
        &format!("ok={} stdio --catalog everything --log-level error", binary().display()),
    ])
    .await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["ok__echo"], true).await;
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name.starts_with("ok__")), "only the upstream that started serves");
    // With upstreams and no --catalog, nothing local is served.
    assert!(!tools.iter().any(|t| t.name == "echo"));
    // A required upstream that is down keeps the instance out of rotation,
    // and the status page says which, and how often it was tried.
    let http = reqwest::Client::new();
    let ready = http.get(gw.url.replace("/mcp", "/readyz")).send().await.unwrap();
    assert_eq!(ready.status().as_u16(), 503);
    let why: serde_json::Value = ready.json().await.unwrap();
    assert!(why["reasons"].to_string().contains("required upstream"), "{why}");
    // The broken upstream's first restart attempt (after restart_initial_ms),
    // as the status page counts it, once that attempt has failed too (the
    // page shows `starting` while it runs).
    let status_url = gw.url.replace("/mcp", "/status.json");
    let status: serde_json::Value = wait_for(
        "the status page counts a failed restart of the broken upstream",
        Duration::from_secs(20),
        Duration::from_millis(50),
        async || {
            let status: serde_json::Value = http.get(&status_url).send().await.unwrap().json().await.unwrap();
            let broken = status["upstreams"].as_array().and_then(|rows| rows.iter().find(|r| r["name"] == "broken"));
            let restarts = broken.and_then(|r| r["restarts"].as_u64());
            if restarts.is_some_and(|n| n >= 1) && broken.is_some_and(|r| r["state"] == "down") {
                Ok(status)
            } else {
                Err(status.to_string())
            }
        },
    )
    .await;
    let rows = status["upstreams"].as_array().expect("an upstreams row each").clone();
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).cloned().unwrap();
    assert_eq!(row("ok")["state"], "up", "{status}");
    assert!(row("ok")["items"].as_u64().unwrap() > 10, "{status}");
    assert_eq!(row("broken")["state"], "down", "{status}");
    assert!(row("broken")["restarts"].as_u64().unwrap() >= 1, "started again: {status}");
    assert!(row("broken")["detail"]["reason"].as_str().unwrap().contains("nonexistent"), "{status}");
    // Metrics per upstream: calls timed by upstream and method, restarts,
    // whether each is up.
    client.call_tool("ok__echo", json!({"text": "counted"})).await.unwrap();
    let metrics = http.get(gw.url.replace("/mcp", "/metrics")).send().await.unwrap().text().await.unwrap();
    let line = |needle: &str| {
        metrics.lines().find(|l| l.starts_with(needle) && l.contains("upstream=\"ok\"")).map(str::to_owned)
    };
    let calls = line("mcp_client_operation_duration_seconds_count").expect("calls of ok timed");
    assert!(calls.contains("mcp_method_name=\"tools/call\""), "{calls}");
    assert!(!calls.ends_with(" 0"), "{calls}");
    assert!(line("mcp_gateway_upstream_up").is_some_and(|l| l.ends_with(" 1")), "{metrics}");
    let broken = metrics.lines().find(|l| l.starts_with("mcp_gateway_upstream_restarts_total") && l.contains("broken"));
    assert!(broken.is_some_and(|l| !l.ends_with(" 0")), "{metrics}");
    // The status row counts the requests forwarded, and their mean latency.
    let status: serde_json::Value =
        http.get(gw.url.replace("/mcp", "/status.json")).send().await.unwrap().json().await.unwrap();
    let ok = status["upstreams"].as_array().unwrap().iter().find(|r| r["name"] == "ok").cloned().unwrap();
    assert_eq!((ok["calls"].as_u64(), ok["errors"].as_u64()), (Some(1), Some(0)), "{ok}");
    assert!(ok["mean_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{ok}");
    // The status page shows them (in a browser, where one runs).
    if external("gateway::the status page's upstreams", &["chromium"]).is_some() {
        let (dom, _) = chromium(&gw.url.replace("/mcp", "/status"), &["--dump-dom"]).await;
        assert!(dom.contains("<td>ok</td><td>up</td>"), "{dom}");
        assert!(dom.contains(r#"<tr class="bad"><td>broken</td><td>down</td>"#), "{dom}");
    }
}

/// The guide's commands (`$ ` lines of `_guide/gateway.rs`), run as written
/// with the binary first on `PATH` and port 8080 moved to a free one; each
/// `→ ` line must be in the output of the command before it (spaces aside,
/// since the client prints compact JSON when not on a terminal).
#[actix_rt::test]
async fn the_guide_runs_as_written() {
    let guide = include_str!("../actors/src/_guide/gateway.rs");
    let port = free_port().to_string();
    let bin_dir = binary().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let mut background = Vec::new();
    let mut last_output = String::new();
    let mut ran = 0;
    for line in guide.lines().filter_map(|l| l.strip_prefix("//! ")) {
        if let Some(expected) = line.strip_prefix("→ ") {
            assert!(squeeze(&last_output).contains(&squeeze(expected)), "{expected:?} in:\n{last_output}");
            continue;
        }
        let Some(command) = line.strip_prefix("$ ") else { continue };
        let command = command.replace("8080", &port);
        ran += 1;
        if let Some(command) = command.strip_suffix(" &") {
            let mut child = tokio::process::Command::new("bash");
            child.arg("-c").arg(format!("exec {command}")).env("PATH", &path).kill_on_drop(true);
            background.push(child.stderr(std::process::Stdio::null()).spawn().unwrap());
            // Serving once the upstream's tools are there.
            let url = format!("http://127.0.0.1:{port}/mcp");
            let client = wait_for(
                &format!("a client connects to the gateway the guide started ({command})"),
                Duration::from_secs(10),
                Duration::from_millis(100),
                async || Client::connect(&url, answering()).await.map_err(|e| e.to_string()),
            )
            .await;
            until_tools(&client, &["demo__echo"], true).await;
            continue;
        }
        let out =
            tokio::process::Command::new("bash").arg("-c").arg(&command).env("PATH", &path).output().await.unwrap();
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        last_output = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    assert_eq!(ran, 4, "the guide's four commands ran");
}

#[actix_rt::test]
async fn two_upstreams_serving_one_uri_is_a_start_up_error_naming_both() {
    let bin = binary().display().to_string();
    let up = |name: &str| format!("{name}={bin} stdio --catalog everything --log-level error");
    let mut gw = tokio::process::Command::new(binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--upstream", &up("one"), "--upstream", &up("two")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), gw.wait()).await.expect("it exits").unwrap();
    assert_eq!(status.code(), Some(2));
    let mut err = String::new();
    tokio::io::AsyncReadExt::read_to_string(gw.stderr.as_mut().unwrap(), &mut err).await.unwrap();
    let why = err.lines().find(|l| l.starts_with("actix-mcp: ")).unwrap_or_default();
    assert!(
        why.contains("served by upstreams one and two") || why.contains("served by upstreams two and one"),
        "{err}"
    );
    assert!(why.contains("test://") && why.contains("uri_prefix"), "{why}");
}

#[actix_rt::test]
async fn a_long_upstream_call_becomes_a_task_of_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, _) = gateway(dir.path()).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["sleep", "two__sleep"], true).await;
    // A caller that declares the Tasks extension: past tasks.task_after_ms
    // the call is a task here, the upstream call running on behind it.
    for tool in ["sleep", "two__sleep"] {
        let call = with_tasks(7, "tools/call", json!({"name": tool, "arguments": {"ms": 600}}));
        let id = new_task(&gw.url, &call).await;
        let done = until_status(&gw.url, &id, "completed").await;
        assert_eq!(done["result"]["isError"], serde_json::Value::Null, "{tool}: {done}");
        assert!(done["result"]["content"].to_string().contains("slept"), "{tool}: {done}");
    }
    // Without the extension the same call is answered in the call.
    let r: actix_mcp::protocol::model::tools::CallToolResult =
        client.call_tool("two__sleep", json!({"ms": 200})).await.unwrap();
    assert!(text_of(&r).contains("slept"), "{r:?}");
}

#[actix_rt::test]
async fn caching_hints_come_from_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache.toml");
    std::fs::write(&cache, "[cache]\nlist_ttl_ms = 45000\nread_ttl_ms = 7000\nscope = \"private\"\n").unwrap();
    let upstream =
        format!("up={} stdio --catalog everything --log-level error --config {}", binary().display(), cache.display());
    let gw = HttpChild::spawn(&["--upstream", &upstream]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["up__echo"], true).await;
    // Lists: the upstream's list hints on its items; reads: its read's.
    for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        let r = post(&gw.url, &request(json!(1), method, json!({}))).await;
        let result = &r.response()["result"];
        assert_eq!(
            (result["ttlMs"].as_u64(), result["cacheScope"].as_str()),
            (Some(45000), Some("private")),
            "{method}: {result}"
        );
    }
    let read = post(&gw.url, &request(json!(2), "resources/read", json!({"uri": "test://static-text"}))).await;
    let result = &read.response()["result"];
    assert_eq!((result["ttlMs"].as_u64(), result["cacheScope"].as_str()), (Some(7000), Some("private")), "{result}");
}

/// A forwarded call's arguments go upstream as the caller wrote them, and a
/// stateless HTTP upstream's tool gets the `Mcp-Param-*` headers its schema
/// names, read from those arguments: the upstream (this project's server)
/// refuses a call whose header is missing, as the first check shows.
#[actix_rt::test]
async fn arguments_go_upstream_as_written_with_the_header_parameters_their_tool_names() {
    let upstream = HttpChild::spawn(&["--catalog", "everything", "--log-level", "error"]).await;
    let body = request(json!(1), "tools/call", json!({"name": "test_custom_header", "arguments": {"region": "eu"}}));
    let bare = post_with(&upstream.url, &body, |_| {}).await;
    assert_eq!(bare.status, 400, "a call without its Mcp-Param-Region header: {}", bare.raw);

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, format!("[[upstreams]]\nname = \"web\"\nurl = \"{}\"\n", upstream.url)).unwrap();
    let gw = HttpChild::spawn(&["--config", config.to_str().unwrap(), "--log-level", "error"]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["web__test_custom_header", "web__echo"], true).await;
    let r: String = client.call("web__test_custom_header", json!({"region": "eu-west", "query": "q"})).await.unwrap();
    assert_eq!(r, "region=eu-west");
    let echoed: String = client.call("web__echo", json!({"text": "caf\u{e9} \"quoted\" ✓"})).await.unwrap();
    assert_eq!(echoed, "café \"quoted\" ✓");
}

/// A legacy stdio server (the initialize era only) whose one tool, `ask`,
/// asks its caller for a name (`elicitation/create`) and never answers the
/// call; every message it receives is appended to the file its first
/// argument names, one JSON line each, before it is handled.
const ASKING_UPSTREAM: &str = r#"
import json, sys
log = open(sys.argv[1], "a")
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    log.write(line.rstrip("\n") + "\n")
    log.flush()
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if not isinstance(m, dict) or m.get("method") is None or m.get("id") is None:
        continue
    method, id = m["method"], m["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "asks", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "ask",
              "description": "asks for a name", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": "name-please", "method": "elicitation/create",
              "params": {"message": "Name?", "requestedSchema": {"type": "object",
                         "properties": {"name": {"type": "string"}}}}})
    elif method == "resources/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"resources": []}})
    elif method == "resources/templates/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"resourceTemplates": []}})
    elif method == "prompts/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"prompts": []}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found: " + method}})
"#;

/// The messages the asking upstream received so far, in order.
fn received_by(log: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// "A request nobody comes back for is cancelled after
/// `gateway.input_wait_ms`" (gateway guide, "Per call"): a stateless caller
/// is asked for the name a legacy upstream's call wants and never comes
/// back. The upstream is sent `notifications/cancelled` for that call once
/// the wait (1 s here) is over — not before, with no other call parked
/// after it, and long before the upstream's own `timeout_ms` (60 s).
#[actix_rt::test]
async fn a_request_nobody_comes_back_for_is_cancelled_upstream_after_input_wait_ms() {
    let test = "gateway::a_request_nobody_comes_back_for_is_cancelled_upstream_after_input_wait_ms";
    if external(test, &["python3"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("asks.py");
    std::fs::write(&script, ASKING_UPSTREAM).unwrap();
    let received = dir.path().join("received.jsonl");
    let wait = Duration::from_millis(1000);
    let config = dir.path().join("gateway.toml");
    let text = format!(
        "[gateway]\ninput_wait_ms = {}\n\n[[upstreams]]\nname = \"asks\"\ncommand = \"python3\"\n\
         args = [{:?}, {:?}]\ntimeout_ms = 60000\n",
        wait.as_millis(),
        script.display().to_string(),
        received.display().to_string()
    );
    std::fs::write(&config, text).unwrap();
    let gw = HttpChild::spawn(&["--config", config.to_str().unwrap()]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["asks__ask"], true).await;
    // A caller that can answer elicitation is asked, and never comes back.
    let call = request(
        json!(1),
        "tools/call",
        json!({"name": "asks__ask", "arguments": {}, "_meta": meta_with(json!({"elicitation": {}}))}),
    );
    let asked_at = std::time::Instant::now();
    let asked = post(&gw.url, &call).await;
    let result = &asked.response()["result"];
    assert_eq!(result["resultType"], "input_required", "{}", asked.raw);
    assert_eq!(result["inputRequests"]["input-1"]["method"], "elicitation/create", "{}", asked.raw);
    // The upstream logged the call before it asked: the request left waiting.
    let calls: Vec<serde_json::Value> =
        received_by(&received).into_iter().filter(|m| m["method"] == "tools/call").collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call_id = calls[0]["id"].clone();
    let after = wait_for(
        "the upstream is sent notifications/cancelled for the call nobody came back for",
        Duration::from_secs(10),
        Duration::from_millis(20),
        async || {
            let got = received_by(&received);
            let cancelled =
                got.iter().any(|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == call_id);
            if cancelled {
                Ok(asked_at.elapsed())
            } else {
                Err(format!("{} messages, none cancelling request {call_id}", got.len()))
            }
        },
    )
    .await;
    assert!(after >= wait, "cancelled after gateway.input_wait_ms ({wait:?}), not before: {after:?}");
}
