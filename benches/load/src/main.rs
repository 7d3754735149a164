//! `mcp-load`: load scenarios against any 2026-07-28 MCP server URL, every
//! reply verified. Bounded in time and count; loopback targets only.
//!
//! ```text
//! mcp-load call    --url http://127.0.0.1:8080/mcp --connections 16 --duration 10 [--tool echo]
//! mcp-load mixed   --url … --connections 16 --duration 10
//! mcp-load listen  --url … --streams 10000 --pid PID [--sources 4]
//! mcp-load fanout  --url … --streams 10000 --events 20 [--sources 4]
//! mcp-load churn   --url … --concurrency 64 --duration 10 --pid PID
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Args, Parser, Subcommand, ValueEnum};
use http_body_util::BodyExt;
use mcp_load::{
    body, cpu_micros, histogram, rss_kib, source, summary, verify, verify_echo, Conn, Target, EVENT_TIMEOUT,
};
use serde_json::json;

#[derive(Parser)]
#[command(name = "mcp-load", about = "Load scenarios for stateless MCP servers (every reply verified)")]
struct Cli {
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Args, Clone)]
struct Common {
    /// The MCP endpoint (loopback).
    #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
    url: String,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Stop after this many requests in all.
    #[arg(long, default_value_t = 10_000_000)]
    requests: u64,
    /// Loopback source addresses to spread connections over (127.0.0.1..N).
    #[arg(long, default_value_t = 1)]
    sources: usize,
}

#[derive(Args, Clone)]
struct Streams {
    /// The MCP endpoint (loopback).
    #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
    url: String,
    /// Listen streams to open.
    #[arg(long, default_value_t = 1000)]
    streams: usize,
    /// Loopback source addresses to spread connections over (127.0.0.1..N).
    #[arg(long, default_value_t = 4)]
    sources: usize,
    /// Server process to measure (RSS).
    #[arg(long)]
    pid: Option<u32>,
    /// Carry the streams over HTTP/2 (prior knowledge; the server needs
    /// `--h2c`), `--h2-connections` connections for all of them.
    #[arg(long)]
    http2: bool,
    /// HTTP/2 connections the streams are spread over.
    #[arg(long, default_value_t = 16)]
    h2_connections: usize,
}

#[derive(Subcommand)]
enum Scenario {
    /// tools/call of one tool (default `echo`, checked to echo its text).
    Call {
        #[command(flatten)]
        common: Common,
        /// Tool to call with `{"text": …}`.
        #[arg(long, default_value = "echo")]
        tool: String,
    },
    /// A mix of server/discover, tools/list, tools/call, resources/read, prompts/get.
    Mixed {
        #[command(flatten)]
        common: Common,
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

/// The event a fan-out run triggers (with the `everything` catalog's trigger tools).
#[derive(Clone, Copy, ValueEnum)]
enum FanoutEvent {
    /// `notifications/resources/updated` for `test://watched-resource`.
    Resource,
    /// `notifications/tools/list_changed`.
    Tools,
}

impl FanoutEvent {
    /// The listen filter that opts into it.
    fn filter(self) -> serde_json::Value {
        match self {
            FanoutEvent::Resource => json!({"resourceSubscriptions": [WATCHED]}),
            FanoutEvent::Tools => json!({"toolsListChanged": true}),
        }
    }
    /// The trigger tool and its arguments.
    fn trigger(self) -> (&'static str, serde_json::Value) {
        match self {
            FanoutEvent::Resource => ("test_trigger_resource_update", json!({"uri": WATCHED})),
            FanoutEvent::Tools => ("test_trigger_tool_change", json!({})),
        }
    }
    /// The method of the notification it causes.
    fn method(self) -> &'static str {
        match self {
            FanoutEvent::Resource => "notifications/resources/updated",
            FanoutEvent::Tools => "notifications/tools/list_changed",
        }
    }
}

const WATCHED: &str = "test://watched-resource";

struct Tally {
    ok: AtomicU64,
    errors: AtomicU64,
    non_2xx: AtomicU64,
    first_error: std::sync::Mutex<Option<String>>,
}

impl Tally {
    fn new() -> Arc<Self> {
        Arc::new(Tally {
            ok: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            non_2xx: AtomicU64::new(0),
            first_error: Default::default(),
        })
    }
    fn fail(&self, status: u16, e: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if status != 200 {
            self.non_2xx.fetch_add(1, Ordering::Relaxed);
        }
        self.first_error.lock().unwrap().get_or_insert(e);
    }
}

/// One request of a scenario: method, `Mcp-Name`, body, and its reply check.
type Planned = (String, Option<String>, Bytes, Check);

async fn requests(common: Common, kind: fn(u64, &str) -> Planned, tool: String) {
    let target = Target::parse(&common.url).expect("a loopback URL");
    let tally = Tally::new();
    let sent = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(common.duration);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..common.connections {
        let (target, tally, sent, tool) = (target.clone(), tally.clone(), sent.clone(), tool.clone());
        let max = common.requests;
        let src = source(c, common.sources);
        tasks.push(tokio::spawn(async move {
            let mut h = histogram();
            let mut conn = match Conn::open(&target, src).await {
                Ok(c) => c,
                Err(e) => {
                    tally.fail(0, e);
                    return h;
                }
            };
            let mut n = 0u64;
            while Instant::now() < deadline && sent.fetch_add(1, Ordering::Relaxed) < max {
                let id = (c as u64) << 32 | n;
                n += 1;
                let (method, name, body, check) = kind(id, &tool);
                let t0 = Instant::now();
                match conn.call(&method, name.as_deref(), body).await {
                    Ok(answer) => {
                        h.record(t0.elapsed().as_micros().max(1) as u64).ok();
                        match check(&answer, id) {
                            Ok(()) => {
                                tally.ok.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => tally.fail(answer.status, e),
                        }
                    }
                    Err(e) => {
                        tally.fail(0, e);
                        match Conn::open(&target, src).await {
                            Ok(c) => conn = c,
                            Err(_) => break,
                        }
                    }
                }
            }
            h
        }));
    }
    let mut all = histogram();
    for t in tasks {
        all.add(t.await.unwrap()).ok();
    }
    let secs = start.elapsed().as_secs_f64();
    let ok = tally.ok.load(Ordering::Relaxed);
    let errors = tally.errors.load(Ordering::Relaxed);
    println!(
        "requests={} ok={ok} errors={errors} non_2xx={} seconds={secs:.2} req/s={:.0} {}",
        ok + errors,
        tally.non_2xx.load(Ordering::Relaxed),
        (ok + errors) as f64 / secs,
        summary(&all)
    );
    let first = tally.first_error.lock().unwrap().take();
    if let Some(e) = first {
        println!("first error: {e}");
    }
}

type Check = fn(&mcp_load::Answer, u64) -> Result<(), String>;

fn echo_text(id: u64) -> String {
    format!("hello-{id}")
}

fn call_kind(id: u64, tool: &str) -> Planned {
    let b = body(id, "tools/call", json!({"name": tool, "arguments": {"text": echo_text(id)}}));
    ("tools/call".into(), Some(tool.to_owned()), b, |a, id| verify_echo(a, id, &echo_text(id)))
}

fn mixed_kind(id: u64, _tool: &str) -> Planned {
    match id % 5 {
        0 => ("server/discover".into(), None, body(id, "server/discover", json!({})), |a, id| {
            verify(a, id)
                .and_then(|r| r["supportedVersions"].as_array().map(|_| ()).ok_or("no supportedVersions".into()))
        }),
        1 => ("tools/list".into(), None, body(id, "tools/list", json!({})), |a, id| {
            verify(a, id).and_then(|r| r["tools"].as_array().map(|_| ()).ok_or("no tools".into()))
        }),
        2 => call_kind(id, "echo"),
        3 => (
            "resources/read".into(),
            Some("test://static-text".into()),
            body(id, "resources/read", json!({"uri": "test://static-text"})),
            |a, id| verify(a, id).and_then(|r| r["contents"][0]["text"].as_str().map(|_| ()).ok_or("no text".into())),
        ),
        _ => (
            "prompts/get".into(),
            Some("test_simple_prompt".into()),
            body(id, "prompts/get", json!({"name": "test_simple_prompt"})),
            |a, id| verify(a, id).and_then(|r| r["messages"].as_array().map(|_| ()).ok_or("no messages".into())),
        ),
    }
}

/// Opens a listen stream on its own HTTP/1.1 connection and waits for its acknowledgement.
async fn open_listen(
    target: &Target,
    src: Option<std::net::IpAddr>,
    id: u64,
    filter: &serde_json::Value,
) -> Result<(Conn, hyper::body::Incoming), String> {
    listen_on(Conn::open(target, src).await?, id, filter).await
}

/// Opens a listen stream on `conn` and waits for its acknowledgement.
async fn listen_on(
    mut conn: Conn,
    id: u64,
    filter: &serde_json::Value,
) -> Result<(Conn, hyper::body::Incoming), String> {
    let b = body(id, "subscriptions/listen", json!({"notifications": filter}));
    let (status, mut stream) = conn.stream("subscriptions/listen", b).await?;
    if status != 200 {
        return Err(format!("listen: HTTP {status}"));
    }
    let mut seen = String::new();
    while !seen.contains("subscriptions/acknowledged") {
        match tokio::time::timeout(EVENT_TIMEOUT, stream.frame()).await {
            Ok(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    seen.push_str(&String::from_utf8_lossy(d));
                }
            }
            _ => return Err("listen stream ended before its acknowledgement".into()),
        }
    }
    Ok((conn, stream))
}

/// HTTP/2 connections for `--http2` (none otherwise).
async fn h2_connections(s: &Streams, target: &Target) -> Vec<Conn> {
    let mut conns = Vec::new();
    if s.http2 {
        for i in 0..s.h2_connections.max(1) {
            conns.push(Conn::open_h2(target, source(i, s.sources)).await.expect("an HTTP/2 connection"));
        }
    }
    conns
}

async fn open_many(s: &Streams, filter: &serde_json::Value) -> Vec<(Conn, hyper::body::Incoming)> {
    let target = Target::parse(&s.url).expect("a loopback URL");
    let shared = h2_connections(s, &target).await;
    let mut out = Vec::with_capacity(s.streams);
    let batch = 256;
    let mut i = 0;
    while i < s.streams {
        let n = batch.min(s.streams - i);
        let opened = futures_join(
            (i..i + n)
                .map(|k| {
                    let (target, filter) = (target.clone(), filter.clone());
                    let sources = s.sources;
                    let conn = shared.get(k % shared.len().max(1)).and_then(Conn::share);
                    async move {
                        match conn {
                            Some(c) => listen_on(c, k as u64, &filter).await,
                            None => open_listen(&target, source(k, sources), k as u64, &filter).await,
                        }
                    }
                })
                .collect(),
        )
        .await;
        for r in opened {
            out.push(r.unwrap_or_else(|e| panic!("opening stream: {e}")));
        }
        i += n;
    }
    out
}

async fn futures_join<F>(futs: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

async fn listen(s: Streams, hold: u64, settle: u64) {
    let before = s.pid.and_then(rss_kib);
    let t0 = Instant::now();
    let streams = open_many(&s, &FanoutEvent::Tools.filter()).await;
    println!("opened {} listen streams in {:.2}s", streams.len(), t0.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = s.pid.and_then(rss_kib);
    if let (Some(b), Some(d)) = (before, during) {
        println!(
            "server RSS: before={b} KiB with-streams={d} KiB per-stream={:.2} KiB",
            (d.saturating_sub(b)) as f64 / s.streams as f64
        );
    }
    tokio::time::sleep(Duration::from_secs(hold)).await;
    drop(streams);
    if s.pid.is_some() {
        let mut after = Vec::new();
        for _ in 0..settle {
            tokio::time::sleep(Duration::from_secs(1)).await;
            after.extend(s.pid.and_then(rss_kib));
        }
        println!("server RSS after closing (KiB, 1/s): {after:?}");
    }
}

async fn fanout(s: Streams, events: usize, event: FanoutEvent) {
    let target = Target::parse(&s.url).expect("a loopback URL");
    let streams = open_many(&s, &event.filter()).await;
    let method = event.method();
    let n = streams.len();
    // Each stream's reader notes its arrival times; the last one of an event
    // wakes the main task (one wake per event, not one per delivery).
    let arrivals = Arc::new(Arrivals::default());
    let mut conns = Vec::new();
    for (conn, mut stream) in streams {
        conns.push(conn);
        let arrivals = arrivals.clone();
        tokio::spawn(async move {
            while let Some(Ok(f)) = stream.frame().await {
                let now = Instant::now();
                if let Some(d) = f.data_ref() {
                    let hits = d.windows(method.len()).filter(|w| *w == method.as_bytes()).count();
                    for _ in 0..hits {
                        arrivals.note(now);
                    }
                }
            }
        });
    }
    let mut trigger = Conn::open(&target, None).await.expect("connect");
    let mut per_delivery = histogram();
    let mut until_all = histogram();
    let mut each_event = Vec::with_capacity(events);
    let cpu_before = (s.pid.and_then(|p| cpu_micros(Some(p))), cpu_micros(None));
    for e in 0..events {
        let id = 1_000_000 + e as u64;
        arrivals.expect(n);
        let t0 = Instant::now();
        let (tool, arguments) = event.trigger();
        let b = body(id, "tools/call", json!({"name": tool, "arguments": arguments}));
        let answer = trigger.call("tools/call", Some(tool), b).await.expect("trigger");
        verify(&answer, id).expect("the trigger succeeds");
        tokio::time::timeout(EVENT_TIMEOUT, arrivals.all()).await.expect("every stream gets the event");
        for at in arrivals.take() {
            per_delivery.record(at.saturating_duration_since(t0).as_micros().max(1) as u64).ok();
        }
        let all = t0.elapsed();
        until_all.record(all.as_micros().max(1) as u64).ok();
        each_event.push(format!("{:.1}", all.as_secs_f64() * 1000.0));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("fanout of {method} to {n} streams, {events} events: per-delivery {}", summary(&per_delivery));
    println!("  until every stream has it: {}", summary(&until_all));
    println!("  each event, in order (ms): {}", each_event.join(" "));
    let cpu_after = (s.pid.and_then(|p| cpu_micros(Some(p))), cpu_micros(None));
    let per_event = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.1} ms", a.saturating_sub(b) as f64 / 1000.0 / events as f64),
        _ => "n/a".to_owned(),
    };
    println!(
        "  CPU per event: server {} (--pid), this client {}",
        per_event(cpu_after.0, cpu_before.0),
        per_event(cpu_after.1, cpu_before.1)
    );
    drop(conns);
}

/// Arrival times of one event's deliveries.
#[derive(Default)]
struct Arrivals {
    times: std::sync::Mutex<Vec<Instant>>,
    expected: AtomicU64,
    done: tokio::sync::Notify,
}

impl Arrivals {
    fn expect(&self, n: usize) {
        self.times.lock().unwrap().clear();
        self.expected.store(n as u64, Ordering::SeqCst);
    }
    fn note(&self, at: Instant) {
        let mut times = self.times.lock().unwrap();
        times.push(at);
        if times.len() as u64 == self.expected.load(Ordering::SeqCst) {
            self.done.notify_one();
        }
    }
    async fn all(&self) {
        while (self.times.lock().unwrap().len() as u64) < self.expected.load(Ordering::SeqCst) {
            self.done.notified().await;
        }
    }
    fn take(&self) -> Vec<Instant> {
        std::mem::take(&mut *self.times.lock().unwrap())
    }
}

async fn churn(s: Streams, concurrency: usize, duration: u64) {
    let target = Target::parse(&s.url).expect("a loopback URL");
    let deadline = Instant::now() + Duration::from_secs(duration);
    let opened = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for w in 0..concurrency {
        let (target, opened, failed) = (target.clone(), opened.clone(), failed.clone());
        let (sources, filter) = (s.sources, FanoutEvent::Tools.filter());
        workers.push(tokio::spawn(async move {
            let mut k = w as u64;
            while Instant::now() < deadline {
                match open_listen(&target, source(k as usize, sources), k, &filter).await {
                    Ok(pair) => {
                        opened.fetch_add(1, Ordering::Relaxed);
                        drop(pair);
                    }
                    Err(_) => {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
                k += concurrency as u64;
            }
        }));
    }
    let mut samples = Vec::new();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some(r) = s.pid.and_then(rss_kib) {
            samples.push(r);
        }
    }
    for w in workers {
        w.await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let last = s.pid.and_then(rss_kib);
    println!(
        "churn: opened={} failed={} RSS samples (KiB, 1/s)={samples:?} after={last:?}",
        opened.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed)
    );
}

#[tokio::main]
async fn main() {
    match Cli::parse().scenario {
        Scenario::Call { common, tool } => requests(common, call_kind, tool).await,
        Scenario::Mixed { common } => requests(common, mixed_kind, String::new()).await,
        Scenario::Listen { streams, hold, settle } => listen(streams, hold, settle).await,
        Scenario::Fanout { streams, events, event } => fanout(streams, events, event).await,
        Scenario::Churn { streams, concurrency, duration } => churn(streams, concurrency, duration).await,
    }
}
