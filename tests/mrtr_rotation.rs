//! Rolling a new `requestState` key through a running fleet: three real
//! instances restarted one by one, mid-run, through every step of the roll
//! (`[K1]` → `[K1, K2]` → `[K2, K1]` → `[K2]`), while multi round-trip flows
//! start on one instance and finish on another — none fails.

use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const K1: &str = "cm90YXRpb24tdGVzdC1vbGQta2V5LWZvci1ldmVyeS1pbnN0YW5jZQ=="; // 39 bytes
const K2: &str = "cm90YXRpb24tdGVzdC1uZXcta2V5LWZvci1ldmVyeS1pbnN0YW5jZQ=="; // 39 bytes

fn call(id: i64, extra: Value) -> Value {
    let caps = json!({"elicitation": {}});
    let mut params =
        json!({"name": "test_input_required_result_elicitation", "arguments": {}, "_meta": meta_with(caps)});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// One flow: asked for input at `start`, answered at `finish`; its
/// greeting, or what went wrong.
async fn flow(start: &str, finish: &str) -> Result<(), String> {
    let first = post(start, &call(1, json!({}))).await;
    let Some(state) = first.response()["result"]["requestState"].as_str() else {
        return Err(format!("round 1 at {start}: {}", first.raw));
    };
    let answers = json!({
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state,
    });
    let done = post(finish, &call(2, answers)).await;
    match done.response()["result"]["content"][0]["text"].as_str() {
        Some("Hello, Ada!") => Ok(()),
        _ => Err(format!("round 2 at {finish} (started at {start}): {}", done.raw)),
    }
}

/// An instance on `port` holding `keys`.
async fn instance(port: u16, keys: &[&str]) -> (HttpChild, ConfigFile) {
    let list: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
    let cfg = ConfigFile::new(
        &format!("rotation-{port}-{}", keys.len() * 10 + usize::from(keys[0] == K2)),
        &format!(
            "[mrtr]\nkeys = [{}]\n[shutdown]\ndrain_ms = 300\n[catalog]\nname = \"everything\"\n",
            list.join(", ")
        ),
    );
    (HttpChild::spawn_at(&format!("127.0.0.1:{port}"), &["--config", cfg.path()]).await, cfg)
}

/// The operator's balancer: which instances take new flows, how many flows
/// are under way on each instance (started there or to finish there), and
/// how many ended that started on it, and that finished on it.
#[derive(Default)]
struct Rotation {
    up: Vec<u16>,
    in_flight: HashMap<u16, usize>,
    ended: HashMap<u16, [usize; 2]>,
}

impl Rotation {
    /// A new flow's instances: where it starts and where it finishes.
    fn pick(&mut self, n: usize) -> (u16, u16) {
        let (start, finish) = (self.up[n % self.up.len()], self.up[(n + 1) % self.up.len()]);
        for port in [start, finish] {
            *self.in_flight.entry(port).or_default() += 1;
        }
        (start, finish)
    }

    /// The flow from `start` to `finish` ended.
    fn end(&mut self, start: u16, finish: u16) {
        for (role, port) in [start, finish].into_iter().enumerate() {
            *self.in_flight.get_mut(&port).unwrap() -= 1;
            self.ended.entry(port).or_default()[role] += 1;
        }
    }

    /// Flows ended that started on `port`, and that finished on it.
    fn ended_on(&self, port: u16) -> [usize; 2] {
        self.ended.get(&port).copied().unwrap_or_default()
    }
}

#[actix_rt::test]
async fn a_key_rolled_through_a_running_fleet_loses_no_flow() {
    let ports = [free_fixed_port(), free_fixed_port(), free_fixed_port()];
    let mut nodes = Vec::new();
    for port in ports {
        nodes.push(Some(instance(port, &[K1]).await));
    }
    let url = |port: u16| format!("http://127.0.0.1:{port}/mcp");
    let rotation = Arc::new(Mutex::new(Rotation { up: ports.to_vec(), ..Rotation::default() }));
    let (done, flows, failures) =
        (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)), Arc::new(Mutex::new(Vec::new())));
    let mut workers = Vec::new();
    for w in 0..4usize {
        let (rotation, done, flows, failures) = (rotation.clone(), done.clone(), flows.clone(), failures.clone());
        workers.push(actix_rt::spawn(async move {
            let mut n = w;
            while !done.load(Ordering::Acquire) || flows.load(Ordering::Acquire) < 500 {
                let (start, finish) = rotation.lock().unwrap().pick(n);
                n += 1;
                if let Err(e) = flow(&url(start), &url(finish)).await {
                    failures.lock().unwrap().push(e);
                }
                rotation.lock().unwrap().end(start, finish);
                flows.fetch_add(1, Ordering::AcqRel);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
    }

    // The roll: each step through the whole fleet, one instance at a time
    // taken out of rotation, stopped once no flow is under way on it (it
    // drains), started with the step's keys and put back; the next is taken
    // out once flows started on the new one and finished on another, and
    // the other way round, have ended.
    let steps: [&[&str]; 3] = [&[K1, K2], &[K2, K1], &[K2]];
    let every = Duration::from_millis(5);
    for keys in steps {
        for (i, port) in ports.iter().enumerate() {
            rotation.lock().unwrap().up.retain(|p| p != port);
            let what = format!("no flow under way on {port}, out of rotation");
            wait_for(&what, Duration::from_secs(20), every, async || {
                match rotation.lock().unwrap().in_flight.get(port).copied().unwrap_or(0) {
                    0 => Ok(()),
                    n => Err(format!("{n} flows")),
                }
            })
            .await;
            let (old, _cfg) = nodes[i].take().unwrap();
            old.terminate().await;
            nodes[i] = Some(instance(*port, keys).await);
            let before = {
                let mut rotation = rotation.lock().unwrap();
                rotation.up.push(*port);
                rotation.ended_on(*port)
            };
            let what = format!("flows started on {port} and finished on it, back in rotation");
            wait_for(&what, Duration::from_secs(20), every, async || {
                let now = rotation.lock().unwrap().ended_on(*port);
                let since = [now[0] - before[0], now[1] - before[1]];
                if since[0] >= 4 && since[1] >= 4 {
                    Ok(())
                } else {
                    Err(format!("{} started there, {} finished there", since[0], since[1]))
                }
            })
            .await;
        }
    }
    done.store(true, Ordering::Release);
    for w in workers {
        w.await.unwrap();
    }
    let (total, failed) = (flows.load(Ordering::Acquire), failures.lock().unwrap().clone());
    println!("key roll: {total} flows across the instances, {} failed", failed.len());
    assert!(total >= 500, "{total} flows");
    assert!(failed.is_empty(), "{} of {total} flows failed: {:?}", failed.len(), &failed[..failed.len().min(5)]);
    for (node, _cfg) in nodes.into_iter().flatten() {
        node.terminate().await;
    }
}
