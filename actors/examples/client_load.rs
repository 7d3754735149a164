//! The client under load, for `benches/client.sh`: CONNECTIONS tasks share
//! one client and call `echo` back to back for SECONDS, checking every
//! reply; prints the count and the process's own CPU per call.
//!
//!     client_load URL CONNECTIONS SECONDS
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
    let url = args.get(1).expect("usage: client_load URL CONNECTIONS SECONDS").clone();
    let connections: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let seconds: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5).min(600);
    let client = Client::connect(&url, ClientOptions::new("client-load", "1")).await.expect("connect");
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let start_cpu = cpu();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (client, ok, failed) = (client.clone(), ok.clone(), failed.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                match client.call::<String>("echo", json!({"text": "x"})).await {
                    Ok(t) if t == "x" => ok.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    for t in tasks {
        t.await.expect("a load task");
    }
    let (secs, used) = (start.elapsed().as_secs_f64(), cpu() - start_cpu);
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    println!(
        "calls={} ok={ok} errors={failed} seconds={secs:.2} calls/s={:.0} client_cpu_us_per_call={:.1}",
        ok + failed,
        (ok + failed) as f64 / secs,
        used.as_secs_f64() * 1e6 / (ok + failed).max(1) as f64
    );
}
