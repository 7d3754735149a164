//! An existing actix-web app with its own routes mounts the MCP endpoint
//! through `transport::http::configure`, over real loopback HTTP.

mod common;

use std::sync::Arc;

use actix_mcp::catalog::{Catalog, Tool};
use actix_mcp::{telemetry::logging, McpServer};
use actix_web::{web, App, HttpServer};
use common::*;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[actix_rt::test]
async fn mounts_next_to_existing_routes() {
    let catalog = Catalog::new();
    catalog
        .add_tool(Tool::new("add", "Adds", |x: AddArgs, _| async move {
            Ok(CallToolResult::structured(json!({"sum": x.a + x.b})))
        }))
        .unwrap();
    let mut config = test_config();
    config.http.path = "/api/mcp".into();
    let mcp = McpServer::new(Arc::new(catalog), config, logging::discard()).unwrap();
    let server = HttpServer::new(move || {
        App::new()
            .route("/health", web::get().to(|| async { "ok" }))
            .configure(actix_mcp::transport::http::configure(mcp.clone()))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);

    let health = client().get(format!("http://{addr}/health")).send().await.unwrap().text().await.unwrap();
    assert_eq!(health, "ok");
    let url = format!("http://{addr}/api/mcp");
    let r = post(&url, &request(json!(1), "tools/call", json!({"name": "add", "arguments": {"a": 2, "b": 40}}))).await;
    assert_eq!(r.response()["result"]["structuredContent"]["sum"], 42, "{}", r.raw);
    // Typed arguments that do not fit are a tool execution error the model can read.
    let r = post(&url, &request(json!(2), "tools/call", json!({"name": "add", "arguments": {"a": "two"}}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.response()["result"]["isError"], true, "{}", r.raw);
    let r = post(&url, &request(json!(3), "tools/list", json!({}))).await;
    let schema = &r.response()["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer");
    handle.stop(false).await;
}
