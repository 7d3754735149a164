//! The gateway against tool poisoning: a definition carrying hidden
//! characters is never served, and with `gateway.pins` a definition that
//! changes after it was pinned (a "rug pull") is quarantined — not listed,
//! refused by name with the reason — until `actix-mcp gateway approve` and a
//! restart. The upstream is `tests/hostile/upstream.py` (python3), the
//! gateway the real binary.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

async fn tool_names(url: &str) -> Vec<String> {
    let r = post(url, &request(json!(1), "tools/list", json!({}))).await;
    let tools = r.response()["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// Waits up to 20 s until `name` is listed (`present`) or not.
async fn until_listed(url: &str, name: &str, present: bool) {
    for _ in 0..200 {
        if tool_names(url).await.iter().any(|n| n == name) == present {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} was not {} within 20 s", if present { "listed" } else { "withdrawn" });
}

async fn call(url: &str, name: &str) -> Value {
    post(url, &request(json!(2), "tools/call", json!({"name": name, "arguments": {"text": "hi"}})))
        .await
        .response()
        .clone()
}

#[actix_rt::test]
async fn hidden_characters_are_never_served_and_a_changed_definition_waits_for_approval() {
    if external("pins::hidden_characters_are_never_served_and_a_changed_definition_waits_for_approval", &["python3"])
        .is_none()
    {
        return;
    }
    let dir = scratch("pins-test-rug");
    let (pins, flag) = (dir.join("pins.json"), dir.join("flipped"));
    let flags = ["--legacy", "--tools", "echo", "--rug-pull", flag.to_str().unwrap(), "--tagged", "sneaky"];
    let toml = format!(
        "[status]\nenabled = true\n[gateway]\npins = {:?}\n{}",
        pins.display().to_string(),
        hostile_upstream("rug", "", &flags)
    );
    let config = ConfigFile::new("pins-rug", &toml);
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    let url = server.url.clone();
    until_listed(&url, "rug__echo", true).await;
    assert_eq!(call(&url, "rug__echo").await["result"]["content"][0]["text"], "echo: hi");
    // Tag characters: not listed, and refused by name (not forwarded) with why.
    assert!(!tool_names(&url).await.contains(&"rug__sneaky".to_owned()));
    let sneaky = call(&url, "rug__sneaky").await;
    let why = sneaky["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(why.contains("upstream rug") && why.contains("hidden character (U+E0069)"), "{sneaky}");
    // Pinned at first sight.
    let file: Value = serde_json::from_slice(&std::fs::read(&pins).unwrap()).unwrap();
    assert!(file["pinned"]["rug"]["tool:echo"]["description"].is_string(), "{file}");
    // The upstream changes echo's description: quarantined.
    assert_eq!(call(&url, "rug__flip").await["result"]["content"][0]["text"], "flipped");
    until_listed(&url, "rug__echo", false).await;
    let refused = call(&url, "rug__echo").await;
    let why = refused["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(why.contains("upstream rug") && why.contains("description changed") && why.contains("approve"), "{why}");
    let status: Value = reqwest::get(url.replace("/mcp", "/status.json")).await.unwrap().json().await.unwrap();
    let row = status["upstreams"].as_array().unwrap().iter().find(|r| r["name"] == "rug").unwrap().clone();
    assert!(row["refused"]["tool:rug__echo"].as_str().unwrap().contains("description"), "{row}");
    assert!(row["refused"]["tool:rug__sneaky"].is_string(), "{row}");
    let metrics = reqwest::get(url.replace("/mcp", "/metrics")).await.unwrap().text().await.unwrap();
    let refusals = metrics
        .lines()
        .find_map(|l| l.strip_prefix("mcp_gateway_items_refused_total{upstream=\"rug\"} "))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(refusals.unwrap_or(0.0) >= 2.0, "{metrics}");

    // Approved, and served after a reload (SIGHUP); the tagged tool still is not.
    let out = std::process::Command::new(binary())
        .args(["gateway", "approve", "--pins", pins.to_str().unwrap(), "rug/echo"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("approved 1"));
    let again = std::process::Command::new(binary())
        .args(["gateway", "approve", "--pins", pins.to_str().unwrap(), "rug/echo"])
        .output()
        .unwrap();
    assert!(!again.status.success(), "nothing waits any more");
    server.hangup();
    until_listed(&url, "rug__echo", true).await;
    assert_eq!(call(&url, "rug__echo").await["result"]["content"][0]["text"], "echo: hi");
    assert!(call(&url, "rug__sneaky").await["error"]["message"].as_str().unwrap().contains("hidden character"));
    // A pins file that is not one: the reload is refused, the pins in force stay.
    let approved = std::fs::read(&pins).unwrap();
    std::fs::write(&pins, "not json").unwrap();
    server.hangup();
    let mut refused = None;
    for _ in 0..200 {
        let status: Value = reqwest::get(url.replace("/mcp", "/status.json")).await.unwrap().json().await.unwrap();
        if status["config"]["last_reload_error"].as_str().is_some_and(|e| e.contains("gateway.pins")) {
            refused = Some(status);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let status = refused.expect("the reload with a broken pins file is refused within 20 s");
    assert_eq!(status["config"]["generation"], 2, "the running configuration stays: {status}");
    assert_eq!(call(&url, "rug__echo").await["result"]["content"][0]["text"], "echo: hi");
    std::fs::write(&pins, approved).unwrap();
    drop(server);
    // And after a restart.
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    until_listed(&server.url, "rug__echo", true).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pins_file_that_is_not_json_stops_the_gateway() {
    let dir = scratch("pins-test-bad");
    let pins = dir.join("pins.json");
    std::fs::write(&pins, "not json").unwrap();
    let toml = format!("[gateway]\npins = {:?}\n{}", pins.display().to_string(), everything_upstream("e", ""));
    let config = ConfigFile::new("pins-bad", &toml);
    let out = std::process::Command::new(binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--catalog", "none", "--config", config.path()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("gateway.pins") && stderr.contains("not a pins file"), "{stderr}");
}
