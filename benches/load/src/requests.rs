//! Request scenarios (`call`, `mixed`): connections that send requests
//! back to back and verify every reply.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_load::{body, histogram, source, summary, verify, verify_echo, Conn, PerSecond, Target};
use serde_json::json;

use crate::cli::Common;

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

pub(crate) async fn requests(common: Common, kind: fn(u64, &str) -> Planned, tool: String) {
    let target = Target::parse(&common.url).expect("a loopback URL");
    let tally = Tally::new();
    let sent = Arc::new(AtomicU64::new(0));
    let per_second = Arc::new(PerSecond::new(common.duration));
    let deadline = Instant::now() + Duration::from_secs(common.duration);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..common.connections {
        let (target, tally, sent, tool) = (target.clone(), tally.clone(), sent.clone(), tool.clone());
        let max = common.requests;
        let src = source(c, common.sources);
        let per_second = per_second.clone();
        tasks.push(tokio::spawn(connection(c, target, src, tally, sent, deadline, max, kind, tool, per_second)));
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
    let what = if tool.is_empty() { "mixed".to_owned() } else { format!("call {tool}") };
    let label = format!("{what} @{} connections, {}", common.connections, common.url);
    common.write_report(label, &all, per_second.counts());
}

type Check = fn(&mcp_load::Answer, u64) -> Result<(), String>;

/// One connection of a request scenario: requests back to back until the
/// deadline or the shared count, each reply verified; its latencies.
#[allow(clippy::too_many_arguments)]
async fn connection(
    c: usize,
    target: Target,
    src: Option<std::net::IpAddr>,
    tally: Arc<Tally>,
    sent: Arc<AtomicU64>,
    deadline: Instant,
    max: u64,
    kind: fn(u64, &str) -> Planned,
    tool: String,
    per_second: Arc<PerSecond>,
) -> hdrhistogram::Histogram<u64> {
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
                per_second.tick();
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
}

fn echo_text(id: u64) -> String {
    format!("hello-{id}")
}

pub(crate) fn call_kind(id: u64, tool: &str) -> Planned {
    let b = body(id, "tools/call", json!({"name": tool, "arguments": {"text": echo_text(id)}}));
    ("tools/call".into(), Some(tool.to_owned()), b, |a, id| verify_echo(a, id, &echo_text(id)))
}

pub(crate) fn mixed_kind(id: u64, _tool: &str) -> Planned {
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
