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
    let mut flow = String::new();
    while Instant::now() < deadline && sent.fetch_add(1, Ordering::Relaxed) < max {
        let id = (c as u64) << 32 | n;
        n += 1;
        let (method, name, body, check) = kind(id, &tool);
        if method == MRTR_FLOW {
            // Three requests on this connection, each timed and verified.
            for round in 1..=3u64 {
                let t0 = Instant::now();
                match mrtr_round(&mut conn, id, round, &mut flow).await {
                    Ok(()) => {
                        h.record(t0.elapsed().as_micros().max(1) as u64).ok();
                        per_second.tick();
                        tally.ok.fetch_add(1, Ordering::Relaxed);
                    }
                    Err((status, e)) => {
                        tally.fail(status, e);
                        break;
                    }
                }
            }
            continue;
        }
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

/// The method `mixed` plans for a multi round-trip flow (three requests).
const MRTR_FLOW: &str = "mrtr-flow";

/// The tool of the flow: it asks a name, then a colour, then answers.
const MRTR_TOOL: &str = "test_input_required_result_multi_round";

/// Round `round` (1–3) of a multi round-trip `tools/call`: rounds 1 and 2
/// must ask (`input_required`, the expected key, a `requestState`, kept in
/// `state`), round 3 must answer with both answers in its text.
async fn mrtr_round(conn: &mut Conn, id: u64, round: u64, state: &mut String) -> Result<(), (u16, String)> {
    let accept = |content: serde_json::Value| json!({"action": "accept", "content": content});
    let mut params = json!({"name": MRTR_TOOL, "arguments": {}});
    match round {
        1 => {}
        2 => {
            params["inputResponses"] = json!({"step1": accept(json!({"name": format!("n{id}")}))});
            params["requestState"] = json!(state);
        }
        _ => {
            params["inputResponses"] = json!({"step2": accept(json!({"color": "blue"}))});
            params["requestState"] = json!(state);
        }
    }
    params["_meta"] = mcp_load::meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let rid = id * 4 + round;
    let body = Bytes::from(json!({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).to_string());
    let answer = conn.call("tools/call", Some(MRTR_TOOL), body).await.map_err(|e| (0, e))?;
    let result = verify(&answer, rid).map_err(|e| (answer.status, e))?;
    let fail = |e: &str| Err((answer.status, format!("round {round}: {e}: {result}")));
    if round < 3 {
        let key = if round == 1 { "step1" } else { "step2" };
        if result["resultType"] != "input_required" || result["inputRequests"].get(key).is_none() {
            return fail(&format!("expected an input request {key}"));
        }
        let Some(s) = result["requestState"].as_str() else { return fail("no requestState") };
        *state = s.to_owned();
        return Ok(());
    }
    match result["content"][0]["text"].as_str() {
        Some(t) if t == format!("n{id} likes blue") => Ok(()),
        _ => fail("expected the answer of both rounds"),
    }
}

/// `mixed`: discover, tools/list, an echo call, a resource read, a prompt
/// and a three-round multi round-trip call, in turn.
pub(crate) fn mixed_kind(id: u64, _tool: &str) -> Planned {
    if id % 6 == 5 {
        return (MRTR_FLOW.into(), None, Bytes::new(), |_, _| Ok(()));
    }
    match id % 6 {
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
