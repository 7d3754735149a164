//! Embedding actix-mcp into an existing actix-web application: the app keeps
//! its own routes and mounts the MCP endpoint at `/api/mcp`, with a tool of
//! its own defined with typed arguments.
//!
//! ```sh
//! cargo run -p actix-mcp --example embed
//! curl -s http://127.0.0.1:8090/health
//! ```

use actix_mcp::prelude::*;
use actix_web::{web, App, HttpServer};

/// Adds two integers.
#[derive(Deserialize, Serialize, JsonSchema)]
pub struct AddArgs {
    /// First addend.
    pub a: i64,
    /// Second addend.
    pub b: i64,
}

/// The sum, as structured output (its schema becomes the tool's `outputSchema`).
#[derive(Serialize, JsonSchema)]
pub struct Sum {
    /// `a + b`.
    pub sum: i64,
}

/// The application's MCP server, mounted at `/api/mcp`.
pub fn server() -> McpServerBuilder {
    let mut config = Config::default();
    config.http.path = "/api/mcp".into();
    McpServer::builder(server_info!())
        .config(config)
        .tool(Tool::new("add", "", |args: AddArgs, ctx| async move {
            slog::info!(ctx.logger(), "adding"; "a" => args.a, "b" => args.b);
            Ok(Json(Sum { sum: args.a + args.b }))
        }))
        .resource(Resource::text("app://motd", "motd", "text/plain", "Welcome to the app."))
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcp = server().build()?;
    eprintln!("listening on http://127.0.0.1:8090/api/mcp");
    HttpServer::new(move || {
        App::new()
            .route("/health", web::get().to(|| async { "ok" }))
            .configure(actix_mcp::transport::http::configure(mcp.clone()))
    })
    .bind(("127.0.0.1", 8090))?
    .run()
    .await?;
    Ok(())
}
