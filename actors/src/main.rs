//! `actix-mcp`: parses the command line, builds the configuration and the
//! root logger, then serves Streamable HTTP or stdio.

use std::process::ExitCode;

/// jemalloc: about a fifth less CPU per request than glibc's allocator under
/// many connections, and less memory per open stream.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Freed memory goes back to the system within about a second, from
/// jemalloc's background thread, also when the process is otherwise idle
/// (after thousands of streams closed, say).
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

use actix_mcp::cli::{Cli, Command};
use actix_mcp::config::Config;
use actix_mcp::{catalogs, logging, transport, McpServer};
use clap::Parser;

fn env_vars() -> Vec<(String, String)> {
    std::env::vars().filter(|(k, _)| k.starts_with("ACTIX_MCP_")).collect()
}

/// Which transport to serve.
#[derive(Clone, Copy)]
enum Mode {
    Http,
    Stdio,
}

/// Builds the server inside a fresh actix system and serves until the end.
fn run(config: Config, mode: Mode) -> Result<(), String> {
    let (log, guard) = logging::root_logger_with_guard(&config.log).map_err(|e| e.to_string())?;
    let system = actix_web::rt::System::new();
    let result = system.block_on(async move {
        let catalog = catalogs::build(&config, &log)?;
        let server = McpServer::new(catalog, config, log);
        let served = match mode {
            Mode::Http => transport::http::serve(server).await,
            Mode::Stdio => transport::stdio::serve_std(server).await,
        };
        // The server's actors get their first poll inside the runtime even
        // when serving failed at once (a port in use): dropping the system
        // afterwards must not start them outside it.
        actix_web::rt::task::yield_now().await;
        served.map_err(|e| e.to_string())
    });
    if let Mode::Stdio = mode {
        // A read of stdin may still be blocked in a runtime thread (shutdown
        // by signal, stdin still open): exit without waiting for it.
        drop(guard);
        std::process::exit(match &result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("actix-mcp: {e}");
                1
            }
        });
    }
    drop(system);
    drop(guard);
    result
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Stdio(args)) => {
            args.load(env_vars()).map_err(|e| e.to_string()).and_then(|c| run(c, Mode::Stdio))
        }
        Some(Command::Serve(args)) => args.load(env_vars()).map_err(|e| e.to_string()).and_then(|c| run(c, Mode::Http)),
        None => cli.serve.load(env_vars()).map_err(|e| e.to_string()).and_then(|c| run(c, Mode::Http)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("actix-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
