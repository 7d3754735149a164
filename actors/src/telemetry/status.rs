//! The data of the live status page (`[status]`): requests by method with
//! errors and p50/p99 (from the duration buckets), requests per second over
//! the last five minutes, requests refused before a handler ran,
//! cancellations and timeouts, open listen streams and lagged subscribers.
//! Kept only when the page is on.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::DURATION_BUCKETS;

/// Seconds of history kept for the sparkline.
const HISTORY: usize = 300;

#[derive(Default)]
struct Method {
    count: u64,
    errors: u64,
    /// Per bucket of [`DURATION_BUCKETS`], plus one past the last.
    buckets: [u64; DURATION_BUCKETS.len() + 1],
}

#[derive(Default)]
struct Board {
    methods: BTreeMap<&'static str, Method>,
    /// (second since start, requests, errors), oldest first.
    seconds: VecDeque<(u64, u64, u64)>,
}

/// The status board.
pub(super) struct Status {
    started: Instant,
    board: Mutex<Board>,
    pub(super) listen_open: AtomicI64,
    pub(super) lagged: AtomicU64,
    refused: AtomicU64,
    cancelled: AtomicU64,
    timed_out: AtomicU64,
}

static STATUS: OnceLock<Status> = OnceLock::new();

/// Starts keeping the page's data (once per process).
pub fn enable() {
    STATUS.get_or_init(|| Status {
        started: Instant::now(),
        board: Mutex::new(Board::default()),
        listen_open: AtomicI64::new(0),
        lagged: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        cancelled: AtomicU64::new(0),
        timed_out: AtomicU64::new(0),
    });
}

pub(super) fn get() -> Option<&'static Status> {
    STATUS.get()
}

impl Status {
    /// A request cancelled (`true`) or timed out (`false`).
    pub(super) fn ended_early(&self, cancelled: bool) {
        let counter = if cancelled { &self.cancelled } else { &self.timed_out };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A request refused before any handler ran: counted apart, and as an
    /// error of its method.
    pub(super) fn refused(&self, method: &'static str, elapsed: Duration) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        self.record(method, true, elapsed);
    }

    /// A request of `method`, by its duration, and whether it failed (a
    /// cancelled or timed-out one is also told to [`Status::ended_early`]).
    pub(super) fn record(&self, method: &'static str, error: bool, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        let bucket = DURATION_BUCKETS.iter().position(|b| secs <= *b).unwrap_or(DURATION_BUCKETS.len());
        let now = self.started.elapsed().as_secs();
        let mut b = self.board.lock().unwrap_or_else(|e| e.into_inner());
        let m = b.methods.entry(method).or_default();
        m.count += 1;
        m.errors += u64::from(error);
        m.buckets[bucket] += 1;
        match b.seconds.back_mut() {
            Some(last) if last.0 == now => {
                last.1 += 1;
                last.2 += u64::from(error);
            }
            _ => {
                b.seconds.push_back((now, 1, u64::from(error)));
                while b.seconds.len() > HISTORY {
                    b.seconds.pop_front();
                }
            }
        }
    }
}

/// The upper bound (ms) of the bucket holding quantile `q` of `buckets`.
fn quantile_ms(buckets: &[u64], q: f64) -> Option<f64> {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (i, n) in buckets.iter().enumerate() {
        seen += n;
        if seen >= rank {
            let bound = DURATION_BUCKETS.get(i).copied().unwrap_or(f64::INFINITY);
            return Some(bound * 1000.0);
        }
    }
    None
}

/// The page's data, or `None` when the page is off. `redis`: whether the
/// Redis link is up, when there is one; `legacy_sessions`: open now.
pub fn snapshot(redis: Option<bool>, legacy_sessions: usize) -> Option<Value> {
    let s = STATUS.get()?;
    let now = s.started.elapsed().as_secs();
    let b = s.board.lock().unwrap_or_else(|e| e.into_inner());
    let methods: Vec<Value> = b
        .methods
        .iter()
        .map(|(name, m)| {
            json!({"method": name, "count": m.count, "errors": m.errors,
                   "p50_ms": quantile_ms(&m.buckets, 0.5), "p99_ms": quantile_ms(&m.buckets, 0.99)})
        })
        .collect();
    // One entry per second of the last five minutes, zero where idle.
    let first = now.saturating_sub(HISTORY as u64 - 1);
    let mut history = vec![0u64; (now - first + 1) as usize];
    for (sec, n, _) in b.seconds.iter().filter(|(sec, _, _)| *sec >= first) {
        history[(sec - first) as usize] = *n;
    }
    let last10: u64 = history.iter().rev().skip(1).take(10).sum();
    Some(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_secs": now,
        "requests": b.methods.values().map(|m| m.count).sum::<u64>(),
        "errors": b.methods.values().map(|m| m.errors).sum::<u64>(),
        "rate_per_sec": last10 as f64 / 10.0,
        "methods": methods,
        "listen_streams_open": s.listen_open.load(Ordering::Relaxed).max(0),
        "lagged_subscribers": s.lagged.load(Ordering::Relaxed),
        "refused_before_handler": s.refused.load(Ordering::Relaxed),
        "cancelled": s.cancelled.load(Ordering::Relaxed),
        "timed_out": s.timed_out.load(Ordering::Relaxed),
        "redis_connected": redis,
        "legacy_sessions_open": legacy_sessions,
        "history": history,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_from_buckets() {
        let mut b = [0u64; DURATION_BUCKETS.len() + 1];
        b[2] = 98; // ≤ 0.25 ms
        b[8] = 2; // ≤ 25 ms
        assert_eq!(quantile_ms(&b, 0.5), Some(0.25));
        assert_eq!(quantile_ms(&b, 0.99), Some(25.0));
        assert_eq!(quantile_ms(&[0; 3], 0.5), None);
    }
}
