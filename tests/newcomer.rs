//! What slowed a newcomer down, each checked: the test client's runtime
//! and deadlines, `run()`'s command line and error sentences, log lines
//! that name the program and what it serves, tool-argument errors a model
//! can act on, schema defaults, and a handler's panic message in the log.

use crate::common;

use std::process::Command;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::test::{block_on, TestClient};
use common::logs::Logs;
use common::*;

/// Waits a while.
#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// How long, in seconds.
    #[serde(default = "thirty")]
    seconds: u64,
    /// What to say afterwards.
    text: String,
}

fn thirty() -> u64 {
    30
}

fn weather() -> McpServerBuilder {
    McpServer::builder(mcp_protocol::model::discover::Implementation::new("weather", "2.1.0"))
        .config(test_config())
        .tool(Tool::new("wait", "", |w: Wait, _ctx| async move { Ok(format!("{} after {} s", w.text, w.seconds)) }))
        .tool(Tool::no_args("explode", "Panics", |_ctx| async {
            let reason = "the disk is on fire";
            if std::hint::black_box(true) {
                panic!("cannot go on: {reason}");
            }
            Ok("unreachable")
        }))
}

/// The test client under a plain `#[test]`, with its runtime from the crate.
#[test]
fn the_test_client_runs_under_a_plain_test_and_gives_up_waiting() {
    block_on(async {
        let server = weather().build().unwrap();
        let client = TestClient::new(server.clone()).await;
        let mut changes = client.listen(json!({"toolsListChanged": true})).await.unwrap();
        let quiet = changes.next_within(Duration::from_millis(100)).await;
        assert_eq!(quiet.unwrap_err().to_string(), "no notification within 100 ms");
        server.catalog().remove_tool("explode");
        let change = changes.next_within(Duration::from_secs(10)).await.unwrap().unwrap();
        assert_eq!(change["method"], "notifications/tools/list_changed");
    });
    // The runtime is re-exported for tests that want it by name.
    actix_mcp::test::rt::System::new().block_on(async {});
}

#[actix_rt::test]
async fn argument_errors_name_the_argument_and_schemas_carry_defaults() {
    let client = TestClient::new(weather().build().unwrap()).await;
    let tool = client.list_tools().await.unwrap().into_iter().find(|t| t.name == "wait").unwrap();
    assert_eq!(tool.input_schema["properties"]["seconds"]["default"], 30);
    assert_eq!(tool.input_schema["required"], json!(["text"]));
    let r = client.call("wait", json!({"text": "done"})).await.unwrap();
    assert_eq!(r.content, vec![Content::text("done after 30 s")]);
    let text = |r: CallToolResult| match &r.content[..] {
        [Content::Text { text, .. }] => text.clone(),
        other => panic!("{other:?}"),
    };
    let missing = client.call("wait", json!({})).await.unwrap();
    assert_eq!(missing.is_error, Some(true));
    assert_eq!(text(missing), "Invalid arguments for tool wait: the required argument \"text\" is missing");
    let wrong = client.call("wait", json!({"text": "x", "seconds": "soon"})).await.unwrap();
    assert_eq!(text(wrong), "Invalid arguments for tool wait: argument \"seconds\": expected a non-negative integer, got the string \"soon\"");
}

#[actix_rt::test]
async fn a_panic_is_logged_with_its_message() {
    let logs = Logs::default();
    let client = TestClient::new(weather().logger(logs.logger()).build().unwrap()).await;
    let e = client.call("explode", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603));
    let lines = logs.with_msg("handler panicked");
    assert_eq!(lines.len(), 1, "{}", logs.text());
    assert_eq!(lines[0].get("panic"), "cannot go on: the disk is on fire");
}

#[actix_rt::test]
async fn the_start_line_names_the_program_and_what_it_serves() {
    let logs = Logs::default();
    let server = weather().logger(logs.logger()).build().unwrap();
    actix_rt::spawn(async move {
        let _ = actix_mcp::transport::http::serve(server).await;
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let line = loop {
        if let Some(l) = logs.with_msg("serving Streamable HTTP").pop() {
            break l;
        }
        assert!(tokio::time::Instant::now() < deadline, "the start line within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(line.get("server"), "weather");
    assert_eq!(line.get("serves"), "2 tools, 0 resources, 0 templates, 0 prompts");
    assert!(!line.kv.contains_key("catalog"), "no catalog it does not serve: {:?}", line.kv);
}

/// `run()`'s command line: `--help` and `--version` exit 0; anything else,
/// and a port in use, end with a sentence.
#[test]
fn run_has_help_and_speaks_in_sentences() {
    let program = example_binary("newcomer");
    let help = Command::new(&program).arg("--help").output().unwrap();
    assert!(help.status.success(), "{help:?}");
    let usage = String::from_utf8(help.stdout).unwrap();
    assert!(usage.contains("Usage: actix-mcp [--stdio | --http ADDR]") && usage.contains("--help"), "{usage}");
    let version = Command::new(&program).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8(version.stdout).unwrap(), format!("actix-mcp {}\n", env!("CARGO_PKG_VERSION")));

    let bad = Command::new(&program).arg("--bogus").output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let said = String::from_utf8(bad.stderr).unwrap();
    assert_eq!(
        said.trim(),
        "Error: invalid configuration: unexpected arguments --bogus: expected --stdio, --http ADDR or --help"
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let busy = Command::new(&program).args(["--http", &addr]).output().unwrap();
    assert_eq!(busy.status.code(), Some(1));
    let said = String::from_utf8(busy.stderr).unwrap();
    assert!(said.contains(&format!("cannot listen on {addr}")), "{said}");
    assert!(!said.contains("Serve(") && !said.contains("Os {"), "{said}");
}
