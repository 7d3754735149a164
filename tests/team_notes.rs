//! A newcomer's "team notes" server, written from the docs: a template, a
//! task, typed arguments and an upstream, driven by the in-process test
//! client and as a stdio program. Each test names the finding of the
//! hostile review it covers (17-21) and fails on the code before the fix.

use crate::common;

use actix_mcp::builder::runner::RunError;
use actix_mcp::config::UpstreamConfig;
use actix_mcp::prelude::*;
use actix_mcp::test::{block_on, TestClient};
use common::*;

/// A note's title and how many copies to print.
#[derive(Deserialize, JsonSchema)]
struct Print {
    /// The note's title.
    title: String,
    /// How many copies.
    copies: u64,
}

fn notes() -> McpServerBuilder {
    let template = ResourceTemplate::new("notes://{title}", "note", |uri, vars, _ctx| async move {
        Ok(vec![ResourceContents::text(uri, "text/plain", format!("title={}", vars["title"]))])
    })
    .unwrap();
    McpServer::builder(mcp_protocol::model::discover::Implementation::new("team-notes", "1.0.0"))
        .config(test_config())
        .template(template)
        .tool(Tool::new(
            "print",
            "Prints a note",
            |p: Print, _ctx| async move { Ok(format!("{} x{}", p.title, p.copies)) },
        ))
        .tool(
            Tool::no_args("archive", "Archives every note, as a task", |_ctx| async { Ok("archived 3 notes") })
                .with_task_support(TaskSupport::Required),
        )
}

fn text(contents: &[ResourceContents]) -> String {
    serde_json::to_value(contents).unwrap()[0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Finding 17: a template's values are percent-decoded before the reader
/// sees them (RFC 6570 encodes them).
#[test]
fn template_values_are_percent_decoded() {
    block_on(async {
        let client = TestClient::new(notes().build().unwrap()).await;
        for (uri, title) in
            [("notes://team%20sync", "team sync"), ("notes://caf%C3%A9", "café"), ("notes://a%2Fb", "a/b")]
        {
            let read = client.read(uri).await.unwrap_or_else(|e| panic!("{uri}: {e}"));
            assert_eq!(text(&read), format!("title={title}"), "{uri}");
        }
    });
}

/// Finding 18: `TestClient::request` sends the headers the protocol asks
/// for (`Mcp-Name`), and the test client follows a task to its result.
#[test]
fn the_test_client_sends_mcp_name_and_follows_tasks() {
    block_on(async {
        let client = TestClient::new(notes().build().unwrap()).await.with_tasks();
        let args = json!({"name": "print", "arguments": {"title": "standup", "copies": 2}});
        let result = client.request("tools/call", args).await.unwrap();
        assert_eq!(result["content"][0]["text"], "standup x2");
        let done = client.call("archive", json!({})).await.unwrap();
        assert_eq!(done.content, vec![Content::text("archived 3 notes")]);
        // The task's own methods, by hand.
        let task = client.request("tools/call", json!({"name": "archive", "arguments": {}})).await.unwrap();
        assert_eq!(task["resultType"], "task", "{task}");
        let id = task["taskId"].as_str().unwrap();
        let got = client.request("tasks/get", json!({"taskId": id})).await.unwrap();
        assert_eq!(got["taskId"], id);
    });
}

/// Finding 19: upstreams in the builder's configuration, or added with
/// `.upstream(…)`, are started and served; `RunError` is an error.
#[test]
fn the_builder_starts_its_upstreams() {
    fn is_error<E: std::error::Error>(_: &E) {}
    is_error(&RunError::<String>::Serve(std::io::Error::other("x")));
    let everything = format!("{} stdio --catalog everything --log-level error", binary().display());
    block_on(async {
        let mut config = test_config();
        let mut conf = UpstreamConfig::parse_flag(&format!("conf={everything}")).unwrap();
        conf.uri_prefix = "conf+".into(); // the two serve the same URIs
        config.upstreams.push(conf);
        let server = notes()
            .config(config)
            .upstream(UpstreamConfig::parse_flag(&format!("code={everything}")).unwrap())
            .build()
            .unwrap();
        let client = TestClient::new(server).await;
        let mut names = Vec::new();
        for _ in 0..200 {
            names = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect::<Vec<_>>();
            if ["conf__echo", "code__echo"].iter().all(|n| names.iter().any(|m| m == n)) {
                break;
            }
            actix_rt::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(names.iter().any(|n| n == "conf__echo") && names.iter().any(|n| n == "code__echo"), "{names:?}");
        let echoed = client.call("code__echo", json!({"text": "via code"})).await.unwrap();
        assert!(serde_json::to_string(&echoed.content).unwrap().contains("via code"));
    });
}

/// Finding 20: a stdio server with a required upstream reads its input
/// once the upstream's first start settled: the first listing has its
/// tools.
#[actix_rt::test]
async fn a_stdio_server_answers_after_its_upstreams_started() {
    let everything = format!("up={} stdio --catalog everything --log-level error", binary().display());
    let mut child = StdioChild::spawn_args(&["--catalog", "none", "--upstream", &everything]);
    child.send(&request(json!(1), "tools/list", json!({}))).await;
    let answer = child.recv().await;
    let tools = answer["result"]["tools"].as_array().cloned().unwrap_or_default();
    assert!(tools.iter().any(|t| t["name"] == "up__echo"), "the first listing: {answer}");
}

/// Finding 21: argument errors say which JSON type an argument needs.
#[test]
fn argument_errors_speak_json() {
    block_on(async {
        let client = TestClient::new(notes().build().unwrap()).await;
        let said = |r: CallToolResult| serde_json::to_value(&r.content).unwrap()[0]["text"].clone();
        let quoted = client.call("print", json!({"title": "x", "copies": "42"})).await.unwrap();
        assert_eq!(
            said(quoted),
            "Invalid arguments for tool print: argument \"copies\": expected a non-negative integer, \
             got the string \"42\" (write the number without quotes: 42)"
        );
        let negative = client.call("print", json!({"title": "x", "copies": -1})).await.unwrap();
        assert_eq!(
            said(negative),
            "Invalid arguments for tool print: argument \"copies\": expected a non-negative integer, got -1"
        );
        let err = client.request("tools/call", json!({"name": "print", "arguments": "x"})).await.unwrap_err();
        assert_eq!(err.code(), Some(-32602));
        let message = err.to_string();
        assert!(message.contains("arguments must be a JSON object, got a string"), "{message}");
        assert!(!message.contains("line") && !message.contains("column"), "{message}");
    });
}
