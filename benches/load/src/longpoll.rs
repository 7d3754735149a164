//! `longpoll`: N long `events/poll`s of `signal.fired` held open at once,
//! one `fire_event` answering them all: the latency from the trigger to
//! each answer and until every poll has answered; then each polls again
//! from the cursor its answer gave.

use std::time::{Duration, Instant};

use mcp_load::{body, cpu_micros, histogram, source, summary, verify, Conn, Target};
use serde_json::{json, Value};

const EVENT_TYPE: &str = "signal.fired";
const TRIGGER: &str = "fire_event";

/// What the scenario is given.
pub(crate) struct Plan {
    pub(crate) url: String,
    pub(crate) polls: usize,
    pub(crate) events: usize,
    pub(crate) sources: usize,
    pub(crate) pid: Option<u32>,
}

/// One poll's connection and where it reads from.
struct Poller {
    conn: Conn,
    cursor: Value,
}

/// Holds one poll from `cursor`; its answer's time and the new cursor.
async fn hold(mut p: Poller, id: u64) -> Result<(Poller, Instant), String> {
    let params = json!({"name": EVENT_TYPE, "cursor": p.cursor, "timeoutMs": 30_000});
    let answer = p.conn.call("events/poll", None, body(id, "events/poll", params)).await?;
    let at = Instant::now();
    let result = verify(&answer, id)?;
    if result["events"].as_array().is_none_or(Vec::is_empty) {
        return Err(format!("poll {id} answered without the event: {result}"));
    }
    p.cursor = result["cursor"].clone();
    Ok((p, at))
}

pub(crate) async fn longpoll(plan: Plan) {
    let target = Target::parse(&plan.url).expect("a loopback URL");
    let mut trigger = Conn::open(&target, None).await.expect("connect");
    let start = verify(
        &trigger.call("events/poll", None, body(1, "events/poll", json!({"name": EVENT_TYPE}))).await.expect("poll"),
        1,
    )
    .expect("the first poll");
    let mut pollers = Vec::with_capacity(plan.polls);
    for k in 0..plan.polls {
        let conn = Conn::open(&target, source(k, plan.sources)).await.expect("connect");
        pollers.push(Poller { conn, cursor: start["cursor"].clone() });
    }
    let (mut per_answer, mut until_all) = (histogram(), histogram());
    let cpu_before = (cpu_micros(plan.pid), cpu_micros(None));
    for e in 0..plan.events {
        let base = 1_000 + (e * plan.polls) as u64;
        let held: Vec<_> = pollers.drain(..).enumerate().map(|(k, p)| tokio::spawn(hold(p, base + k as u64))).collect();
        // The polls reach the server and are held (a bench's settle, not a
        // signal: nothing tells a client its poll is held).
        tokio::time::sleep(Duration::from_millis(300)).await;
        let t0 = Instant::now();
        let id = 10_000_000 + e as u64;
        let fired = body(id, "tools/call", json!({"name": TRIGGER, "arguments": {"message": "long poll"}}));
        verify(&trigger.call("tools/call", Some(TRIGGER), fired).await.expect("trigger"), id).expect("fired");
        let mut last = t0;
        for h in held {
            let (p, at) = h.await.expect("the poll task").unwrap_or_else(|e| panic!("{e}"));
            per_answer.record(at.saturating_duration_since(t0).as_micros().max(1) as u64).ok();
            last = last.max(at);
            pollers.push(p);
        }
        until_all.record(last.saturating_duration_since(t0).as_micros().max(1) as u64).ok();
    }
    println!(
        "long poll of {EVENT_TYPE}, {} polls, {} events: from the trigger to each answer {}",
        plan.polls,
        plan.events,
        summary(&per_answer)
    );
    println!("  until every poll has answered: {}", summary(&until_all));
    let cpu_after = (cpu_micros(plan.pid), cpu_micros(None));
    let per_event = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.3} ms", a.saturating_sub(b) as f64 / 1000.0 / plan.events as f64),
        _ => "n/a".to_owned(),
    };
    println!(
        "  CPU per event: server {} (--pid), this client {}",
        per_event(cpu_after.0, cpu_before.0),
        per_event(cpu_after.1, cpu_before.1)
    );
}
