//! The client under load, for `benches/client.sh` and `benches/gateway.sh`:
//! CONNECTIONS tasks share one client and call TOOL (default `echo`) back to
//! back for SECONDS, checking every reply; prints the count, the latency
//! percentiles and the process's own CPU per call. TARGET is a Streamable
//! HTTP URL, or `stdio:COMMAND LINE` for a child process. VERSION pins the
//! protocol version (`2025-11-25`: a legacy session, for servers of that
//! era only); without it the client negotiates.
//!
//!     client_load TARGET CONNECTIONS SECONDS [TOOL] [VERSION]
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_mcp::client::{Client, ClientOptions};
use serde_json::json;

/// User plus system CPU of this process so far.
fn cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given, nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target = args.get(1).expect("usage: client_load TARGET CONNECTIONS SECONDS [TOOL] [VERSION]").clone();
    let connections: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let seconds: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5).min(600);
    let tool: Arc<str> = args.get(4).map(String::as_str).unwrap_or("echo").into();
    let mut options = ClientOptions::new("client-load", "1");
    if let Some(v) = args.get(5) {
        options = options.pin(actix_mcp::protocol::ProtocolVersion::parse(v).expect("a protocol version"));
    }
    let client = match target.strip_prefix("stdio:") {
        Some(line) => Client::spawn_shell(line, options).await,
        None => Client::connect(&target, options).await,
    }
    .expect("connect");
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let latencies = Arc::new(std::sync::Mutex::new(Vec::<u32>::new()));
    let start_cpu = cpu();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (client, ok, failed, tool) = (client.clone(), ok.clone(), failed.clone(), tool.clone());
        let all = latencies.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while Instant::now() < deadline {
                let t0 = Instant::now();
                match client.call::<String>(&tool, json!({"text": "x"})).await {
                    Ok(t) if t == "x" => ok.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
                mine.push(t0.elapsed().as_micros().min(u32::MAX as u128) as u32);
            }
            all.lock().expect("latencies").extend(mine);
        }));
    }
    for t in tasks {
        t.await.expect("a load task");
    }
    let (secs, used) = (start.elapsed().as_secs_f64(), cpu() - start_cpu);
    // A stdio child is waited for, so its CPU is its parent's children's.
    client.close().await;
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    let mut lat = std::mem::take(&mut *latencies.lock().expect("latencies"));
    lat.sort_unstable();
    let pct = |p: f64| lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied();
    println!(
        "calls={} ok={ok} errors={failed} seconds={secs:.2} calls/s={:.0} client_cpu_us_per_call={:.1} \
         p50_us={} p99_us={}",
        ok + failed,
        (ok + failed) as f64 / secs,
        used.as_secs_f64() * 1e6 / (ok + failed).max(1) as f64,
        pct(0.50).unwrap_or(0),
        pct(0.99).unwrap_or(0)
    );
}
