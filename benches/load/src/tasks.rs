//! The `tasks` scenario: task creation and completion. Each connection
//! calls `task_echo` (a tool that runs only as a task and ends at once) with
//! the Tasks extension declared, checks the `CreateTaskResult`, then reads
//! the task back with `tasks/get` and checks it completed with the echoed
//! text: two requests per task, both verified.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_load::{histogram, meta, source, summary, verify, Conn, PerSecond, Target};
use serde_json::{json, Value};

use crate::cli::Common;

const EXT: &str = "io.modelcontextprotocol/tasks";

/// A request body declaring the Tasks extension.
pub(crate) fn with_extension(id: u64, method: &str, mut params: Value) -> Bytes {
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] = json!({"extensions": {EXT: {}}});
    params["_meta"] = m;
    Bytes::from(serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap())
}

/// One task: created, then read back completed. The latency is the pair's.
async fn one(conn: &mut Conn, id: u64) -> Result<(), String> {
    let text = format!("t-{id}");
    let call = with_extension(id, "tools/call", json!({"name": "task_echo", "arguments": {"text": text}}));
    let created = verify(&conn.call("tools/call", Some("task_echo"), call).await?, id)?;
    if created["resultType"] != "task" {
        return Err(format!("not a task: {created}"));
    }
    let task = created["taskId"].as_str().ok_or("no taskId")?.to_owned();
    let get = with_extension(id + 1, "tasks/get", json!({"taskId": task}));
    let got = verify(&conn.call("tasks/get", Some(&task), get).await?, id + 1)?;
    if got["status"] != "completed" || got["result"]["content"][0]["text"] != text.as_str() {
        return Err(format!("task {task} read back as {got}"));
    }
    Ok(())
}

pub(crate) async fn tasks(common: Common) {
    let target = Target::parse(&common.url).expect("a loopback URL");
    let (ok, errors, sent) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let per_second = Arc::new(PerSecond::new(common.duration));
    let deadline = Instant::now() + Duration::from_secs(common.duration);
    let start = Instant::now();
    let mut workers = Vec::new();
    for c in 0..common.connections {
        let (target, ok, errors, sent, first_error) =
            (target.clone(), ok.clone(), errors.clone(), sent.clone(), first_error.clone());
        let per_second = per_second.clone();
        let (max, src) = (common.requests, source(c, common.sources));
        workers.push(tokio::spawn(async move {
            let mut h = histogram();
            let Ok(mut conn) = Conn::open(&target, src).await else { return h };
            let mut n = 0u64;
            while Instant::now() < deadline && sent.fetch_add(1, Ordering::Relaxed) < max {
                let id = (c as u64) << 32 | n;
                n += 2;
                let t0 = Instant::now();
                match one(&mut conn, id).await {
                    Ok(()) => {
                        h.record(t0.elapsed().as_micros().max(1) as u64).ok();
                        per_second.tick();
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                        first_error.lock().unwrap().get_or_insert(e);
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
    for w in workers {
        all.add(w.await.unwrap()).ok();
    }
    let secs = start.elapsed().as_secs_f64();
    let (ok, errors) = (ok.load(Ordering::Relaxed), errors.load(Ordering::Relaxed));
    println!(
        "tasks={} ok={ok} errors={errors} seconds={secs:.2} tasks/s={:.0} (create + get each) {}",
        ok + errors,
        (ok + errors) as f64 / secs,
        summary(&all)
    );
    let first = first_error.lock().unwrap().take();
    if let Some(e) = first {
        println!("first error: {e}");
    }
    let label = format!("tasks @{} connections, {}", common.connections, common.url);
    common.write_report(label, &all, per_second.counts());
}
