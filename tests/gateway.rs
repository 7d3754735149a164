//! The gateway: the binary serving other MCP servers' items, here its own
//! `stdio --catalog everything` started as child processes (one configured
//! legacy-only with `[[upstreams]]` and no prefix, one stateless from
//! `--upstream NAME=COMMAND`), driven over real loopback HTTP by the client.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::{Client, ClientError, RequestOptions, SubscriptionFilter};
use common::*;
use futures::StreamExt;
use serde_json::json;

/// Waits up to 20 s for the gateway to serve tools named as in `names`
/// (`present`) or not.
async fn until_tools(client: &Client, names: &[&str], present: bool) {
    for _ in 0..200 {
        let tools = client.list_tools().await.unwrap();
        if names.iter().all(|n| tools.iter().any(|t| t.name == *n) == present) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the tools {names:?} were not {} within 20 s", if present { "served" } else { "withdrawn" });
}

/// The gateway, with a legacy-only upstream `ev` (no prefix, from the file)
/// and a stateless one `two` (from the flag); the legacy upstream's config
/// path, which names its process.
async fn gateway(dir: &std::path::Path) -> (HttpChild, String) {
    let legacy = dir.join("legacy.toml");
    std::fs::write(&legacy, "[server]\nversions = [\"2025-11-25\"]\n").unwrap();
    let config = dir.join("gateway.toml");
    let bin = binary().display().to_string();
    let text = format!(
        "[gateway]\nrestart_initial_ms = 200\n\n[[upstreams]]\nname = \"ev\"\nprefix = \"\"\ncommand = {bin:?}\n\
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
    // Prompts are prefixed like tools; resources keep their URIs, served
    // by the first upstream that claimed them.
    let prompt = client.get_prompt("two__test_prompt_with_arguments", json!({"arg1": "a", "arg2": "b"})).await;
    assert!(!prompt.unwrap().messages.is_empty());
    assert!(client.list_prompts().await.unwrap().iter().any(|p| p.name == "test_simple_prompt"));
    let contents = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(contents[0].uri(), "test://static-text");
    let templated = client.read_resource("test://template/7/data").await.unwrap();
    assert_eq!(templated[0].uri(), "test://template/7/data");

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

#[actix_rt::test]
async fn an_upstream_that_cannot_start_is_retried_and_the_others_serve() {
    let gw = HttpChild::spawn(&[
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
}
