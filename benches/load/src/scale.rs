//! Scenarios of `benches/scale.sh`, each measuring one dimension at one
//! size and printing its figures on one `SCALE …` line (`key=value`
//! pairs) for the script to tabulate: `catalog`, `inflight`, `sessions`,
//! `live-tasks`. Every reply is verified, as in the other scenarios.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use mcp_load::{body, histogram, rss_kib, source, verify, verify_echo, Conn, Target};
use serde_json::json;

use crate::tasks::with_extension;

/// Microseconds since `t0`, at least 1 (for a histogram).
fn micros(t0: Instant) -> u64 {
    t0.elapsed().as_micros().max(1) as u64
}

/// `samples` `tools/call`s of `tool` (an echo) one after another on `conn`.
async fn echo_latency(conn: &mut Conn, tool: &str, samples: usize) -> Histogram<u64> {
    let mut h = histogram();
    for i in 0..samples as u64 {
        let text = format!("fast-{i}");
        let b = body(i, "tools/call", json!({"name": tool, "arguments": {"text": text}}));
        let t0 = Instant::now();
        let answer = conn.call("tools/call", Some(tool), b).await.expect("a fast call");
        verify_echo(&answer, i, &text).expect("the fast call echoes");
        h.record(micros(t0)).ok();
    }
    h
}

/// Every page of `method` (`tools/list`, `resources/list`): the items and
/// pages counted, and the time taken.
async fn list_all(conn: &mut Conn, method: &str, field: &str) -> (usize, usize, Duration) {
    let (mut items, mut pages, mut cursor) = (0, 0, None::<String>);
    let t0 = Instant::now();
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let id = 10_000 + pages as u64;
        let result = verify(&conn.call(method, None, body(id, method, params)).await.expect(method), id).expect(method);
        items += result[field].as_array().map_or(0, Vec::len);
        pages += 1;
        match result["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return (items, pages, t0.elapsed()),
        }
    }
}

/// The median of three runs of `list_all`.
async fn list_median(conn: &mut Conn, method: &str, field: &str) -> (usize, usize, f64) {
    let mut runs = Vec::new();
    for _ in 0..3 {
        runs.push(list_all(conn, method, field).await);
    }
    runs.sort_by_key(|r| r.2);
    let (items, pages, took) = runs[1];
    (items, pages, took.as_secs_f64() * 1000.0)
}

/// Catalog size: every page of `tools/list` and `resources/list`, then
/// `samples` calls of `tool` and reads of `uri`, and the server's RSS.
pub(crate) async fn catalog(url: String, samples: usize, tool: String, uri: String, pid: Option<u32>) {
    let target = Target::parse(&url).expect("a loopback URL");
    let mut conn = Conn::open(&target, None).await.expect("connect");
    let (tools, tool_pages, list_ms) = list_median(&mut conn, "tools/list", "tools").await;
    let (resources, resource_pages, rlist_ms) = list_median(&mut conn, "resources/list", "resources").await;
    let calls = echo_latency(&mut conn, &tool, samples).await;
    let mut reads = histogram();
    for i in 0..samples as u64 {
        let t0 = Instant::now();
        let answer = conn.call("resources/read", Some(&uri), body(i, "resources/read", json!({"uri": uri}))).await;
        let result = verify(&answer.expect("a read"), i).expect("the read succeeds");
        assert_eq!(result["contents"][0]["uri"], json!(uri), "the read returns the resource");
        reads.record(micros(t0)).ok();
    }
    println!(
        "SCALE catalog tools={tools} tool_pages={tool_pages} list_ms={list_ms:.2} resources={resources} \
         resource_pages={resource_pages} rlist_ms={rlist_ms:.2} call_us={} read_us={} rss_kib={}",
        calls.value_at_quantile(0.5),
        reads.value_at_quantile(0.5),
        pid.and_then(rss_kib).unwrap_or(0)
    );
}

/// Samples a process's RSS every 250 ms until two samples in a row are
/// within 0.5 % of each other (at least `min` after the start, at most `max`).
async fn steady_rss(pid: Option<u32>, min: Duration, max: Duration) -> u64 {
    let Some(pid) = pid else { return 0 };
    let t0 = Instant::now();
    let mut last = rss_kib(pid).unwrap_or(0);
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = rss_kib(pid).unwrap_or(0);
        let steady = now.abs_diff(last) * 200 <= now;
        if (steady && t0.elapsed() >= min) || t0.elapsed() >= max {
            return now;
        }
        last = now;
    }
}

/// In-flight work: `calls` concurrent `sleep` calls of `ms` over HTTP/2
/// connections, the server's RSS per call while they sleep, and the
/// latency of a fast `echo` call beside them (and before them, idle).
pub(crate) async fn inflight(
    url: String,
    calls: usize,
    ms: u64,
    h2_connections: usize,
    samples: usize,
    pid: Option<u32>,
) {
    let target = Target::parse(&url).expect("a loopback URL");
    let mut fast = Conn::open(&target, None).await.expect("connect");
    let idle = echo_latency(&mut fast, "echo", samples).await;
    let before = steady_rss(pid, Duration::ZERO, Duration::from_secs(3)).await;
    let mut shared = Vec::new();
    for i in 0..h2_connections.max(1) {
        shared.push(Conn::open_h2(&target, source(i, 1)).await.expect("an HTTP/2 connection"));
    }
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let first_error = Arc::new(Mutex::new(None::<String>));
    let started = Instant::now();
    let mut waiting = Vec::with_capacity(calls);
    for k in 0..calls {
        let mut conn = shared[k % shared.len()].share().expect("an HTTP/2 connection");
        let (ok, failed, first_error) = (ok.clone(), failed.clone(), first_error.clone());
        waiting.push(tokio::spawn(async move {
            let id = k as u64;
            let b = body(id, "tools/call", json!({"name": "sleep", "arguments": {"ms": ms}}));
            let outcome = conn.call("tools/call", Some("sleep"), b).await.and_then(|a| verify(&a, id));
            match outcome {
                Ok(r) if r["content"][0]["text"] == format!("slept {ms} ms").as_str() => {
                    ok.fetch_add(1, Ordering::Relaxed)
                }
                other => {
                    first_error.lock().unwrap().get_or_insert(format!("{other:?}"));
                    failed.fetch_add(1, Ordering::Relaxed)
                }
            };
        }));
    }
    // The calls sleep `ms`; their memory is read once it stops growing.
    let during = steady_rss(pid, Duration::from_secs(1), Duration::from_millis(ms / 3)).await;
    let sent_s = started.elapsed().as_secs_f64();
    let beside = echo_latency(&mut fast, "echo", samples).await;
    let beside_done = started.elapsed();
    for w in waiting {
        w.await.expect("a call task");
    }
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    if let Some(e) = first_error.lock().unwrap().take() {
        eprintln!("first failed call: {e}");
    }
    assert!(
        beside_done < Duration::from_millis(ms),
        "the calls must still be sleeping while the fast calls run (raise --ms)"
    );
    println!(
        "SCALE inflight calls={calls} ok={ok} failed={failed} per_call_kib={:.2} settle_s={sent_s:.2} \
         idle_p50_us={} idle_p99_us={} fast_p50_us={} fast_p99_us={} rss_before_kib={before} rss_during_kib={during}",
        during.saturating_sub(before) as f64 / calls.max(1) as f64,
        idle.value_at_quantile(0.5),
        idle.value_at_quantile(0.99),
        beside.value_at_quantile(0.5),
        beside.value_at_quantile(0.99),
    );
}

/// The version of a legacy session.
const LEGACY: &str = "2025-11-25";

/// Opens a 2025-11-25 session (`initialize`, then `notifications/initialized`).
async fn open_session(conn: &mut Conn, id: u64) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "mcp-load", "version": "1"}}});
    let (answer, session) = conn.post(&[], Bytes::from(init.to_string())).await?;
    verify(&answer, id)?;
    let session = session.ok_or("initialize answered without Mcp-Session-Id")?;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let headers = [("mcp-protocol-version", LEGACY), ("mcp-session-id", session.as_str())];
    let (answer, _) = conn.post(&headers, Bytes::from(note)).await?;
    if answer.status != 202 {
        return Err(format!("notifications/initialized: HTTP {}", answer.status));
    }
    Ok(session)
}

/// Legacy sessions: opens `sessions` sessions (32 at a time), the
/// server's RSS per session, then `tools/call` of `echo` in the last one
/// over `connections` connections for `duration` seconds.
pub(crate) async fn sessions(url: String, sessions: usize, connections: usize, duration: u64, pid: Option<u32>) {
    let target = Target::parse(&url).expect("a loopback URL");
    let before = steady_rss(pid, Duration::ZERO, Duration::from_secs(3)).await;
    let next = Arc::new(AtomicU64::new(0));
    let opened = Arc::new(Mutex::new(Vec::with_capacity(sessions)));
    let t0 = Instant::now();
    let mut openers = Vec::new();
    for w in 0..32 {
        let (target, next, opened) = (target.clone(), next.clone(), opened.clone());
        openers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&target, source(w, 4)).await.expect("connect");
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id >= sessions as u64 {
                    return;
                }
                let session = open_session(&mut conn, id).await.unwrap_or_else(|e| panic!("session {id}: {e}"));
                opened.lock().unwrap().push(session);
            }
        }));
    }
    for o in openers {
        o.await.expect("an opener");
    }
    let open_s = t0.elapsed().as_secs_f64();
    let during = steady_rss(pid, Duration::from_millis(500), Duration::from_secs(5)).await;
    let session = opened.lock().unwrap().last().cloned().expect("a session");
    let (count, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let deadline = Instant::now() + Duration::from_secs(duration);
    let mut workers = Vec::new();
    let started = Instant::now();
    for c in 0..connections {
        let (target, session, count, failed) = (target.clone(), session.clone(), count.clone(), failed.clone());
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&target, None).await.expect("connect");
            let headers = [("mcp-protocol-version", LEGACY), ("mcp-session-id", session.as_str())];
            let mut h = histogram();
            let mut n = 0u64;
            while Instant::now() < deadline {
                let id = (c as u64) << 32 | n;
                n += 1;
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "in-session"}}});
                let t = Instant::now();
                match conn.post(&headers, Bytes::from(call.to_string())).await {
                    Ok((a, _)) if verify_echo(&a, id, "in-session").is_ok() => count.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
                h.record(micros(t)).ok();
            }
            h
        }));
    }
    let mut all = histogram();
    for w in workers {
        all.add(w.await.expect("a caller")).ok();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "SCALE sessions sessions={sessions} open_s={open_s:.2} per_session_kib={:.2} call_rps={:.0} failed={} \
         call_p50_us={} call_p99_us={}",
        during.saturating_sub(before) as f64 / sessions.max(1) as f64,
        count.load(Ordering::Relaxed) as f64 / secs,
        failed.load(Ordering::Relaxed),
        all.value_at_quantile(0.5),
        all.value_at_quantile(0.99),
    );
}

/// Live tasks: creates `tasks` tasks (`task_echo`, over `connections`
/// connections), the creation rate and the server's RSS per task, then
/// `samples` `tasks/get`s spread over them.
pub(crate) async fn live_tasks(url: String, tasks: usize, connections: usize, samples: usize, pid: Option<u32>) {
    let target = Target::parse(&url).expect("a loopback URL");
    let before = steady_rss(pid, Duration::ZERO, Duration::from_secs(3)).await;
    let next = Arc::new(AtomicU64::new(0));
    let ids = Arc::new(Mutex::new(Vec::with_capacity(tasks)));
    let t0 = Instant::now();
    let mut workers = Vec::new();
    for c in 0..connections {
        let (target, next, ids) = (target.clone(), next.clone(), ids.clone());
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&target, source(c, 4)).await.expect("connect");
            let mut h = histogram();
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id >= tasks as u64 {
                    return h;
                }
                let call = with_extension(
                    id,
                    "tools/call",
                    json!({"name": "task_echo", "arguments": {"text": format!("t-{id}")}}),
                );
                let t = Instant::now();
                let created = conn.call("tools/call", Some("task_echo"), call).await.and_then(|a| verify(&a, id));
                let created = created.unwrap_or_else(|e| panic!("task {id}: {e}"));
                assert_eq!(created["resultType"], "task", "task_echo runs as a task: {created}");
                h.record(micros(t)).ok();
                let task = created["taskId"].as_str().expect("a taskId").to_owned();
                ids.lock().unwrap().push((id, task));
            }
        }));
    }
    let mut create = histogram();
    for w in workers {
        create.add(w.await.expect("a creator")).ok();
    }
    let create_s = t0.elapsed().as_secs_f64();
    let during = steady_rss(pid, Duration::from_millis(500), Duration::from_secs(5)).await;
    let ids = std::mem::take(&mut *ids.lock().unwrap());
    let mut conn = Conn::open(&target, None).await.expect("connect");
    let mut get = histogram();
    let stride = (ids.len() / samples.max(1)).max(1);
    for (n, (id, task)) in ids.iter().step_by(stride).take(samples).enumerate() {
        let rid = 1 << 40 | n as u64;
        let t = Instant::now();
        let got = conn.call("tasks/get", Some(task), with_extension(rid, "tasks/get", json!({"taskId": task}))).await;
        let got = verify(&got.expect("tasks/get"), rid).expect("tasks/get succeeds");
        get.record(micros(t)).ok();
        let text = format!("t-{id}");
        assert!(
            got["status"] == "completed" && got["result"]["content"][0]["text"] == text.as_str(),
            "task {task} read back as {got}"
        );
    }
    println!(
        "SCALE tasks tasks={tasks} create_per_s={:.0} create_p50_us={} get_p50_us={} get_p99_us={} per_task_kib={:.2}",
        tasks as f64 / create_s,
        create.value_at_quantile(0.5),
        get.value_at_quantile(0.5),
        get.value_at_quantile(0.99),
        during.saturating_sub(before) as f64 / tasks.max(1) as f64,
    );
}
