//! Other SDKs' servers behind the gateway, as users run them: the npm
//! `@modelcontextprotocol/server-everything` (a legacy-era TypeScript server
//! over stdio, whose server requests name no request), the npm
//! `@modelcontextprotocol/server-filesystem` and a Python SDK server (`mcp`
//! from PyPI, over stdio), driven through the gateway by this project's
//! client and by the official Python and TypeScript SDK clients. Installed
//! by `tests/real-servers/install.sh` and `tests/ts-client/install.sh`;
//! without Node or Python the tests print `SKIP` (or fail when external
//! programs are required).

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::{Client, RequestOptions};
use common::*;
use serde_json::{json, Value};

/// Both servers installed, or `None` after printing why `test` is skipped.
fn installed(test: &str) -> Option<(PathBuf, PathBuf)> {
    let node = real_servers(test, "node", &["node", "npm", "python3"])?;
    let python = real_servers(test, "python", &["python3"])?;
    Some((node.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"), python.join("bin/python")))
}

fn text(r: &actix_mcp::protocol::model::tools::CallToolResult) -> String {
    serde_json::to_string(&r.content).unwrap()
}

#[actix_rt::test]
async fn typescript_and_python_servers_behind_one_gateway() {
    let test = "gateway_real_servers::typescript_and_python_servers_behind_one_gateway";
    let Some((node_server, python)) = installed(test) else { return };
    let py_server = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/real-servers/server.py");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    let text_config = format!(
        "[[upstreams]]\nname = \"ts\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n\n\
         [[upstreams]]\nname = \"py\"\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node_server.display().to_string(),
        python.display().to_string(),
        py_server.display().to_string()
    );
    std::fs::write(&config, text_config).unwrap();
    let gw = HttpChild::spawn(&["--config", config.to_str().unwrap()]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    let mut names = Vec::new();
    for _ in 0..300 {
        names = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect::<Vec<_>>();
        if names.iter().any(|n| n == "ts__get-sum") && names.iter().any(|n| n == "py__add") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(names.iter().any(|n| n == "ts__get-sum") && names.iter().any(|n| n == "py__add"), "{names:?}");

    // Calls, typed and structured.
    let sum = client.call_tool("ts__get-sum", json!({"a": 2, "b": 3})).await.unwrap();
    assert!(text(&sum).contains("The sum of 2 and 3 is 5."), "{sum:?}");
    let added: Value = client.call("py__add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(added, json!({"result": 42}));
    // Progress from the TypeScript server reaches the caller.
    let seen = Arc::new(Mutex::new(0));
    let s = seen.clone();
    let ropts = RequestOptions::new().on_progress(move |_| *s.lock().unwrap() += 1);
    let args = json!({"duration": 1, "steps": 3});
    client.call_tool_with("ts__trigger-long-running-operation", args, ropts).await.unwrap();
    assert!(*seen.lock().unwrap() >= 2, "progress notifications: {}", *seen.lock().unwrap());
    // Its requests for input (named by no request: asked one call at a time)
    // are answered by this caller, through an InputRequiredResult.
    let r = client.call_tool("ts__trigger-sampling-request", json!({"prompt": "hi", "maxTokens": 10})).await.unwrap();
    assert!(text(&r).contains("Paris"), "{r:?}");
    let r = client.call_tool("ts__get-roots-list", json!({})).await.unwrap();
    assert!(text(&r).contains("file:///work"), "{r:?}");
    // Resources under their own URIs (the Python server's by its template),
    // prompts prefixed.
    let read = client.read_resource("greeting://Ada").await.unwrap();
    assert!(serde_json::to_string(&read).unwrap().contains("Hello, Ada!"), "{read:?}");
    let prompt = client.get_prompt("py__review", json!({"code": "x = 1"})).await.unwrap();
    assert!(serde_json::to_string(&prompt.messages).unwrap().contains("x = 1"));
    let prompt = client.get_prompt("ts__simple-prompt", json!({})).await.unwrap();
    assert!(!prompt.messages.is_empty());
}

/// Runs `program args…` and parses the one JSON line it prints; its
/// `error`, if it reported one, fails the test.
fn driven(what: &str, program: &std::path::Path, args: &[&str], cwd: &std::path::Path) -> Value {
    let out = std::process::Command::new(program).args(args).current_dir(cwd).output().expect("the driver runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{what} printed no JSON ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(v.get("error").is_none(), "{what} failed: {}", v["error"].as_str().unwrap_or_default());
    v
}

/// How many upstream `tools/call`s of `upstream` the gateway at `url` timed
/// as cancelled (its metrics).
async fn cancelled_calls(url: &str, upstream: &str) -> u64 {
    let metrics = client().get(url.replace("/mcp", "/metrics")).send().await.unwrap().text().await.unwrap();
    let series = format!(
        "mcp_client_operation_duration_seconds_count{{upstream=\"{upstream}\",mcp_method_name=\"tools/call\",error_type=\"cancelled\"}}"
    );
    metrics.lines().find_map(|l| l.strip_prefix(&series)).map_or(0, |n| n.trim().parse().unwrap_or(0))
}

/// Waits up to 5 s for `n` cancelled calls of `upstream`; how many there are.
async fn until_cancelled(url: &str, upstream: &str, n: u64) -> u64 {
    let mut cancelled = 0;
    for _ in 0..50 {
        cancelled = cancelled_calls(url, upstream).await;
        if cancelled >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cancelled
}

/// What both official clients saw: the three upstreams' tools, progress,
/// an answered elicitation (with `name`), a file read through
/// server-filesystem, a call given up, a resource update, the Python
/// server's sum.
fn assert_driven(what: &str, v: &Value, name: &str, file: &str) {
    let tools: Vec<&str> = v["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for t in ["ts__echo", "files__read_text_file", "py__add"] {
        assert!(tools.contains(&t), "{what}: {t} is listed: {tools:?}");
    }
    let progress: Vec<f64> = v["progress"].as_array().unwrap().iter().filter_map(Value::as_f64).collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "{what}: progress");
    assert!(v["elicited"].as_str().unwrap().contains(name), "{what}: the answer reached the upstream: {v}");
    assert_eq!(v["file"], file, "{what}: server-filesystem's read");
    assert!(v["gave_up"] == true || v["gaveUp"] == true, "{what}: the long call was given up: {v}");
    assert_eq!(v["updated"], "demo://resource/dynamic/text/1", "{what}: the resource update");
    assert_eq!(v["added"], json!({"result": 5}), "{what}: the Python server's tool");
}

#[actix_rt::test]
async fn official_sdk_clients_through_the_gateway() {
    let test = "gateway_real_servers::official_sdk_clients_through_the_gateway";
    let Some((node_server, python)) = installed(test) else { return };
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let status = std::process::Command::new("bash").arg(root.join("tests/ts-client/install.sh")).status();
    assert!(status.is_ok_and(|s| s.success()), "tests/ts-client/install.sh failed");
    let fs_server = real_servers_home().join("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("files")).unwrap();
    let files = dir.path().join("files").canonicalize().unwrap();
    let note = files.join("note.txt");
    std::fs::write(&note, "milk and bread\n").unwrap();
    // Its own copy of the Python server, so that killing it kills no other test's.
    let py_server = dir.path().join("gateway_server.py");
    std::fs::copy(root.join("tests/real-servers/server.py"), &py_server).unwrap();
    let config = dir.path().join("gateway.toml");
    let text_config = format!(
        "[status]\nenabled = true\n[gateway]\nrestart_initial_ms = 200\n\n\
         [[upstreams]]\nname = \"ts\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n\n\
         [[upstreams]]\nname = \"files\"\ncommand = \"node\"\nargs = [{:?}, {:?}]\n\n\
         [[upstreams]]\nname = \"py\"\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node_server.display().to_string(),
        fs_server.display().to_string(),
        files.display().to_string(),
        python.display().to_string(),
        py_server.display().to_string()
    );
    std::fs::write(&config, text_config).unwrap();
    let gw = HttpChild::spawn(&["--config", config.to_str().unwrap()]).await;
    for _ in 0..300 {
        let rows = [
            upstream_row(&gw.url, "ts").await,
            upstream_row(&gw.url, "files").await,
            upstream_row(&gw.url, "py").await,
        ];
        if rows.iter().all(|r| r["state"] == "up") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let note_path = note.display().to_string();

    // The Python SDK client speaks 2026-07-28 (it probes server/discover).
    let py_driver = root.join("tests/real-servers/drive_gateway.py");
    let args = [py_driver.to_str().unwrap(), &gw.url, &note_path];
    let v = driven("the Python SDK client", &python, &args, dir.path());
    assert_eq!(v["version"], "2026-07-28");
    assert_driven("the Python SDK client", &v, "Ada", "milk and bread\n");
    assert_eq!(v["elicitation_message"], "Please provide inputs for the following fields:");
    // Its given-up call was cancelled upstream (timed so when its handler ended).
    let cancelled = until_cancelled(&gw.url, "ts", 1).await;
    assert_eq!(cancelled, 1, "the Python client's given-up call was cancelled upstream");

    // The Python server is killed: the gateway starts it again.
    let killed = std::process::Command::new("pkill").args(["-f", py_server.to_str().unwrap()]).status().unwrap();
    assert!(killed.success(), "the Python upstream's process was found");
    let mut row = Value::Null;
    for _ in 0..200 {
        row = upstream_row(&gw.url, "py").await;
        if row["restarts"].as_u64() >= Some(1) && row["state"] == "up" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(row["restarts"].as_u64() >= Some(1) && row["state"] == "up", "restarted: {row}");

    // The TypeScript SDK client opens a legacy session (2025-11-25); its
    // last call reaches the restarted Python server.
    let ts_home = root.join("target/ts-client");
    let args = ["gateway.mjs", gw.url.as_str(), note_path.as_str()];
    let v = driven("the TypeScript SDK client", std::path::Path::new("node"), &args, &ts_home);
    assert_eq!(v["version"], "2025-11-25");
    assert_driven("the TypeScript SDK client", &v, "Grace", "milk and bread\n");
    let cancelled = until_cancelled(&gw.url, "ts", 2).await;
    assert_eq!(cancelled, 2, "the TypeScript client's given-up call was cancelled upstream");
}

/// Starts the Python SDK server over Streamable HTTP on `port`; waits until
/// it accepts connections.
async fn python_http(python: &std::path::Path, port: u16) -> tokio::process::Child {
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/real-servers/server.py");
    let child = tokio::process::Command::new(python)
        .arg(script)
        .args(["http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return child;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Python server did not listen on {port} within 20 s");
}

/// Finding 10 of the hostile review: a Python SDK server over HTTP told to
/// stop (SIGTERM) is marked down once its connections are refused, the
/// gateway lets go of its listen stream so that it can finish stopping, and
/// the gateway reconnects when it is back on the same port.
#[actix_rt::test]
async fn a_draining_http_upstream_is_marked_down_released_and_reconnected() {
    let test = "gateway_real_servers::a_draining_http_upstream_is_marked_down_released_and_reconnected";
    let Some((_, python)) = installed(test) else { return };
    let port = free_port();
    let mut upstream = python_http(&python, port).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    let toml = format!(
        "[status]\nenabled = true\n[gateway]\nrestart_initial_ms = 300\nrestart_max_ms = 1000\n\
         [[upstreams]]\nname = \"web\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    );
    std::fs::write(&config, toml).unwrap();
    let gw = HttpChild::spawn(&["--config", config.to_str().unwrap()]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["web__add"], true).await;
    let added: Value = client.call("web__add", json!({"a": 1, "b": 2})).await.unwrap();
    assert_eq!(added, json!({"result": 3}));
    let pid = upstream.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let mut row = Value::Null;
    let mut exited = false;
    for _ in 0..200 {
        let _ = client.call_tool("web__add", json!({"a": 1, "b": 2})).await;
        row = upstream_row(&gw.url, "web").await;
        exited = exited || upstream.try_wait().unwrap().is_some();
        if row["state"] == "down" && exited {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(row["state"], "down", "the stopping upstream is down: {row}");
    assert!(exited, "the upstream finished stopping: the gateway let go of its streams");
    let ready = client_get(&gw.url.replace("/mcp", "/readyz")).await;
    assert_eq!(ready, 503, "a required upstream is down");
    let _again = python_http(&python, port).await;
    until_tools(&client, &["web__add"], true).await;
    let mut added = Value::Null;
    for _ in 0..100 {
        if let Ok(v) = client.call::<Value>("web__add", json!({"a": 20, "b": 22})).await {
            added = v;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(added, json!({"result": 42}), "reconnected: {}", upstream_row(&gw.url, "web").await);
}

async fn client_get(url: &str) -> u16 {
    client().get(url).send().await.unwrap().status().as_u16()
}
