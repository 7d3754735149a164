//! Embedding actix-mcp into an existing actix-web application: the app keeps
//! its own routes and mounts the MCP endpoint at `/api/mcp`, with a tool of
//! its own defined with typed arguments.
//!
//! ```sh
//! cargo run -p actix-mcp --example embed
//! curl -s http://127.0.0.1:8090/health
//! ```

use std::sync::Arc;

use actix_mcp::catalog::{Catalog, Resource, Tool};
use actix_mcp::config::{Config, LogConfig};
use actix_mcp::{logging, McpServer};
use actix_web::{web, App, HttpServer};
use mcp_protocol::model::tools::CallToolResult;
use serde_json::json;

/// Arguments of the `add` tool; the input schema is derived from this type.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
}

/// The application's own catalog.
fn catalog() -> Arc<Catalog> {
    let catalog = Catalog::new();
    catalog.add_tool(Tool::new("add", "Adds two integers", |args: AddArgs, ctx| async move {
        slog::info!(ctx.logger(), "adding"; "a" => args.a, "b" => args.b);
        Ok(CallToolResult::structured(json!({ "sum": args.a + args.b })))
    }));
    catalog.add_resource(Resource::text("app://motd", "motd", "text/plain", "Welcome to the app."));
    Arc::new(catalog)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let mut config = Config::default();
    config.http.path = "/api/mcp".into();
    let log = logging::root_logger(&LogConfig::default()).map_err(std::io::Error::other)?;
    let mcp = McpServer::new(catalog(), config, log);
    eprintln!("listening on http://127.0.0.1:8090/api/mcp");
    HttpServer::new(move || {
        App::new()
            .route("/health", web::get().to(|| async { "ok" }))
            .configure(actix_mcp::transport::http::configure(mcp.clone()))
    })
    .bind(("127.0.0.1", 8090))?
    .run()
    .await
}
