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
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

use actix_mcp::builder::runner::{self, Transport};
#[cfg(feature = "gateway")]
use actix_mcp::config::cli::GatewayCommand;
use actix_mcp::config::cli::{AuditCommand, Cli, Command};
use actix_mcp::config::Config;
#[cfg(feature = "gateway")]
use actix_mcp::gateway::Gateway;
use actix_mcp::{catalogs, McpServer};
use clap::Parser;

/// Reads the configuration again (for a reload): the same file, the
/// environment and flags, in the same order as at start.
type Loader = Box<dyn Fn() -> Result<Config, String> + Send>;

/// Builds the configured catalog and server inside a fresh actix system and
/// serves until the end; SIGHUP reloads what `load` reads.
fn run(config: Config, transport: Transport, load: Loader) -> Result<(), String> {
    let log_config = config.log.clone();
    // Log records name the server as configured (`server.name`).
    let service = config.server.name.clone();
    runner::run(&service, &log_config, None, transport, move |log| {
        let catalog = catalogs::build(&config, &log)?;
        #[cfg(feature = "gateway")]
        let gateway = Gateway::start(&config, &catalog, &log);
        // Two upstreams serving one resource URI is a start-up error.
        #[cfg(feature = "gateway")]
        let refused = gateway.clone();
        #[cfg(feature = "gateway")]
        actix_rt::spawn(async move {
            let why = refused.refusal().await;
            eprintln!("actix-mcp: {why}");
            std::process::exit(2);
        });
        let server = McpServer::new(catalog, config, log).map_err(|e| e.to_string())?;
        #[cfg(feature = "gateway")]
        let server = server.with_gateway(gateway).map_err(|e| e.to_string())?;
        actix_rt::spawn(actix_mcp::server::reload_on_hangup(server.clone(), load));
        Ok::<_, String>(server)
    })
    .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let env = Config::env_overrides();
    let (loaded, transport, reload) = match cli.command {
        #[cfg(feature = "client")]
        Some(Command::Client(args)) => return exit_code(actix_mcp::client::cli::run(args)),
        Some(Command::Audit(AuditCommand::Verify { after, files })) => return verify_audit(after.as_deref(), &files),
        #[cfg(feature = "gateway")]
        Some(Command::Gateway(GatewayCommand::Approve { pins, all, item })) => {
            return exit_code(approve(&pins, all.as_deref(), item.as_deref()))
        }
        Some(Command::Stdio(args)) => {
            let again = args.clone();
            (args.load(env), Transport::Stdio, loader(move |env| again.load(env)))
        }
        Some(Command::Serve(args)) => {
            let again = args.clone();
            (args.load(env), Transport::Http, loader(move |env| again.load(env)))
        }
        None => {
            let again = cli.serve.clone();
            (cli.serve.load(env), Transport::Http, loader(move |env| again.load(env)))
        }
    };
    exit_code(loaded.map_err(|e| e.to_string()).and_then(|c| run(c, transport, reload)))
}

/// A [`Loader`] from a loading function of the command's arguments, with
/// the environment as it is at each reload.
fn loader<E: std::fmt::Display>(load: impl Fn(Vec<(String, String)>) -> Result<Config, E> + Send + 'static) -> Loader {
    Box::new(move || load(Config::env_overrides()).map_err(|e| e.to_string()))
}

/// `actix-mcp audit verify [--after SEQ:SHA256] FILE…`: 0 when the chain
/// holds from `after` (the genesis when not given), 1 naming the first line
/// that breaks it, 2 for an `after` that is not a head or a file that
/// cannot be read (nothing is known of its chain: it is not called altered).
fn verify_audit(after: Option<&str>, files: &[std::path::PathBuf]) -> ExitCode {
    let anchor = match after.map(str::parse::<actix_mcp::audit::Head>).transpose() {
        Ok(anchor) => anchor.unwrap_or_default(),
        Err(e) => {
            eprintln!("actix-mcp: --after: {e}");
            return ExitCode::from(2);
        }
    };
    match actix_mcp::audit::verify_after(&anchor, files) {
        Ok(intact) => {
            println!("{} records intact", intact.records);
            println!("head: seq {} sha256 {}", intact.head_seq, intact.head_hash);
            ExitCode::SUCCESS
        }
        Err(broken) if broken.unreadable() => {
            eprintln!("actix-mcp: {broken}");
            ExitCode::from(2)
        }
        Err(broken) => {
            println!("altered: {broken}");
            ExitCode::FAILURE
        }
    }
}

/// `actix-mcp gateway approve`: the waiting definitions of `all` (an
/// upstream) or of `item` (`UPSTREAM/NAME`) become pins.
#[cfg(feature = "gateway")]
fn approve(pins: &std::path::Path, all: Option<&str>, item: Option<&str>) -> Result<(), String> {
    let (upstream, name) = match (all, item) {
        (Some(upstream), _) => (upstream, None),
        (None, Some(item)) => {
            let (upstream, name) = item.split_once('/').ok_or("name the item as UPSTREAM/NAME")?;
            (upstream, Some(name))
        }
        (None, None) => return Err("name an item (UPSTREAM/NAME) or --all UPSTREAM".into()),
    };
    let n = actix_mcp::gateway::approve_pins(pins, upstream, name)?;
    println!("approved {n} definition(s) of upstream {upstream}; they are served after a reload (SIGHUP) or a restart");
    Ok(())
}

/// Success, or the error on stderr and a failure.
fn exit_code(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("actix-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
