#![allow(missing_docs)] // criterion_group! generates undocumented items
//! Hub fan-out: one published event to N listener actors (1k, 10k), timed
//! from `Publish` until every listener has pushed it to its sink. The hub
//! runs on an arbiter of its own, the listeners and their relay on the bench's arbiter, as in
//! the server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, Arbiter};
use actix_mcp::channels::outbound::Outbound;
use actix_mcp::channels::sink::{ListenerSink, SinkError};
use actix_mcp::hub::listener::{ListenerActor, ListenerKind, ListenerSpec};
use actix_mcp::hub::{MemoryBackend, Publish, Stats, SubscriptionHub};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcp_protocol::subscription::{Event, SubscriptionFilter};
use mcp_protocol::RequestId;
use tokio::sync::Notify;

/// Counts pushes; wakes the bench when a round is complete.
struct Counting {
    pushed: Arc<AtomicUsize>,
    target: Arc<AtomicUsize>,
    done: Arc<Notify>,
}

impl ListenerSink for Counting {
    fn push(&self, _msg: Outbound) -> Result<(), SinkError> {
        let n = self.pushed.fetch_add(1, Ordering::AcqRel) + 1;
        if n == self.target.load(Ordering::Acquire) {
            self.done.notify_one();
        }
        Ok(())
    }
    fn on_closed(&self, _notify: Box<dyn FnOnce()>) {}
    fn end(&self, _reason: &str) {}
}

fn fanout(c: &mut Criterion) {
    let mut g = c.benchmark_group("fanout");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    for n in [1_000usize, 10_000] {
        let system = actix_rt::System::new();
        let pushed = Arc::new(AtomicUsize::new(0));
        let target = Arc::new(AtomicUsize::new(usize::MAX));
        let done = Arc::new(Notify::new());
        let hub = system.block_on(async {
            let log = actix_mcp::telemetry::logging::discard();
            let hub = Arc::new(SubscriptionHub::start_in_arbiter(&Arbiter::new().handle(), move |_| {
                SubscriptionHub::new(Box::new(MemoryBackend), 1_000_000, 65_536, log)
            }));
            let filter = SubscriptionFilter { tools_list_changed: true, ..Default::default() };
            for i in 0..n {
                let sink = Counting { pushed: pushed.clone(), target: target.clone(), done: done.clone() };
                let spec = ListenerSpec {
                    kind: ListenerKind::Listen(RequestId::number(i as i64)),
                    filter: filter.clone(),
                    sink: Box::new(sink),
                    relay_mailbox: 1024,
                    ready: None,
                    expires_in: None,
                    version: None,
                };
                ListenerActor::start_with(hub.clone(), spec, &actix_mcp::telemetry::logging::discard());
            }
            // Every listener registered and acknowledged (the ack is its first push).
            while hub.send(Stats).await.unwrap().listeners < n || pushed.load(Ordering::Acquire) < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            hub
        });
        // The acks counted so far are not part of any round.
        let base = pushed.load(Ordering::Acquire);
        assert_eq!(base, n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("tools_list_changed_to", n), |b| {
            b.iter_custom(|iters| {
                system.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let goal = pushed.load(Ordering::Acquire) + n;
                        target.store(goal, Ordering::Release);
                        hub.do_send(Publish::local(Event::ToolsListChanged));
                        while pushed.load(Ordering::Acquire) < goal {
                            done.notified().await;
                        }
                    }
                    start.elapsed()
                })
            })
        });
        let stats = system.block_on(hub.send(Stats)).unwrap();
        assert_eq!(stats.lagged, 0, "no listener may lag in the bench: {stats:?}");
        drop(hub);
        let _ = hub_stop(system);
    }
    g.finish();
}

fn hub_stop(system: actix_rt::SystemRunner) -> std::io::Result<()> {
    actix_rt::System::current().stop();
    system.run()
}

criterion_group!(benches, fanout);
criterion_main!(benches);
