//! The server `benches/scale.sh` grows: the `everything` catalog (its
//! `echo`, `sleep`, `task_echo` and trigger tools, which the load harness
//! drives) plus generated items, so that one catalog can be measured at
//! 10 or 100,000 tools.
//!
//! ```text
//! scale_server [--config FILE] [--http ADDR]
//! SCALE_TOOLS=N       tools `tool_00000`…, each echoing `text` back (default 0)
//! SCALE_RESOURCES=N   text resources `scale://item/00000`… (default 0)
//! ```
//!
//! The configuration and its `ACTIX_MCP_*` overrides apply as for the
//! `actix-mcp` binary (`--config FILE`; else the embedded defaults and the
//! environment).
use std::sync::Arc;

/// The allocator and its settings of the `actix-mcp` binary, so that the
/// memory measured is what the binary would use.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// As in the binary: freed memory goes back to the system within a second.
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

use actix_mcp::catalogs::everything;
use actix_mcp::config::cli::CommonArgs;
use actix_mcp::prelude::*;

/// Arguments of a generated tool.
#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text to send back.
    text: String,
}

/// A count from the environment variable `name` (0 when unset).
fn count(name: &str) -> usize {
    std::env::var(name).ok().map_or(0, |v| v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a count")))
}

/// The everything catalog grown by `tools` tools and `resources` resources,
/// added in one batch (one change, not one per item).
fn catalog(tools: usize, resources: usize) -> Arc<Catalog> {
    let c = everything::catalog();
    c.batch(|c| {
        for i in 0..tools {
            let echo = |t: Text, _ctx| async move { Ok(t.text) };
            c.add_tool(Tool::new(format!("tool_{i:05}"), "Echoes `text` back (a generated tool)", echo))
                .expect("generated tool names are valid and distinct");
        }
        for i in 0..resources {
            let uri = format!("scale://item/{i:05}");
            c.add_resource(Resource::text(uri, format!("item {i}"), "text/plain", format!("item {i}")))
                .expect("generated URIs are distinct");
        }
    });
    Arc::new(c)
}

fn main() -> Result<(), BuildError> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        Some(args.get(at + 1).unwrap_or_else(|| panic!("{name} needs a value")).clone())
    };
    // Defaults < --config FILE < ACTIX_MCP_* variables, as the binary loads them.
    let options = CommonArgs { config: flag("--config").map(Into::into), ..CommonArgs::default() };
    let config = options.load(Config::env_overrides())?;
    let started = std::time::Instant::now();
    let catalog = catalog(count("SCALE_TOOLS"), count("SCALE_RESOURCES"));
    eprintln!("scale_server: catalog grown in {:?}", started.elapsed());
    let builder = McpServer::builder(server_info!()).config(config).catalog(catalog);
    match flag("--http") {
        Some(addr) => builder.run_http(&addr),
        None => builder.run(),
    }
}
