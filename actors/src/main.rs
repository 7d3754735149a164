//! `actix-mcp`: parses the command line, builds the configuration and the
//! root logger, then serves Streamable HTTP or stdio.

use std::process::ExitCode;

use actix_mcp::cli::{Cli, Command};
use actix_mcp::config::Config;
use actix_mcp::{catalogs, logging, McpServer};
use clap::Parser;

fn env_vars() -> Vec<(String, String)> {
    std::env::vars().filter(|(k, _)| k.starts_with("ACTIX_MCP_")).collect()
}

fn build(config: Config) -> Result<McpServer, String> {
    let log = logging::root_logger(&config.log).map_err(|e| e.to_string())?;
    let catalog = catalogs::build(&config.catalog.name)?;
    Ok(McpServer::new(catalog, config, log))
}

fn serve_http(server: McpServer) -> std::io::Result<()> {
    actix_web::rt::System::new().block_on(async move {
        let path = server.config().http.path.clone();
        let log = server.logger().clone();
        let (http, addrs) = server.bind_http()?;
        for addr in &addrs {
            eprintln!("listening on http://{addr}{path}");
        }
        slog::info!(log, "serving Streamable HTTP"; "addrs" => format!("{addrs:?}"), "path" => &path);
        http.await
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Stdio(args)) => args
            .load(env_vars())
            .map_err(|e| e.to_string())
            .and_then(build)
            .and_then(|s| actix_web::rt::System::new().block_on(s.serve_stdio()).map_err(|e| e.to_string())),
        Some(Command::Serve(args)) => args
            .load(env_vars())
            .map_err(|e| e.to_string())
            .and_then(build)
            .and_then(|s| serve_http(s).map_err(|e| e.to_string())),
        None => cli
            .serve
            .load(env_vars())
            .map_err(|e| e.to_string())
            .and_then(build)
            .and_then(|s| serve_http(s).map_err(|e| e.to_string())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("actix-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
