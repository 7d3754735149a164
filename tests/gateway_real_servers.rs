//! Other SDKs' servers behind the gateway, as users run them: the npm
//! `@modelcontextprotocol/server-everything` (a legacy-era TypeScript server
//! over stdio, whose server requests name no request) and a Python SDK
//! server (`mcp` from PyPI, over stdio), driven through the gateway by the
//! client. Installed by `tests/real-servers/install.sh`; without Node or
//! Python the test prints `SKIP` (or fails when external programs are
//! required).

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::{Client, RequestOptions};
use common::*;
use serde_json::{json, Value};

fn home() -> PathBuf {
    std::env::var_os("ACTIX_MCP_REAL_SERVERS_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/real-servers"))
}

/// Both servers installed, or `None` after printing why `test` is skipped.
fn installed(test: &str) -> Option<(PathBuf, PathBuf)> {
    external(test, &["node", "npm", "python3"])?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/real-servers/install.sh");
    let ok = std::process::Command::new("bash").arg(script).env("ACTIX_MCP_REAL_SERVERS_HOME", home()).status();
    if !ok.is_ok_and(|s| s.success()) {
        assert!(!external_required(), "{test}: tests/real-servers/install.sh failed");
        println!("SKIP {test}: tests/real-servers/install.sh failed");
        return None;
    }
    let node = home().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    Some((node, home().join("python/bin/python")))
}

fn text(r: &actix_mcp::protocol::model::tools::CallToolResult) -> String {
    serde_json::to_string(&r.content).unwrap()
}

#[actix_rt::test]
async fn typescript_and_python_servers_behind_one_gateway() {
    let test = "gateway_real_servers::typescript_and_python_servers_behind_one_gateway";
    let Some((node_server, python)) = installed(test) else { return };
    let py_server = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/real-servers/server.py");
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
