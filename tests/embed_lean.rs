//! `actors/examples/embed_lean.rs` built as an embedder builds it, on
//! actix-mcp without default features, and driven over real HTTP: the core serves
//! tools and resources inside the app's own routes, and a setting the lean
//! build cannot honour ends the program with a sentence naming its feature.
//!
//! No test build is lean (the tests have every feature), so the program is
//! built apart, by the package `tests/lean` into its own target directory,
//! before the tests run (`.ci/features.sh` does):
//!
//! ```sh
//! cargo build --target-dir target/lean -p actix-mcp-lean
//! ```
//!
//! Where it is not built the tests print `SKIP`, like those needing an
//! external program (and fail under `ACTIX_MCP_TEST_REQUIRE_EXTERNAL=1`).

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The example, built from the core of actix-mcp alone, or `None` after
/// printing why `test` is skipped.
fn lean_example(test: &str) -> Option<std::path::PathBuf> {
    // target/debug/deps/<test> → target/lean/debug/embed_lean
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap();
    let program = target.join("lean/debug/embed_lean");
    if program.is_file() {
        return Some(program);
    }
    let build = "cargo build --target-dir target/lean -p actix-mcp-lean";
    assert!(!common::external_required(), "{test}: {} is required but not built ({build})", program.display());
    println!("SKIP {test}: the lean example is not built ({build})");
    None
}

#[actix_rt::test]
async fn the_lean_build_serves_an_app_with_a_tool() {
    let Some(program) = lean_example("embed_lean::the_lean_build_serves_an_app_with_a_tool") else { return };
    let mut child = tokio::process::Command::new(program)
        .arg("127.0.0.1:0")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn embed_lean");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), common::line_with(&mut stderr, "listening on "))
        .await
        .expect("the example listens within 20 s");
    let url = line.split("listening on ").nth(1).unwrap().trim().to_string();
    let base = url.trim_end_matches("/mcp");

    let health = common::client().get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok", "the app keeps its own routes");

    let listed = common::post(&url, &common::request(json!(1), "tools/list", json!({}))).await;
    let tools = listed.response()["result"]["tools"].as_array().expect("a tool list").clone();
    let names: Vec<_> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["mul"]);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]), "{}", tools[0]);

    let call = json!({"name": "mul", "arguments": {"a": 6, "b": 7}});
    let reply = common::post(&url, &common::request(json!(2), "tools/call", call)).await;
    assert_eq!(reply.status, 200, "{}", reply.raw);
    assert_eq!(reply.response()["result"]["content"][0]["text"], "42", "{}", reply.raw);

    let overflow = json!({"name": "mul", "arguments": {"a": i64::MAX, "b": 2}});
    let reply = common::post(&url, &common::request(json!(3), "tools/call", overflow)).await;
    assert_eq!(reply.response()["result"]["isError"], true, "{}", reply.raw);

    let read = json!({"uri": "app://about"});
    let reply = common::post(&url, &common::request(json!(4), "resources/read", read)).await;
    assert_eq!(reply.response()["result"]["contents"][0]["text"], "An app with an MCP endpoint.", "{}", reply.raw);

    let quoted = json!({"name": "mul", "arguments": {"a": "6", "b": 7}});
    let reply = common::post(&url, &common::request(json!(5), "tools/call", quoted)).await;
    let text = reply.response()["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("expected an integer"), "{}", reply.raw);

    let unknown = common::post(&url, &common::request(json!(6), "tools/call", json!({"name": "div"}))).await;
    assert_eq!(unknown.error_code(), Some(-32602), "{}", unknown.raw);
    child.kill().await.unwrap();
}

#[test]
fn a_setting_the_lean_build_lacks_is_refused_naming_the_feature() {
    let test = "embed_lean::a_setting_the_lean_build_lacks_is_refused_naming_the_feature";
    let Some(program) = lean_example(test) else { return };
    for (var, value, feature) in [
        ("ACTIX_MCP_HUB_BACKEND", "redis", "redis"),
        ("ACTIX_MCP_AUTH_MODE", "oauth", "oauth"),
        ("ACTIX_MCP_METRICS", "true", "metrics"),
        ("ACTIX_MCP_H2C", "true", "h2c"),
    ] {
        let out = std::process::Command::new(&program).arg("127.0.0.1:0").env(var, value).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{var}={value} is refused: {out:?}");
        let said = String::from_utf8(out.stderr).unwrap();
        assert!(said.contains(&format!("needs the `{feature}` feature of actix-mcp")), "{var}={value}: {said}");
    }
}
