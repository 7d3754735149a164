//! An MCP endpoint inside an existing actix-web application, built from the
//! core of actix-mcp alone: no Redis, no HTTP client, no TLS, no Prometheus
//! exporter, no command-line parser.
//!
//! ```toml
//! [dependencies]
//! actix-mcp = { version = "0.1", default-features = false }
//! ```
//!
//! ```sh
//! cargo run --target-dir target/lean -p actix-mcp-lean -- [ADDR]   # tests/lean builds it as above
//! ```
//!
//! It listens on `ADDR` (default `127.0.0.1:8091`; port 0 picks a free one)
//! and prints `listening on http://ADDR/mcp` once bound. The `ACTIX_MCP_*`
//! environment overrides apply, so a setting this build cannot honour (say
//! `ACTIX_MCP_HUB_BACKEND=redis`) ends the program with a sentence naming the
//! feature it needs.

use actix_mcp::prelude::*;
use actix_web::{web, App, HttpServer};

/// Multiplies two integers.
#[derive(Deserialize, JsonSchema)]
pub struct MulArgs {
    /// First factor.
    pub a: i64,
    /// Second factor.
    pub b: i64,
}

/// The application's MCP server: one typed tool and one resource.
pub fn server(config: Config) -> McpServerBuilder {
    McpServer::builder(server_info!())
        .config(config)
        .tool(Tool::new("mul", "Multiplies two integers.", |args: MulArgs, _ctx| async move {
            Ok(args.a.checked_mul(args.b).map_or_else(
                || CallToolResult::error("the product overflows a 64-bit integer"),
                |p| CallToolResult::text(p.to_string()),
            ))
        }))
        .resource(Resource::text("app://about", "about", "text/plain", "An app with an MCP endpoint."))
}

#[actix_web::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Builds the server from the defaults and the environment, then serves the app.
async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8091".into());
    let mut config = Config::default();
    config.apply_env(Config::env_overrides())?;
    let mcp = server(config).build()?;
    let http = HttpServer::new(move || {
        App::new()
            .route("/health", web::get().to(|| async { "ok" }))
            .configure(actix_mcp::transport::http::configure(mcp.clone()))
    })
    .workers(1)
    .bind(&addr)?;
    for bound in http.addrs() {
        eprintln!("listening on http://{bound}/mcp");
    }
    http.run().await?;
    Ok(())
}
