//! Redis Sentinel (`[redis] sentinels`): a real master, replica and three
//! sentinels (`redis-server --sentinel`, quorum 2) behind two `actix-mcp
//! serve` instances, under load — calls and task creations on both, a
//! listen stream on each, a legacy session in Redis. The master is
//! SIGKILLed; within 15 s both instances use the promoted replica, the
//! listen streams opened before the kill stay open and hear the next
//! change, every task acknowledged (with `min_replicas = 1`) is still there,
//! and so is the session; `/readyz` and `/status.json` name the new master
//! and the failover. The figures are printed.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::nginx::{quiet, wait_for_port};
use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One RESP command to `port`: the raw reply.
async fn redis_raw(port: u16, args: &[&str]) -> String {
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else { return String::new() };
    let mut cmd = format!("*{}\r\n", args.len());
    for a in args {
        cmd.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    let _ = s.write_all(cmd.as_bytes()).await;
    let mut buf = vec![0u8; 16384];
    let n = tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf)).await.ok().and_then(Result::ok).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Waits up to `secs` for `check`.
async fn until(what: &str, secs: u64, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within {secs} s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn status(url: &str, path: &str) -> Value {
    reqwest::get(url.replace("/mcp", path)).await.unwrap().json().await.unwrap_or_default()
}

/// A master on `p_master`, a replica of it on `p_replica` and three
/// sentinels watching it as `mymaster` (quorum 2), under `dir`; the
/// master's process (to kill) and the others' (kept while the test runs).
async fn sentinel_set(
    dir: &std::path::Path,
    p_master: u16,
    p_replica: u16,
    sentinels: [u16; 3],
) -> (tokio::process::Child, Vec<tokio::process::Child>) {
    // `--dir`: a replica writes the copy it syncs to disk (dump.rdb), into the test's folder.
    let folder = dir.display().to_string();
    let base = |port: u16| {
        let mut args = vec![port.to_string(), "--bind".into(), "127.0.0.1".into(), "--save".into(), String::new()];
        args.extend(["--dir".into(), folder.clone()]);
        args
    };
    let mut master_args = vec!["--port".to_owned()];
    master_args.extend(base(p_master));
    let master_args: Vec<&str> = master_args.iter().map(String::as_str).collect();
    let master = quiet("redis-server", &master_args).spawn().expect("redis-server starts");
    wait_for_port(p_master, "master").await;
    let mut replica_args = vec!["--port".to_owned()];
    replica_args.extend(base(p_replica));
    replica_args.extend(["--replicaof".into(), "127.0.0.1".into(), p_master.to_string()]);
    let replica_args: Vec<&str> = replica_args.iter().map(String::as_str).collect();
    let mut others = vec![quiet("redis-server", &replica_args).spawn().expect("the replica starts")];
    wait_for_port(p_replica, "replica").await;
    for port in sentinels {
        let conf = dir.join(format!("sentinel-{port}.conf"));
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\nsentinel monitor mymaster 127.0.0.1 {p_master} 2\n\
                 sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\n",
                dir.display()
            ),
        )
        .unwrap();
        others.push(quiet("redis-server", &[conf.to_str().unwrap(), "--sentinel"]).spawn().expect("sentinel starts"));
        wait_for_port(port, "sentinel").await;
    }
    until("the replica in sync and known to every sentinel", 30, async || {
        let mut known = redis_raw(p_replica, &["INFO", "replication"]).await.contains("master_link_status:up");
        for port in sentinels {
            let sentinel = redis_raw(port, &["SENTINEL", "master", "mymaster"]).await;
            known &= redis_raw(port, &["SENTINEL", "replicas", "mymaster"]).await.contains(&p_replica.to_string())
                && sentinel.contains("num-other-sentinels\r\n$1\r\n2\r\n");
        }
        known
    })
    .await;
    (master, others)
}

/// What the load saw.
#[derive(Default)]
struct Load {
    calls: usize,
    failed_calls: Vec<String>,
    tasks: Vec<(String, String)>,
    refused_tasks: Vec<String>,
}

/// Calls and task creations on `urls` in turn until `stop`: 4 callers,
/// each answer recorded in `seen` as it comes.
async fn load(urls: [String; 2], stop: Arc<AtomicBool>, seen: Arc<Mutex<Load>>) {
    let mut workers = Vec::new();
    for w in 0..4usize {
        let (urls, stop, seen) = (urls.clone(), stop.clone(), seen.clone());
        workers.push(actix_rt::spawn(async move {
            let mut n = w;
            while !stop.load(Ordering::Acquire) {
                let url = &urls[n % 2];
                n += 1;
                let echo = json!({"name": "echo", "arguments": {"text": "x"}});
                let r = post(url, &request(json!(n), "tools/call", echo)).await;
                {
                    let mut s = seen.lock().unwrap();
                    s.calls += 1;
                    if r.status != 200 || r.response().get("error").is_some() {
                        s.failed_calls.push(r.raw.clone());
                    }
                }
                if n % 4 == 0 {
                    // Every fourth request of a worker, on each instance in turn.
                    let url = &urls[(n / 4) % 2];
                    let body = with_tasks(
                        n as i64,
                        "tools/call",
                        json!({"name": "slow_compute", "arguments": {"seconds": 1, "label": "load"}}),
                    );
                    let r = post(url, &body).await;
                    let id = r.response()["result"]["taskId"].as_str().map(str::to_owned);
                    let mut s = seen.lock().unwrap();
                    match id {
                        Some(id) if r.status == 200 => s.tasks.push((url.clone(), id)),
                        _ => s.refused_tasks.push(format!("{} {}", r.status, r.raw)),
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
}

impl Load {
    /// How many task creations each of `urls` acknowledged.
    fn acknowledged(&self, urls: &[String; 2]) -> [usize; 2] {
        urls.clone().map(|url| self.tasks.iter().filter(|(u, _)| *u == url).count())
    }
}

/// Waits until the load has had at least `tasks[i]` task creations
/// acknowledged by `urls[i]`, each (fails after `secs`).
async fn until_acknowledged(seen: &Mutex<Load>, urls: &[String; 2], tasks: [usize; 2], secs: u64, what: &str) {
    wait_for(what, Duration::from_secs(secs), Duration::from_millis(20), async || {
        let s = seen.lock().unwrap();
        let acknowledged = s.acknowledged(urls);
        if acknowledged[0] >= tasks[0] && acknowledged[1] >= tasks[1] {
            Ok(())
        } else {
            Err(format!("{acknowledged:?} acknowledged, {} refused, {} calls", s.refused_tasks.len(), s.calls))
        }
    })
    .await;
}

#[actix_rt::test]
async fn a_failover_under_load_is_followed_within_15_s_and_loses_nothing_acknowledged() {
    let Some(_) = external("sentinel::a_failover_under_load_is_followed", &["redis-server"]) else { return };
    let dir = scratch("sentinel-test");
    let (p_master, p_replica) = (free_fixed_port(), free_fixed_port());
    let sentinels = [free_fixed_port(), free_fixed_port(), free_fixed_port()];
    let (mut master, _others) = sentinel_set(&dir, p_master, p_replica, sentinels).await;

    let listed: Vec<String> = sentinels.iter().map(|p| format!("\"127.0.0.1:{p}\"")).collect();
    let toml = format!(
        "[catalog]\nname = \"everything\"\n[status]\nenabled = true\n[mrtr]\nkey = \"c2VudGluZWwtdGVzdC1rZXktc2hhcmVkLWJ5LWluc3RhbmNlcw==\"\n\
         [hub]\nbackend = \"redis\"\nredis_channel_prefix = \"sentinel-{pid}\"\n\
         [redis]\nsentinels = [{}]\nmaster = \"mymaster\"\nmin_replicas = 1\n",
        listed.join(", "),
        pid = std::process::id()
    );
    let config = ConfigFile::new("sentinel-test", &toml);
    let mut a = HttpChild::spawn(&["--config", config.path()]).await;
    let mut b = HttpChild::spawn(&["--config", config.path()]).await;
    for node in [&mut a, &mut b] {
        node.stderr_until_all(&["redis subscription established", "task cancellations subscribed", "bus subscribed"])
            .await;
    }
    // A listen stream on each instance, for tool list changes and the
    // updates of one resource.
    let watched = "test://watched-resource";
    let filter = json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": [watched]}});
    let mut streams = Vec::new();
    for node in [&a, &b] {
        let mut stream = SseReader::open(&node.url, &request(json!(1), "subscriptions/listen", filter.clone())).await;
        stream.next().await.expect("the acknowledgement");
        streams.push(stream);
    }
    let trigger =
        |id: i64| request(json!(id), "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
    assert_eq!(post(&a.url, &trigger(2)).await.status, 200);
    for stream in &mut streams {
        let n = stream.next().await.expect("a change made on A, heard on both");
        assert_eq!(n["method"], "notifications/tools/list_changed");
    }
    // A legacy session acknowledged before the failover.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let r = legacy_post(&a.url, None, &init).await;
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let before = status(&a.url, "/readyz").await;
    assert_eq!(before["redis"]["master"], format!("127.0.0.1:{p_master}"), "{before}");

    // Load on both instances; the master dies once the load has had task
    // creations acknowledged (so that there is something to lose).
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Load::default()));
    let urls = [a.url.clone(), b.url.clone()];
    let running = actix_rt::spawn(load(urls.clone(), stop.clone(), seen.clone()));
    until_acknowledged(&seen, &urls, [4, 4], 20, "task creations acknowledged by both before the kill").await;
    let mut resyncs_before = Vec::new();
    for node in [&a, &b] {
        resyncs_before.push(counter(&node.url, "mcp_server_redis_resyncs_total").await);
    }
    let killed = Instant::now();
    master.kill().await.unwrap();
    let promoted = format!("127.0.0.1:{p_replica}");
    let mut followed = Vec::new();
    for node in [&a, &b] {
        until("the instance follows the promoted replica", 15, async || {
            status(&node.url, "/readyz").await["redis"]["master"] == promoted.as_str()
        })
        .await;
        followed.push(killed.elapsed());
    }
    // The load goes on on the promoted replica: task creations acknowledged
    // after both instances followed it.
    let [on_a, on_b] = seen.lock().unwrap().acknowledged(&urls);
    let what = "task creations acknowledged by both after the failover";
    until_acknowledged(&seen, &urls, [on_a + 2, on_b + 2], 15, what).await;
    stop.store(true, Ordering::Release);
    running.await.unwrap();
    let seen = std::mem::take(&mut *seen.lock().unwrap());

    // Both instances' hub subscriptions are back, on the promoted replica
    // (each counts the resync of its listeners that followed).
    for (node, before) in [&a, &b].into_iter().zip(resyncs_before) {
        let what = format!("the hub subscription of {} restored after the failover", node.url);
        wait_for(&what, Duration::from_secs(15), Duration::from_millis(50), async || {
            let resyncs = counter(&node.url, "mcp_server_redis_resyncs_total").await;
            if resyncs > before {
                Ok(())
            } else {
                Err(format!("{resyncs} resyncs, {before} before the kill"))
            }
        })
        .await;
    }
    // A change made on A after that reaches both streams held open since
    // before the kill. No resource was updated before it, and the resync
    // brings only list changes: the update heard is this one.
    let update = request(json!(10), "tools/call", json!({"name": "test_trigger_resource_update", "arguments": {}}));
    let r = post(&a.url, &update).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    for (node, stream) in ["A", "B"].into_iter().zip(&mut streams) {
        let n = loop {
            let n = stream.next().await.unwrap_or_else(|| panic!("the stream on {node} stayed open"));
            if n["method"] != "notifications/tools/list_changed" {
                break n;
            }
        };
        assert_eq!(n["method"], "notifications/resources/updated", "on {node}: {n}");
        assert_eq!(n["params"]["uri"], watched, "on {node}: {n}");
    }
    // Every acknowledged task and the session outlived the failover.
    let mut lost = Vec::new();
    for (url, task) in &seen.tasks {
        let r = post(url, &with_tasks(900, "tasks/get", json!({"taskId": task}))).await;
        if r.status != 200 || !r.response()["result"]["status"].is_string() {
            lost.push(format!("{url} {task}: {}", r.raw));
        }
    }
    assert!(lost.is_empty(), "{} of {} acknowledged tasks lost: {lost:?}", lost.len(), seen.tasks.len());
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(legacy_post(&b.url, Some(&sid), &ping).await.status, 200, "the session outlived the failover");
    assert!(
        seen.failed_calls.is_empty(),
        "calls need no Redis: {:?}",
        &seen.failed_calls[..seen.failed_calls.len().min(3)]
    );
    for refused in &seen.refused_tasks {
        assert!(refused.contains("the task store is unavailable"), "a refused task says why: {refused}");
    }
    let s = status(&a.url, "/status.json").await;
    assert!(s["redis"]["failovers"].as_u64().unwrap_or(0) >= 1, "{s}");
    assert!(s["redis"]["last_failover_unix"].is_number(), "{s}");
    println!(
        "failover: instances on the promoted replica {:.1} s and {:.1} s after the master was killed; \
         {} calls, {} failed; {} tasks acknowledged, all kept; {} task creations refused during the gap",
        followed[0].as_secs_f64(),
        followed[1].as_secs_f64(),
        seen.calls,
        seen.failed_calls.len(),
        seen.tasks.len(),
        seen.refused_tasks.len()
    );
}
