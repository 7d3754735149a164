//! The client against servers written with other SDKs, as users run them:
//! `@modelcontextprotocol/server-everything` from npm (a legacy-era
//! TypeScript server) over stdio and Streamable HTTP, and a server written
//! with the Python SDK (`mcp` from PyPI) in both eras over stdio and HTTP.
//! Installed by `tests/real-servers/install.sh`; without Node or Python
//! the tests print `SKIP` (or fail when external programs are required).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use actix_mcp::client::{Client, ClientError, SubscriptionFilter};
use actix_mcp::protocol::model::{Content, ResourceContents};
use actix_mcp::protocol::ProtocolVersion;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

fn texts(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts an HTTP server from `command` and returns once its stderr has a
/// line containing `ready` (within 30 s); killed when dropped.
async fn http_server(mut command: tokio::process::Command, ready: &str) -> tokio::process::Child {
    command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains(ready) {
                return true;
            }
        }
        false
    });
    assert!(found.await.unwrap_or(false), "the server never printed {ready:?}");
    // Keep reading, so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

/// What the TypeScript reference server offers, through `client`.
async fn everything_server(client: &Client) {
    let server = client.server();
    assert!(!server.stateless, "a legacy-era server: {server:?}");
    assert_eq!(server.name(), Some("mcp-servers/everything"), "{server:?}");
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"get-sum"), "{names:?}");
    let sum = client.call_tool("get-sum", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(texts(&sum.content), "The sum of 2 and 3 is 5.");
    match client.call_tool("no-such-tool", json!({})).await {
        Err(ClientError::Protocol(_) | ClientError::Tool(_)) => {}
        other => panic!("an error naming the unknown tool, not {other:?}"),
    }
    let resources = client.list_resources().await.unwrap();
    let first = resources.first().expect("resources");
    let read = client.read_resource(&first.uri).await.unwrap();
    assert_eq!(read[0].uri(), first.uri);
    assert!(!client.list_resource_templates().await.unwrap().is_empty());
    let prompts = client.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "simple-prompt"), "{prompts:?}");
    let prompt = client.get_prompt("simple-prompt", json!({})).await.unwrap();
    assert!(!prompt.messages.is_empty());
    // The server asks the client inside a call; the handlers answer.
    // Listed for clients that declare sampling and roots, as this one does.
    assert!(names.contains(&"trigger-sampling-request") && names.contains(&"get-roots-list"), "{names:?}");
    {
        let r = client.call_tool("trigger-sampling-request", json!({"prompt": "hi", "maxTokens": 10})).await.unwrap();
        assert!(serde_json::to_string(&r.content).unwrap().contains("Paris"), "{r:?}");
    }
    {
        let r = client.call_tool("get-roots-list", json!({})).await.unwrap();
        assert!(texts(&r.content).contains("file:///work"), "{r:?}");
    }
}

#[actix_rt::test]
async fn server_everything_from_npm_over_stdio_and_http() {
    let test = "client_real_servers::server_everything_from_npm_over_stdio_and_http";
    let Some(dir) = real_servers(test, "node", &["node", "npm"]) else { return };
    let script = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");

    let mut command = tokio::process::Command::new("node");
    command.arg(&script).arg("stdio").stderr(std::process::Stdio::null());
    let client = Client::spawn(command, answering()).await.unwrap();
    everything_server(&client).await;
    // A legacy listen: resources/subscribe, then the updates the server sends.
    let uri = client.list_resources().await.unwrap()[0].uri.clone();
    let filter = SubscriptionFilter { resource_subscriptions: vec![uri.clone()], ..Default::default() };
    let mut updates = client.listen(filter).await.unwrap();
    client.call_tool("toggle-subscriber-updates", json!({})).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(30), updates.next()).await.expect("an update").unwrap();
    assert_eq!((n.method.as_str(), n.params["uri"].as_str()), ("notifications/resources/updated", Some(uri.as_str())));
    client.close().await;

    let port = free_port();
    let mut command = tokio::process::Command::new("node");
    command.arg(&script).arg("streamableHttp").env("PORT", port.to_string());
    let mut child = http_server(command, "listening on port").await;
    let client = Client::connect(&format!("http://127.0.0.1:{port}/mcp"), answering()).await.unwrap();
    everything_server(&client).await;
    client.close().await;
    let _ = child.kill().await;
}

/// What the Python server offers, through `client`.
async fn python_server(client: &Client, stateless: bool) {
    let server = client.server();
    assert_eq!(server.stateless, stateless, "{server:?}");
    assert_eq!(server.version, if stateless { "2026-07-28" } else { "2025-11-25" });
    assert_eq!(server.name(), Some("python-sdk-server"));
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["add"]);
    let sum: Value = client.call("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(sum, json!({"result": 42}));
    let read = client.read_resource("greeting://Ada").await.unwrap();
    let [ResourceContents::Text { text, .. }] = &read[..] else { panic!("{read:?}") };
    assert_eq!(text, "Hello, Ada!");
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "greeting://{name}");
    let prompt = client.get_prompt("review", json!({"code": "x = 1"})).await.unwrap();
    assert!(serde_json::to_string(&prompt.messages).unwrap().contains("x = 1"));
}

#[actix_rt::test]
async fn python_sdk_server_in_both_eras_over_stdio_and_http() {
    let test = "client_real_servers::python_sdk_server_in_both_eras_over_stdio_and_http";
    let Some(venv) = real_servers(test, "python", &["python3"]) else { return };
    let python = venv.join("bin/python");
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/real-servers/server.py");
    let pins = [(None, true), (Some(ProtocolVersion::V2025_11_25), false)];
    for (pin, stateless) in pins {
        let options = match pin {
            Some(v) => answering().pin(v),
            None => answering(),
        };
        let mut command = tokio::process::Command::new(&python);
        command.arg(&script).arg("stdio").stderr(std::process::Stdio::null());
        let client = Client::spawn(command, options.clone()).await.unwrap();
        python_server(&client, stateless).await;
        client.close().await;

        let port = free_port();
        let mut command = tokio::process::Command::new(&python);
        command.arg(&script).args(["http", &port.to_string()]);
        let mut child = http_server(command, "Uvicorn running").await;
        let client = Client::connect(&format!("http://127.0.0.1:{port}/mcp"), options).await.unwrap();
        python_server(&client, stateless).await;
        client.close().await;
        let _ = child.kill().await;
    }
}
