//! Stream scenarios (`listen`, `fanout`, `churn`): listen streams held,
//! notified and churned.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use mcp_load::{
    body, cpu_micros, histogram, rss_kib, run_time_micros, source, summary, verify, Conn, Target, EVENT_TIMEOUT,
};
use serde_json::json;

use crate::cli::{FanoutEvent, Streams};

/// What a stream is opened with: a listen filter, or an `events/stream`
/// subscription's params.
#[derive(Clone, Debug)]
pub(crate) enum Opening {
    /// `subscriptions/listen` with this filter (`notifications`).
    Listen(serde_json::Value),
    /// `events/stream` with these params.
    Events(serde_json::Value),
}

impl Opening {
    fn method(&self) -> &'static str {
        match self {
            Opening::Listen(_) => "subscriptions/listen",
            Opening::Events(_) => "events/stream",
        }
    }

    fn params(&self) -> serde_json::Value {
        match self {
            Opening::Listen(filter) => json!({"notifications": filter}),
            Opening::Events(params) => params.clone(),
        }
    }

    /// The method of the stream's first message, which says it is open.
    fn first(&self) -> &'static str {
        match self {
            Opening::Listen(_) => "subscriptions/acknowledged",
            Opening::Events(_) => "notifications/events/active",
        }
    }
}

/// Opens a stream on its own HTTP/1.1 connection and waits for its first
/// message (a listen's acknowledgement, an events stream's `active`).
pub(crate) async fn open_listen(
    target: &Target,
    src: Option<std::net::IpAddr>,
    id: u64,
    opening: &Opening,
) -> Result<(Conn, hyper::body::Incoming), String> {
    listen_on(Conn::open(target, src).await?, id, opening).await
}

/// Opens a stream on `conn` and waits for its first message.
async fn listen_on(mut conn: Conn, id: u64, opening: &Opening) -> Result<(Conn, hyper::body::Incoming), String> {
    let method = opening.method();
    let (status, mut stream) = conn.stream(method, body(id, method, opening.params())).await?;
    if status != 200 {
        return Err(format!("{method}: HTTP {status}"));
    }
    let mut seen = String::new();
    while !seen.contains(opening.first()) {
        match tokio::time::timeout(EVENT_TIMEOUT, stream.frame()).await {
            Ok(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    seen.push_str(&String::from_utf8_lossy(d));
                }
            }
            _ => return Err(format!("the {method} stream ended before its first message")),
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

/// Opens `s.streams` streams, stream `k` with `filter(k)`, spread over
/// `--url` and `--also-url` in turn.
async fn open_many(s: &Streams, filter: &dyn Fn(usize) -> Opening) -> Vec<(Conn, hyper::body::Incoming)> {
    let target = Target::parse(&s.url).expect("a loopback URL");
    let mut targets = vec![target.clone()];
    targets.extend(s.also_urls.iter().map(|u| Target::parse(u).expect("a loopback URL")));
    assert!(!s.http2 || targets.len() == 1, "--also-url is for HTTP/1.1 streams");
    let shared = h2_connections(s, &target).await;
    let mut out = Vec::with_capacity(s.streams);
    let batch = 256;
    let mut i = 0;
    while i < s.streams {
        let n = batch.min(s.streams - i);
        let opened = futures_join(
            (i..i + n)
                .map(|k| {
                    let (target, filter) = (targets[k % targets.len()].clone(), filter(k));
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

pub(crate) async fn listen(s: Streams, hold: u64, settle: u64) {
    let before = s.pid.and_then(rss_kib);
    let t0 = Instant::now();
    let streams = open_many(&s, &|_| FanoutEvent::Tools.filter_of(0, 1)).await;
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

pub(crate) async fn fanout(s: Streams, events: usize, event: FanoutEvent) {
    let target = Target::parse(&s.url).expect("a loopback URL");
    let subscriptions = s.subscriptions.max(1);
    let rss_before = s.pid.and_then(rss_kib);
    let opening = Instant::now();
    let streams = open_many(&s, &|k| event.filter_of(k, subscriptions)).await;
    println!("opened {} listen streams in {:.2}s", streams.len(), opening.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_millis(500)).await;
    if let (Some(b), Some(d)) = (rss_before, s.pid.and_then(rss_kib)) {
        let per = d.saturating_sub(b) as f64 / streams.len().max(1) as f64;
        println!("server RSS: before={b} KiB with-streams={d} KiB per-stream={per:.2} KiB");
    }
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
    let run_before = (s.pid.and_then(|p| run_time_micros(Some(p))), run_time_micros(None));
    let others_before: Vec<Option<u64>> = s.cpu_of.iter().map(|p| run_time_micros(Some(*p))).collect();
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
    let run_after = (s.pid.and_then(|p| run_time_micros(Some(p))), run_time_micros(None));
    let per_event = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.3} ms", a.saturating_sub(b) as f64 / 1000.0 / events as f64),
        _ => "n/a".to_owned(),
    };
    println!(
        "  CPU per event: server {} (--pid), this client {}",
        per_event(cpu_after.0, cpu_before.0),
        per_event(cpu_after.1, cpu_before.1)
    );
    println!(
        "  run time per event: server {} (--pid), this client {}",
        per_event(run_after.0, run_before.0),
        per_event(run_after.1, run_before.1)
    );
    for (pid, before) in s.cpu_of.iter().zip(others_before) {
        println!("  run time per event of {pid}: {}", per_event(run_time_micros(Some(*pid)), before));
    }
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

pub(crate) async fn churn(s: Streams, concurrency: usize, duration: u64) {
    let target = Target::parse(&s.url).expect("a loopback URL");
    let deadline = Instant::now() + Duration::from_secs(duration);
    let opened = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for w in 0..concurrency {
        let (target, opened, failed) = (target.clone(), opened.clone(), failed.clone());
        let (sources, filter) = (s.sources, FanoutEvent::Tools.filter_of(0, 1));
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
