//! The command line: scenarios and their options.

use clap::{Args, Parser, Subcommand, ValueEnum};
use mcp_load::triggers::{RESOURCES_UPDATED, RESOURCE_TRIGGER, TOOLS_LIST_CHANGED, TOOLS_TRIGGER};
use serde_json::json;

/// The resource the `fanout` scenario watches.
pub(crate) const WATCHED: &str = "test://watched-resource";
/// The everything catalog's event type a tool call fires, and the tool.
pub(crate) const EVENT_TYPE: &str = "signal.fired";
pub(crate) const EVENT_TRIGGER: &str = "fire_event";
pub(crate) const EVENT_NOTIFICATION: &str = "notifications/events/event";

#[derive(Parser)]
#[command(name = "mcp-load", about = "Load scenarios for stateless MCP servers (every reply verified)")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) scenario: Scenario,
}

#[derive(Args, Clone)]
pub(crate) struct Common {
    /// The MCP endpoint (loopback).
    #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
    pub(crate) url: String,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 16)]
    pub(crate) connections: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 10)]
    pub(crate) duration: u64,
    /// Stop after this many requests in all.
    #[arg(long, default_value_t = 10_000_000)]
    pub(crate) requests: u64,
    /// Loopback source addresses to spread connections over (127.0.0.1..N).
    #[arg(long, default_value_t = 1)]
    pub(crate) sources: usize,
    /// Write an HTML report: the latency percentile curve (HDR) and the
    /// throughput per second of the run.
    #[arg(long)]
    pub(crate) report: Option<std::path::PathBuf>,
    /// An earlier report whose curves the new one draws beside this run's.
    #[arg(long, requires = "report")]
    pub(crate) baseline: Option<std::path::PathBuf>,
    /// The run's name in the report (default: scenario, connections, URL).
    #[arg(long)]
    pub(crate) label: Option<String>,
}

impl Common {
    /// Writes the report, if asked for, of a run labelled `label`.
    pub(crate) fn write_report(&self, label: String, h: &hdrhistogram::Histogram<u64>, per_second: Vec<u64>) {
        let Some(path) = &self.report else { return };
        let label = self.label.clone().unwrap_or(label);
        // Whole seconds of the run only: the last, partial one would read as a drop.
        let mut per_second = per_second;
        per_second.truncate(self.duration as usize);
        let run = mcp_load::report::Run::new(label, h, per_second);
        let baseline = self.baseline.as_ref().map(|b| {
            let text = std::fs::read_to_string(b).unwrap_or_else(|e| panic!("--baseline {}: {e}", b.display()));
            mcp_load::report::Run::read(&text)
                .unwrap_or_else(|| panic!("--baseline {}: not an mcp-load report", b.display()))
        });
        std::fs::write(path, mcp_load::report::html(&run, baseline.as_ref()))
            .unwrap_or_else(|e| panic!("--report {}: {e}", path.display()));
        println!("report: {}", path.display());
    }
}

#[derive(Args, Clone)]
pub(crate) struct Streams {
    /// The MCP endpoint (loopback).
    #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
    pub(crate) url: String,
    /// Listen streams to open.
    #[arg(long, default_value_t = 1000)]
    pub(crate) streams: usize,
    /// Loopback source addresses to spread connections over (127.0.0.1..N).
    #[arg(long, default_value_t = 4)]
    pub(crate) sources: usize,
    /// Server process to measure (RSS).
    #[arg(long)]
    pub(crate) pid: Option<u32>,
    /// Carry the streams over HTTP/2 (prior knowledge; the server needs
    /// `--h2c`), `--h2-connections` connections for all of them.
    #[arg(long)]
    pub(crate) http2: bool,
    /// HTTP/2 connections the streams are spread over.
    #[arg(long, default_value_t = 16)]
    pub(crate) h2_connections: usize,
    /// URIs each stream subscribes to: the watched one and N-1 of its own
    /// (`test://scale/STREAM/J`, never updated), for the routing cost of
    /// many subscriptions.
    #[arg(long, default_value_t = 1)]
    pub(crate) subscriptions: usize,
    /// More instances' endpoints (repeat): streams are spread over `--url`
    /// and these in turn, and events are triggered on `--url` (HTTP/1.1).
    #[arg(long = "also-url")]
    pub(crate) also_urls: Vec<String>,
    /// More processes whose CPU per event to report (repeat): the other
    /// instances, Redis.
    #[arg(long = "cpu-of")]
    pub(crate) cpu_of: Vec<u32>,
}

#[derive(Subcommand)]
pub(crate) enum Scenario {
    /// tools/call of one tool (default `echo`, checked to echo its text).
    Call {
        #[command(flatten)]
        common: Common,
        /// Tool to call with `{"text": …}`.
        #[arg(long, default_value = "echo")]
        tool: String,
    },
    /// A mix of server/discover, tools/list, tools/call, resources/read,
    /// prompts/get and a three-round multi round-trip tools/call.
    Mixed {
        #[command(flatten)]
        common: Common,
    },
    /// Task creation and completion (the Tasks extension): `task_echo` as
    /// a task, then `tasks/get` until read back completed.
    Tasks {
        #[command(flatten)]
        common: Common,
    },
    /// N long `events/poll`s of `signal.fired` held open; one `fire_event`
    /// answers them: the latency from the trigger to each answer.
    Longpoll {
        /// The MCP endpoint (loopback).
        #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
        url: String,
        /// Polls held at once, each on its own connection.
        #[arg(long, default_value_t = 1000)]
        polls: usize,
        /// Events to fire.
        #[arg(long, default_value_t = 20)]
        events: usize,
        /// Spread the connections over 127.0.0.1..127.0.0.N.
        #[arg(long, default_value_t = 1)]
        sources: usize,
        /// Server process to measure (CPU).
        #[arg(long)]
        pid: Option<u32>,
    },
    /// Open N listen streams and report the server's RSS growth per stream.
    Listen {
        #[command(flatten)]
        streams: Streams,
        /// Seconds to hold the streams open before closing them.
        #[arg(long, default_value_t = 2)]
        hold: u64,
        /// Seconds to sample the server's RSS after closing them.
        #[arg(long, default_value_t = 3)]
        settle: u64,
    },
    /// N open streams; trigger one event; delivery latency until every stream has it.
    Fanout {
        #[command(flatten)]
        streams: Streams,
        /// Events to trigger.
        #[arg(long, default_value_t = 20)]
        events: usize,
        /// Which event: `resources/updated` of one URI every stream
        /// subscribed to, or `tools/list_changed`.
        #[arg(long, value_enum, default_value_t = FanoutEvent::Resource)]
        event: FanoutEvent,
    },
    /// Bounded mixed load against instances while sampling their RSS, files and threads.
    Soak(Soak),
    /// Catalog size: every page of tools/list and resources/list, then
    /// calls of one tool and reads of one resource (one `SCALE` line).
    Catalog {
        /// The MCP endpoint (loopback).
        #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
        url: String,
        /// Calls and reads to time.
        #[arg(long, default_value_t = 200)]
        samples: usize,
        /// The tool to call (an echo).
        #[arg(long, default_value = "echo")]
        tool: String,
        /// The resource to read.
        #[arg(long, default_value = "test://static-text")]
        uri: String,
        /// Server process to measure (RSS).
        #[arg(long)]
        pid: Option<u32>,
    },
    /// In-flight work: N concurrent `sleep` calls over HTTP/2, memory per
    /// call and a fast call's latency beside them (one `SCALE` line).
    Inflight {
        /// The MCP endpoint (loopback).
        #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
        url: String,
        /// Concurrent sleeping calls.
        #[arg(long, default_value_t = 1000)]
        calls: usize,
        /// How long each sleeps, ms (longer than opening them all takes).
        #[arg(long, default_value_t = 20_000)]
        ms: u64,
        /// HTTP/2 connections the calls are spread over.
        #[arg(long, default_value_t = 64)]
        h2_connections: usize,
        /// Fast calls to time, before and beside the sleeping ones.
        #[arg(long, default_value_t = 200)]
        samples: usize,
        /// Server process to measure (RSS).
        #[arg(long)]
        pid: Option<u32>,
    },
    /// Legacy sessions: open N, memory per session, then calls in one of
    /// them (one `SCALE` line).
    Sessions {
        /// The MCP endpoint (loopback).
        #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
        url: String,
        /// Sessions to open.
        #[arg(long, default_value_t = 1000)]
        sessions: usize,
        /// Connections calling in the last session.
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// Seconds of calls.
        #[arg(long, default_value_t = 3)]
        duration: u64,
        /// Server process to measure (RSS).
        #[arg(long)]
        pid: Option<u32>,
    },
    /// Live tasks: create N (`task_echo`), then `tasks/get` across them
    /// (one `SCALE` line).
    LiveTasks {
        /// The MCP endpoint (loopback).
        #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
        url: String,
        /// Tasks to create.
        #[arg(long, default_value_t = 1000)]
        tasks: usize,
        /// Connections creating them.
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// `tasks/get`s to time.
        #[arg(long, default_value_t = 500)]
        samples: usize,
        /// Server process to measure (RSS).
        #[arg(long)]
        pid: Option<u32>,
    },
    /// Open and close listen streams continuously; sample the server's RSS.
    Churn {
        #[command(flatten)]
        streams: Streams,
        /// Streams opened at the same time.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// Seconds to run.
        #[arg(long, default_value_t = 10)]
        duration: u64,
    },
}

/// Options of the `soak` scenario.
#[derive(Args, Clone)]
pub(crate) struct Soak {
    /// MCP endpoints (loopback), one per instance; repeat the option.
    #[arg(long = "url", required = true)]
    pub(crate) urls: Vec<String>,
    /// Server processes to sample (RSS, open files, threads); repeat the option.
    #[arg(long = "pid")]
    pub(crate) pids: Vec<u32>,
    /// Seconds of load.
    #[arg(long, default_value_t = 1200)]
    pub(crate) duration: u64,
    /// Requests per second in all, paced over `--connections`.
    #[arg(long, default_value_t = 1000)]
    pub(crate) rate: u64,
    /// Connections sending the paced requests.
    #[arg(long, default_value_t = 8)]
    pub(crate) connections: usize,
    /// Listen streams per instance held for the whole run.
    #[arg(long, default_value_t = 250)]
    pub(crate) listeners: usize,
    /// Listen streams opened and closed continuously, at the same time.
    #[arg(long, default_value_t = 8)]
    pub(crate) churn: usize,
    /// Milliseconds between triggered events.
    #[arg(long, default_value_t = 500)]
    pub(crate) trigger_ms: u64,
    /// Seconds between samples.
    #[arg(long, default_value_t = 10)]
    pub(crate) sample_secs: u64,
    /// Seconds to wait, after the load, for open files to come back to the baseline.
    #[arg(long, default_value_t = 30)]
    pub(crate) settle: u64,
    /// Where the samples go (CSV).
    #[arg(long, default_value = "soak-samples.csv")]
    pub(crate) samples: std::path::PathBuf,
}

/// The event a fan-out run triggers (with the `everything` catalog's trigger tools).
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum FanoutEvent {
    /// `notifications/resources/updated` for `test://watched-resource`.
    Resource,
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/events/event` of `signal.fired`, on `events/stream`
    /// streams (the Events extension), fired by `fire_event`.
    Events,
}

impl FanoutEvent {
    /// What stream `stream` is opened with: for a resource, a listen with
    /// `subscriptions` URIs (the watched one and its own others).
    pub(crate) fn filter_of(self, stream: usize, subscriptions: usize) -> crate::streams::Opening {
        use crate::streams::Opening;
        match self {
            FanoutEvent::Resource => {
                let mut uris = vec![WATCHED.to_owned()];
                uris.extend((1..subscriptions).map(|j| format!("test://scale/{stream}/{j}")));
                Opening::Listen(json!({"resourceSubscriptions": uris}))
            }
            FanoutEvent::Tools => Opening::Listen(json!({"toolsListChanged": true})),
            FanoutEvent::Events => Opening::Events(json!({"name": EVENT_TYPE})),
        }
    }
    /// The trigger tool and its arguments.
    pub(crate) fn trigger(self) -> (&'static str, serde_json::Value) {
        match self {
            FanoutEvent::Resource => (RESOURCE_TRIGGER, json!({"uri": WATCHED})),
            FanoutEvent::Tools => (TOOLS_TRIGGER, json!({})),
            FanoutEvent::Events => (EVENT_TRIGGER, json!({"message": "fan out"})),
        }
    }
    /// The method of the notification it causes.
    pub(crate) fn method(self) -> &'static str {
        match self {
            FanoutEvent::Resource => RESOURCES_UPDATED,
            FanoutEvent::Tools => TOOLS_LIST_CHANGED,
            FanoutEvent::Events => EVENT_NOTIFICATION,
        }
    }
}
