#![allow(missing_docs)] // criterion_group! generates undocumented items
//! `SubscriptionTable` lookups without a runtime, at 10k and 100k
//! subscriptions: routing a per-URI update (one listener among many),
//! routing a list-changed event to every listener, and subscribe/unsubscribe.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// Visits every routed id (so the iteration itself is measured).
fn visit(t: &SubscriptionTable, e: &Event) -> usize {
    let mut n = 0;
    for id in t.route(e) {
        black_box(id);
        n += 1;
    }
    n
}
use mcp_protocol::subscription::{Event, ListenerId, SubscriptionFilter, SubscriptionTable};

/// `n` listeners: each subscribes to its own URI and to one shared URI;
/// every tenth also wants tools/list_changed.
fn table(n: usize) -> (SubscriptionTable, Vec<ListenerId>) {
    let mut t = SubscriptionTable::new();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let id = ListenerId::new();
        let filter = SubscriptionFilter {
            tools_list_changed: i % 10 == 0,
            resource_subscriptions: vec![format!("file:///data/{i}.json"), "file:///shared.json".into()],
            ..Default::default()
        };
        t.insert(id, &filter);
        ids.push(id);
    }
    (t, ids)
}

fn routing(c: &mut Criterion) {
    let mut g = c.benchmark_group("route");
    for n in [10_000usize, 100_000] {
        let (t, ids) = table(n);
        let one = Event::ResourceUpdated { uri: format!("file:///data/{}.json", n / 2) };
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("resource_updated_one_of", n), &one, |b, e| {
            b.iter(|| visit(black_box(&t), black_box(e)))
        });
        let shared = Event::ResourceUpdated { uri: "file:///shared.json".into() };
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("resource_updated_all_of", n), &shared, |b, e| {
            b.iter(|| visit(black_box(&t), black_box(e)))
        });
        g.throughput(Throughput::Elements((n / 10) as u64));
        g.bench_with_input(BenchmarkId::new("tools_list_changed_tenth_of", n), &Event::ToolsListChanged, |b, e| {
            b.iter(|| visit(black_box(&t), black_box(e)))
        });
        let mut t2 = t.clone();
        let filter = SubscriptionFilter { resource_subscriptions: vec!["file:///x".into()], ..Default::default() };
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("insert_remove_with", n), |b| {
            b.iter(|| {
                let id = ListenerId::new();
                t2.insert(id, &filter);
                t2.remove(id)
            })
        });
        black_box(ids);
    }
    g.finish();
}

criterion_group!(benches, routing);
criterion_main!(benches);
