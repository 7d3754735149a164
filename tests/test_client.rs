//! The in-process test client against the real endpoint: a two-round MRTR
//! flow answered by its callback, refusals surfaced as errors, tools with
//! `Mcp-Param` headers; and an example served over stdio by its own process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use actix_mcp::prelude::*;
use actix_mcp::test::{InputAnswer, TestClient};

/// Who to book for, asked of the user; then a confirmation.
#[derive(Deserialize, JsonSchema)]
struct Book {
    /// How many people.
    people: u32,
}

fn booking() -> Tool {
    Tool::new("book", "Books a table, asking for a name", |a: Book, ctx| async move {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let who = ctx.elicit("who", "Name for the booking?", schema)?;
        let name = who.string("name").unwrap_or("nobody").to_owned();
        let sure = ctx.elicit("sure", &format!("Book for {name}, {} people?", a.people), json!({"type": "object"}))?;
        Ok(match sure.string("ok") {
            Some("yes") => format!("booked for {name}, {}", a.people),
            _ => "not booked".to_owned(),
        })
    })
}

#[actix_rt::test]
async fn a_two_round_input_flow_is_answered_by_the_callback() {
    let server = McpServer::builder(server_info!()).tool(booking()).build().unwrap();
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let log = asked.clone();
    let client = TestClient::new(server).await.answering(move |method, params| {
        log.borrow_mut().push(format!("{method}: {}", params["message"].as_str().unwrap_or("")));
        match params["message"].as_str() {
            Some("Name for the booking?") => InputAnswer::accept(json!({"name": "Ada"})),
            _ => InputAnswer::accept(json!({"ok": "yes"})),
        }
    });
    let r = client.call("book", json!({"people": 4})).await.unwrap();
    assert_eq!(r.content, vec![Content::text("booked for Ada, 4")]);
    assert_eq!(
        *asked.borrow(),
        ["elicitation/create: Name for the booking?", "elicitation/create: Book for Ada, 4 people?"],
        "two rounds, each question once"
    );
}

#[actix_rt::test]
async fn a_client_that_cannot_answer_gets_the_missing_capability_error() {
    let server = McpServer::builder(server_info!()).tool(booking()).build().unwrap();
    let client = TestClient::new(server).await;
    let e = client.call("book", json!({"people": 2})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32021), "{e}");
    let e = client.call("nope", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e}");
}

#[actix_rt::test]
async fn header_parameters_are_sent_as_the_schema_asks() {
    let schema = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
    let tool = Tool::new("where", "d", |_: NoArgs, ctx| async move {
        Ok(ctx.headers().and_then(|h| h.get("mcp-param-region")).unwrap_or("none").to_owned())
    });
    let raw = Tool::raw("where_raw", "d", schema, |args, ctx| async move {
        let header = ctx.headers().and_then(|h| h.get("mcp-param-region")).unwrap_or("none").to_owned();
        Ok(CallToolResult::text(format!("{header} {}", args["region"])))
    });
    let server = McpServer::builder(server_info!()).tool(tool).tool(raw).build().unwrap();
    let client = TestClient::new(server).await;
    let r = client.call("where_raw", json!({"region": "eu-west"})).await.unwrap();
    assert_eq!(r.content, vec![Content::text("eu-west \"eu-west\"")]);
    let r = client.call("where", json!({})).await.unwrap();
    assert_eq!(r.content, vec![Content::text("none")]);
}

/// The newcomer example over stdio, as its own process.
#[test]
fn the_newcomer_example_serves_stdio() {
    let mut child = Command::new(crate::common::example_binary("newcomer"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the example starts");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "over stdio"}, "_meta": meta}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{call}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "over stdio", "{answer}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "the example exits cleanly at EOF: {status}");
}
