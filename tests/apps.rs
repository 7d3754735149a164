//! The MCP Apps extension over real loopback HTTP, a legacy session and a
//! stdio child: negotiation, views with their `_meta.ui`, tools linked to
//! views, app-only tools hidden from and refused to clients without the
//! extension, and the builder refusing links that lead nowhere.

use crate::common;

use actix_mcp::prelude::*;
use common::*;
use serde_json::{json, Value};

const UI: &str = "io.modelcontextprotocol/ui";

/// `_meta` of a client that renders views.
fn with_ui() -> Value {
    meta_with(json!({"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}}))
}

fn tools_of(reply: &Reply) -> Vec<Value> {
    reply.response()["result"]["tools"].as_array().unwrap_or_else(|| panic!("{}", reply.raw)).clone()
}

async fn all_tools(url: &str, meta: Value) -> Vec<Value> {
    let r = post(url, &request(json!(1), "tools/list", json!({"_meta": meta}))).await;
    let page = tools_of(&r);
    assert!(r.response()["result"].get("nextCursor").is_none(), "one page is enough here");
    page
}

#[actix_rt::test]
async fn views_and_app_only_tools_follow_the_callers_declaration() {
    let srv = TestServer::everything_with(|c| c.server.page_size = 500);
    let discover = post(&srv.url, &request(json!(0), "server/discover", json!({}))).await;
    assert_eq!(
        discover.response()["result"]["capabilities"]["extensions"][UI],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );

    // Without the extension: the linked tool is listed (its text still
    // serves), the app-only one is not, and calling it is refused.
    let plain = all_tools(&srv.url, meta()).await;
    let counter = plain.iter().find(|t| t["name"] == "counter").expect("counter listed");
    assert_eq!(counter["_meta"]["ui"]["resourceUri"], "ui://everything/counter");
    assert_eq!(counter["_meta"]["ui/resourceUri"], "ui://everything/counter");
    assert!(plain.iter().all(|t| t["name"] != "counter_increment"), "app-only tools are hidden");
    let call = |name: &str, meta: Value| request(json!(2), "tools/call", json!({"name": name, "_meta": meta}));
    let r = post(&srv.url, &call("counter", meta())).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "The count is 0.");
    let r = post(&srv.url, &call("counter_increment", meta())).await;
    assert_eq!(r.error_code(), Some(-32021), "{}", r.raw);
    let error = &r.response()["error"];
    assert!(error["message"].as_str().unwrap().contains("only from an MCP Apps view"), "{error}");
    assert!(error["data"]["requiredCapabilities"]["extensions"].get(UI).is_some(), "{error}");

    // With it: listed with its visibility, and callable.
    let rich = all_tools(&srv.url, with_ui()).await;
    let inc = rich.iter().find(|t| t["name"] == "counter_increment").expect("listed to view renderers");
    assert_eq!(inc["_meta"]["ui"]["visibility"], json!(["app"]));
    let r = post(&srv.url, &call("counter_increment", with_ui())).await;
    assert_eq!(r.response()["result"]["structuredContent"], json!({"count": 1}), "{}", r.raw);

    // The view: an HTML document of the app MIME type, with caching hints.
    let r = post(&srv.url, &request(json!(3), "resources/read", json!({"uri": "ui://everything/counter"}))).await;
    let result = &r.response()["result"];
    assert_eq!(result["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    assert!(result["contents"][0]["text"].as_str().unwrap().starts_with("<!doctype html>"));
    assert!(result["contents"][0]["text"].as_str().unwrap().contains("window.mcpApp"));
    assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string(), "{result}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_legacy_session_negotiates_the_extension_at_initialize() {
    let srv = TestServer::everything();
    let open = |caps: Value| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": caps, "clientInfo": {"name": "legacy", "version": "1"}}})
    };
    let renders = json!({"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}});
    // A declaration without the view MIME type renders none of our views.
    let bare = json!({"extensions": {UI: {}}});
    for (caps, sees_app_only) in [(json!({}), false), (bare, false), (renders, true)] {
        let r = legacy_post(&srv.url, None, &open(caps)).await;
        assert!(r.response()["result"]["capabilities"]["extensions"].get(UI).is_some(), "{}", r.raw);
        let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
        let mut names = Vec::new();
        let mut cursor = None::<String>;
        loop {
            let mut body = list.clone();
            if let Some(c) = &cursor {
                body["params"]["cursor"] = json!(c);
            }
            let r = legacy_post(&srv.url, Some(&sid), &body).await;
            names.extend(tools_of(&r).iter().map(|t| t["name"].as_str().unwrap().to_owned()));
            match r.response()["result"]["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert_eq!(names.iter().any(|n| n == "counter_increment"), sees_app_only, "{names:?}");
        assert!(names.iter().any(|n| n == "counter"));
        // The view reads the same in a session (without the caching fields).
        let read = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
            "params": {"uri": "ui://everything/counter"}});
        let r = legacy_post(&srv.url, Some(&sid), &read).await;
        let result = &r.response()["result"];
        assert_eq!(result["contents"][0]["mimeType"], "text/html;profile=mcp-app", "{}", r.raw);
        assert!(result.get("ttlMs").is_none(), "{result}");
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn views_are_read_over_stdio() {
    let mut child = StdioChild::spawn(&[]);
    child.send(&request(json!(1), "resources/read", json!({"uri": "ui://everything/counter"}))).await;
    let m = child.recv_until_id(&json!(1)).await.pop().unwrap();
    assert_eq!(m["result"]["contents"][0]["mimeType"], "text/html;profile=mcp-app", "{m}");
    child.send(&request(json!(2), "tools/call", json!({"name": "counter_increment", "_meta": with_ui()}))).await;
    let m = child.recv_until_id(&json!(2)).await.pop().unwrap();
    assert_eq!(m["result"]["structuredContent"]["count"], 1, "{m}");
    child.close().await;
}

#[actix_rt::test]
async fn the_file_browser_is_served_by_the_fs_catalog() {
    let root = std::env::temp_dir().join(format!("actix-mcp-apps-fs-{}", std::process::id()));
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/notes.txt"), "remember the milk\n").unwrap();
    let fs = actix_mcp::config::FsConfig { root: root.display().to_string(), ..Default::default() };
    let catalog = actix_mcp::catalogs::fs::build(&fs, &actix_mcp::telemetry::logging::discard()).unwrap();
    let srv = TestServer::start(catalog, test_config());
    let tools = all_tools(&srv.url, with_ui()).await;
    let uri = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["_meta"]["ui"]["resourceUri"].clone();
    assert_eq!(uri("list_dir"), "ui://fs/browser");
    assert_eq!(uri("search"), "ui://fs/browser");
    assert_eq!(uri("preview_file"), "ui://fs/browser");
    // The view is read by URI but left out of resources/list (the files).
    let listed = post(&srv.url, &request(json!(1), "resources/list", json!({}))).await;
    assert!(!listed.raw.contains("ui://fs/browser"), "{}", listed.raw);
    let r = post(&srv.url, &request(json!(2), "resources/read", json!({"uri": "ui://fs/browser"}))).await;
    assert_eq!(r.response()["result"]["contents"][0]["_meta"]["ui"]["prefersBorder"], true, "{}", r.raw);
    // preview_file stays in the jail.
    let preview = |path: &str| {
        request(
            json!(3),
            "tools/call",
            json!({"name": "preview_file", "arguments": {"path": path}, "_meta": with_ui()}),
        )
    };
    let r = post(&srv.url, &preview("docs/notes.txt")).await;
    assert_eq!(r.response()["result"]["structuredContent"]["text"], "remember the milk\n", "{}", r.raw);
    let r = post(&srv.url, &preview("../../etc/passwd")).await;
    assert_eq!(r.response()["result"]["isError"], true, "{}", r.raw);
    srv.stop().await;
    std::fs::remove_dir_all(&root).ok();
}

#[actix_rt::test]
async fn links_that_lead_nowhere_are_build_errors_naming_the_tool() {
    let tool = |name: &str, view: &str| Tool::no_args(name.to_owned(), "d", |_ctx| async { Ok("x") }).with_view(view);
    let e = McpServer::builder(server_info!())
        .resource(Resource::text("ui://app/plain", "plain", "text/plain", "not a view"))
        .view(View::new("ui://app/ok", "ok", "<!doctype html><p>ok</p>"))
        .view(View::new("ui://app/fragment", "fragment", "<p>no document</p>"))
        .view(View::new("https://app/remote", "remote", "<!doctype html>"))
        .tool(tool("fine", "ui://app/ok"))
        .tool(tool("missing", "ui://app/missing"))
        .tool(tool("not_a_view", "ui://app/plain"))
        .tool(tool("wrong_scheme", "https://app/x"))
        .build()
        .unwrap_err();
    let BuildError::Catalog(problems) = &e else { panic!("{e}") };
    let text = problems.join("\n");
    for needle in ["ui://app/fragment", "https://app/remote", "\"missing\"", "\"not_a_view\"", "\"wrong_scheme\""] {
        assert!(text.contains(needle), "{needle} not named in:\n{text}");
    }
    assert!(!text.contains("\"fine\""), "{text}");
    assert_eq!(problems.len(), 5, "{text}");
}
