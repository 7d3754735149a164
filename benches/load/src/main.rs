//! `mcp-load`: load scenarios against any 2026-07-28 MCP server URL, every
//! reply verified. Bounded in time and count; loopback targets only.
//!
//! ```text
//! mcp-load call    --url http://127.0.0.1:8080/mcp --connections 16 --duration 10 [--tool echo]
//! mcp-load mixed   --url … --connections 16 --duration 10
//! mcp-load tasks   --url … --connections 16 --duration 10
//! mcp-load listen  --url … --streams 10000 --pid PID [--sources 4]
//! mcp-load fanout  --url … --streams 10000 --events 20 [--sources 4]
//! mcp-load churn   --url … --concurrency 64 --duration 10 --pid PID
//! mcp-load catalog    --url … [--samples 200 --tool echo --uri test://static-text --pid PID]
//! mcp-load inflight   --url … --calls 10000 --ms 20000 --pid PID
//! mcp-load sessions   --url … --sessions 1000 --pid PID
//! mcp-load live-tasks --url … --tasks 10000 --pid PID
//! mcp-load soak    --url URL_A --url URL_B --pid PID_A --pid PID_B --duration 1200
//! ```

mod cli;
mod longpoll;
mod requests;
mod scale;
mod soak;
mod streams;
mod tasks;

use clap::Parser;

use cli::{Cli, Scenario};
use requests::{call_kind, mixed_kind, requests};
use streams::{churn, fanout, listen};

#[tokio::main]
async fn main() {
    match Cli::parse().scenario {
        Scenario::Call { common, tool } => requests(common, call_kind, tool).await,
        Scenario::Mixed { common } => requests(common, mixed_kind, String::new()).await,
        Scenario::Tasks { common } => tasks::tasks(common).await,
        Scenario::Listen { streams, hold, settle } => listen(streams, hold, settle).await,
        Scenario::Fanout { streams, events, event } => fanout(streams, events, event).await,
        Scenario::Longpoll { url, polls, events, sources, pid } => {
            longpoll::longpoll(longpoll::Plan { url, polls, events, sources, pid }).await
        }
        Scenario::Soak(plan) => soak::soak(plan).await,
        Scenario::Catalog { url, samples, tool, uri, pid } => scale::catalog(url, samples, tool, uri, pid).await,
        Scenario::Inflight { url, calls, ms, h2_connections, samples, pid } => {
            scale::inflight(url, calls, ms, h2_connections, samples, pid).await
        }
        Scenario::Sessions { url, sessions, connections, duration, pid } => {
            scale::sessions(url, sessions, connections, duration, pid).await
        }
        Scenario::LiveTasks { url, tasks, connections, samples, pid } => {
            scale::live_tasks(url, tasks, connections, samples, pid).await
        }
        Scenario::Churn { streams, concurrency, duration } => churn(streams, concurrency, duration).await,
    }
}
