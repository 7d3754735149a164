//! Every example's behaviour, driven in process by the test client
//! (`actix_mcp::test::TestClient`); and README's "Your own server" program is
//! `actors/examples/standalone.rs`, to the byte.

use crate::common;

#[path = "../actors/examples/standalone.rs"]
#[allow(dead_code, unreachable_pub)]
mod standalone;

#[path = "../actors/examples/newcomer.rs"]
#[allow(dead_code, unreachable_pub)]
mod newcomer;

#[path = "../actors/examples/shared_state.rs"]
#[allow(dead_code, unreachable_pub)]
mod shared_state;

#[path = "../actors/examples/notify.rs"]
#[allow(dead_code, unreachable_pub)]
mod notify;

#[path = "../actors/examples/actor_bridge.rs"]
#[allow(dead_code, unreachable_pub)]
mod actor_bridge;

#[path = "../actors/examples/embed.rs"]
#[allow(dead_code, unreachable_pub)]
mod embed;

#[path = "../actors/examples/websocket.rs"]
#[allow(dead_code, unreachable_pub)]
mod websocket;

#[path = "../actors/examples/app.rs"]
#[allow(dead_code, unreachable_pub)]
mod app;

use std::time::Duration;

use actix::Actor;
use actix_mcp::prelude::*;
use actix_mcp::test::TestClient;
use futures::StreamExt;

fn text_of(r: &CallToolResult) -> &str {
    match &r.content[..] {
        [Content::Text { text, .. }] => text,
        other => panic!("not one text block: {other:?}"),
    }
}

#[test]
fn readme_shows_the_standalone_example_verbatim() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example = std::fs::read_to_string(root.join("actors/examples/standalone.rs")).unwrap();
    let section = readme.split("\n## Your own server\n").nth(1).expect("README has a \"Your own server\" section");
    let block = section.split("```rust").nth(1).and_then(|b| b.split("```").next()).expect("a rust block");
    let block = block.split_once('\n').map_or("", |(_, code)| code);
    assert_eq!(block, example, "README's program and actors/examples/standalone.rs differ");
    assert!(example.lines().count() <= 30, "at most 30 lines");
}

#[actix_rt::test]
async fn standalone_serves_its_tools_resource_and_prompt() {
    let client = TestClient::new(standalone::server().build().unwrap()).await;
    let tools = client.list_tools().await.unwrap();
    let add = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(add.description, "Adds two numbers.", "the description comes from the doc comment");
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));
    assert_eq!(text_of(&client.call("add", json!({"a": 2, "b": 3.5})).await.unwrap()), "5.5");
    assert!(text_of(&client.call("now", json!({})).await.unwrap()).contains("SystemTime"));
    let bad = client.call("add", json!({"a": "two"})).await.unwrap();
    assert_eq!(bad.is_error, Some(true), "bad arguments are a tool error the model can correct");
    let motd = client.read("memo://motd").await.unwrap();
    assert_eq!(motd, vec![ResourceContents::text("memo://motd", "text/plain", "Be kind.")]);
    let prompts = client.list_prompts().await.unwrap();
    let args = &prompts[0].arguments;
    assert_eq!(
        (args[0].name.as_str(), args[0].required, args[0].description.as_deref()),
        ("topic", Some(true), Some("What the haiku is about."))
    );
    let haiku = client.get_prompt("haiku", json!({"topic": "rust"})).await.unwrap();
    assert_eq!(haiku, GetPromptResult::user_text("Write a haiku about rust."));
    let missing = client.get_prompt("haiku", json!({})).await.unwrap_err();
    assert_eq!(missing.code(), Some(-32602));
    let info = client.discover().await.unwrap();
    assert!(info.capabilities.tools.is_some());
}

#[actix_rt::test]
async fn newcomer_tools_echo_greet_add_tools_and_stop_when_cancelled() {
    let mut config = Config::default();
    config.request.timeout_ms = 300;
    let client = TestClient::new(newcomer::server().config(config).build().unwrap()).await;
    assert_eq!(text_of(&client.call("echo", json!({"text": "hi"})).await.unwrap()), "hi");
    assert_eq!(text_of(&client.call("hello", json!({})).await.unwrap()), "Hello!");
    let added = client.call("add_tool", json!({"name": "greeter"})).await.unwrap();
    assert_eq!(text_of(&added), "added greeter");
    assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "greeter"));
    assert_eq!(text_of(&client.call("greeter", json!({})).await.unwrap()), "Hi from a new tool");
    let again = client.call("add_tool", json!({"name": "greeter"})).await.unwrap();
    assert_eq!(again.is_error, Some(true), "a taken name is refused, not replaced: {again:?}");
    let bad = client.call("add_tool", json!({"name": "no spaces allowed"})).await.unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(text_of(&client.call("count", json!({"to": 2})).await.unwrap()), "counted to 2");
    // 100 steps of 100 ms outlive the 300 ms request timeout: the request
    // ends with an error, and the tool's sleep ends with it.
    let slow = client.call("count", json!({"to": 100})).await.unwrap_err();
    assert_eq!(slow.code(), Some(-32603), "{slow}");
    let today = client.read("memo://today").await.unwrap();
    assert!(
        matches!(&today[..], [ResourceContents::Text { text, mime_type: Some(m), .. }] if text.starts_with("Today is") && m == "text/plain")
    );
    let p = client.get_prompt("summarize", json!({"text": "a long story"})).await.unwrap();
    assert_eq!(p, GetPromptResult::user_text("Summarize this in one sentence:\na long story"));
}

#[actix_rt::test]
async fn shared_state_is_read_by_every_handler() {
    let client = TestClient::new(shared_state::server().build().unwrap()).await;
    assert_eq!(text_of(&client.call("save", json!({"title": "a", "text": "first"})).await.unwrap()), "1 notes");
    assert_eq!(text_of(&client.call("save", json!({"title": "b", "text": "second"})).await.unwrap()), "2 notes");
    assert_eq!(text_of(&client.call("read", json!({"title": "a"})).await.unwrap()), "first");
    let missing = client.call("read", json!({"title": "z"})).await.unwrap();
    assert_eq!((missing.is_error, text_of(&missing)), (Some(true), "no note titled \"z\""));
}

#[actix_rt::test]
async fn notify_tells_listeners_of_each_tick() {
    let server = notify::server().build().unwrap();
    actix_rt::spawn(notify::tick(server.catalog().clone(), Duration::from_millis(20)));
    let client = TestClient::new(server).await;
    let mut stream = client.listen(json!({"resourceSubscriptions": [notify::TICK]})).await.unwrap();
    assert_eq!(stream.acknowledged["notifications"]["resourceSubscriptions"], json!([notify::TICK]));
    for _ in 0..2 {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.unwrap().unwrap();
        assert_eq!(
            (n["method"].as_str(), n["params"]["uri"].as_str()),
            (Some("notifications/resources/updated"), Some(notify::TICK)),
            "{n}"
        );
    }
    let read = client.read(notify::TICK).await.unwrap();
    let [ResourceContents::Text { text, .. }] = &read[..] else { panic!("{read:?}") };
    assert!(text.parse::<u64>().unwrap() >= 2, "{text}");
}

#[actix_rt::test]
async fn actors_publish_through_the_notifier_and_hear_through_a_subscription() {
    use actix_mcp::hub::bridge::HubEvent;
    use actix_mcp::hub::Publish;
    use actix_mcp::protocol::subscription::Event;
    let server = actor_bridge::server().build().unwrap();
    let auditor = actor_bridge::Auditor::default().start();
    let subscription = server.subscribe(actor_bridge::audit_filter(), auditor.clone().recipient()).await.unwrap();
    let notifier = server.notifier();
    notifier.do_send(Publish::local(Event::ResourceUpdated { uri: "memo://elsewhere".into() }));
    notifier.do_send(Publish::local(Event::ResourceUpdated { uri: "memo://board".into() }));
    // A client's listen stream hears the same publish.
    let client = TestClient::new(server.clone()).await;
    let mut stream = client.listen(json!({"toolsListChanged": true})).await.unwrap();
    server.catalog().add_tool(Tool::no_args("late", "d", |_ctx| async { Ok("x") })).unwrap();
    let n = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.unwrap().unwrap();
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let heard = loop {
        let heard = auditor.send(actor_bridge::Heard).await.unwrap();
        if heard.len() >= 2 {
            break heard;
        }
        assert!(tokio::time::Instant::now() < deadline, "heard only {heard:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(heard, vec!["updated memo://board".to_owned(), "ToolsListChanged".to_owned()], "the filter holds");
    subscription.close();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let heard = auditor.send(actor_bridge::Heard).await.unwrap();
        if heard.len() == 3 {
            assert!(heard[2].starts_with("ended: "), "{heard:?}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no end: {heard:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _: Option<HubEvent> = None;
}

#[actix_rt::test]
async fn embed_serves_structured_output_at_its_own_path() {
    let server = embed::server().build().unwrap();
    assert_eq!(server.config().http.path, "/api/mcp");
    let client = TestClient::new(server).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0].output_schema.as_ref().unwrap()["properties"]["sum"]["type"], "integer");
    let r = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 5})));
}

/// One stateless request, as a WebSocket text frame.
fn frame(id: u64, method: &str, mut params: serde_json::Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "ws-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The example's WebSocket driver serves MCP over a real WebSocket on
/// loopback: a call is answered, a listen stream is acknowledged with its
/// `subscriptionId`, and a malformed frame gets its JSON-RPC error while
/// the connection carries on.
#[actix_rt::test]
async fn websocket_carries_requests_and_listen_streams() {
    use actix_web::{web, App, HttpServer};
    use awc::ws;
    let mcp = websocket::server().build().unwrap();
    let http = HttpServer::new(move || {
        App::new().app_data(web::Data::new(mcp.clone())).route("/ws", web::get().to(websocket::websocket))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = http.addrs()[0];
    let running = http.run();
    let handle = running.handle();
    actix_rt::spawn(running);
    let (_, mut conn) = awc::Client::new().ws(format!("ws://{addr}/ws")).connect().await.expect("upgrade");
    let send = |text: String| ws::Message::Text(text.into());
    use futures::SinkExt;
    conn.send(send(frame(1, "tools/call", json!({"name": "shout", "arguments": {"text": "hi"}})))).await.unwrap();
    let answer = recv(&mut conn).await;
    assert_eq!((answer["id"].clone(), answer["result"]["content"][0]["text"].clone()), (json!(1), json!("HI")));
    conn.send(send(frame(2, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}))))
        .await
        .unwrap();
    let ack = recv(&mut conn).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 2);
    conn.send(send("{not json".into())).await.unwrap();
    assert_eq!(recv(&mut conn).await["error"]["code"], -32700);
    conn.send(send(frame(3, "tools/list", json!({})))).await.unwrap();
    assert_eq!(recv(&mut conn).await["result"]["tools"][0]["name"], "shout");
    conn.send(ws::Message::Close(None)).await.unwrap();
    handle.stop(true).await;
}

/// The next text frame, as JSON (other frames skipped; at most 10 s).
async fn recv<S>(conn: &mut S) -> serde_json::Value
where
    S: futures::Stream<Item = Result<awc::ws::Frame, awc::error::WsProtocolError>> + Unpin,
{
    loop {
        match tokio::time::timeout(Duration::from_secs(10), conn.next()).await.expect("a frame in time") {
            Some(Ok(awc::ws::Frame::Text(t))) => return serde_json::from_slice(&t).unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("the connection ended: {other:?}"),
        }
    }
}

/// The MCP Apps example: the view is served, the tool links to it, and the
/// result carries text for clients without views and data for the chart.
#[actix_rt::test]
async fn app_links_its_tool_to_a_chart_view() {
    let ui = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
    let client = TestClient::new(app::server().build().unwrap()).await.with_capabilities(ui);
    let discover = client.discover().await.unwrap();
    let extensions = serde_json::to_value(&discover.capabilities).unwrap()["extensions"].clone();
    assert!(extensions.get("io.modelcontextprotocol/ui").is_some(), "{extensions}");
    let tools = client.list_tools().await.unwrap();
    let sales = tools.iter().find(|t| t.name == "sales").unwrap();
    assert_eq!(sales.meta.as_ref().unwrap()["ui"]["resourceUri"], "ui://sales/chart");
    let view = client.read("ui://sales/chart").await.unwrap();
    let [ResourceContents::Text { text, mime_type: Some(mime), .. }] = &view[..] else { panic!("{view:?}") };
    assert_eq!(mime, "text/html;profile=mcp-app");
    assert!(text.contains("mcpApp.onToolResult") && text.contains("<svg id=\"chart\""));
    let r = client.call("sales", json!({"region": "north"})).await.unwrap();
    assert!(text_of(&r).starts_with("Jan: 40, Feb: 47"), "{}", text_of(&r));
    let s = r.structured_content.unwrap();
    assert_eq!(s["months"].as_array().unwrap().len(), 6);
    assert_eq!(s["months"][5]["value"], 75.0);
}

#[actix_rt::test]
async fn client_lists_calls_and_hears_the_change_it_caused() {
    use tokio::io::AsyncBufReadExt;
    let server = common::TestServer::everything();
    let mut child = tokio::process::Command::new(common::example_binary("client"))
        .args([server.url.as_str(), "test_trigger_tool_change", "{}"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await {
        let done = line.starts_with("changed:");
        seen.push(line);
        if done {
            break;
        }
    }
    assert_eq!(seen.first().map(String::as_str), Some("actix-mcp speaks 2026-07-28"), "{seen:#?}");
    assert!(seen.iter().any(|l| l.starts_with("tool echo: ")), "{seen:#?}");
    let called = seen.iter().find_map(|l| l.strip_prefix("test_trigger_tool_change: ")).expect("the call's line");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(called).unwrap(),
        json!([{"type": "text", "text": "test_dynamic_tool added"}])
    );
    assert_eq!(seen.last().map(String::as_str), Some("changed: notifications/tools/list_changed"), "{seen:#?}");
    child.kill().await.unwrap();
    server.stop().await;
}
