//! Redis Sentinel (`[redis] sentinels`): a real master, replica and sentinel
//! (`redis-server --sentinel`) behind two `actix-mcp serve` instances. The
//! master is killed; within 15 s both instances use the promoted replica,
//! a listen stream opened before the kill stays open and hears the next
//! change, a task written with `min_replicas = 1` before the failover is
//! still there, and `/readyz` and `/status.json` name the new master and the
//! failover.

mod common;

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

#[actix_rt::test]
async fn a_failover_is_followed_within_15_s_and_loses_nothing_acknowledged() {
    let Some(_) = external("sentinel::a_failover_is_followed", &["redis-server"]) else { return };
    let dir = std::env::temp_dir().join(format!("actix-mcp-sentinel-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (p_master, p_replica, p_sentinel) = (free_fixed_port(), free_fixed_port(), free_fixed_port());
    let base = |port: u16| vec![port.to_string(), "--bind".into(), "127.0.0.1".into(), "--save".into(), String::new()];
    let mut master_args = vec!["--port".to_owned()];
    master_args.extend(base(p_master));
    let master_args: Vec<&str> = master_args.iter().map(String::as_str).collect();
    let mut master = quiet("redis-server", &master_args).spawn().expect("redis-server starts");
    wait_for_port(p_master, "master").await;
    let replica_of = p_master.to_string();
    let mut replica_args = vec!["--port".to_owned()];
    replica_args.extend(base(p_replica));
    replica_args.extend(["--replicaof".into(), "127.0.0.1".into(), replica_of]);
    let replica_args: Vec<&str> = replica_args.iter().map(String::as_str).collect();
    let _replica = quiet("redis-server", &replica_args).spawn().expect("the replica starts");
    wait_for_port(p_replica, "replica").await;
    let conf = dir.join("sentinel.conf");
    std::fs::write(
        &conf,
        format!(
            "port {p_sentinel}\nbind 127.0.0.1\ndir {}\nsentinel monitor mymaster 127.0.0.1 {p_master} 1\n\
             sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\n",
            dir.display()
        ),
    )
    .unwrap();
    let _sentinel = quiet("redis-server", &[conf.to_str().unwrap(), "--sentinel"]).spawn().expect("sentinel starts");
    wait_for_port(p_sentinel, "sentinel").await;
    until("the replica in sync and known to the sentinel", 20, async || {
        redis_raw(p_replica, &["INFO", "replication"]).await.contains("master_link_status:up")
            && redis_raw(p_sentinel, &["SENTINEL", "replicas", "mymaster"]).await.contains(&p_replica.to_string())
    })
    .await;

    let toml = format!(
        "[catalog]\nname = \"everything\"\n[status]\nenabled = true\n[mrtr]\nkey = \"c2VudGluZWwtdGVzdC1rZXktc2hhcmVkLWJ5LWluc3RhbmNlcw==\"\n\
         [hub]\nbackend = \"redis\"\nredis_channel_prefix = \"sentinel-{pid}\"\n\
         [redis]\nsentinels = [\"127.0.0.1:{p_sentinel}\"]\nmaster = \"mymaster\"\nmin_replicas = 1\n",
        pid = std::process::id()
    );
    let config = ConfigFile::new("sentinel-test", &toml);
    let mut a = HttpChild::spawn(&["--config", config.path()]).await;
    let mut b = HttpChild::spawn(&["--config", config.path()]).await;
    for node in [&mut a, &mut b] {
        node.stderr_until_all(&["redis subscription established", "task cancellations subscribed"]).await;
    }
    let filter = json!({"notifications": {"toolsListChanged": true}});
    let mut stream = SseReader::open(&b.url, &request(json!(1), "subscriptions/listen", filter)).await;
    stream.next().await.expect("the acknowledgement");
    let trigger =
        |id: i64| request(json!(id), "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
    assert_eq!(post(&a.url, &trigger(2)).await.status, 200);
    let n = stream.next().await.expect("a change made on A, heard on B");
    assert_eq!(n["method"], "notifications/tools/list_changed");
    // A task written before the failover, acknowledged by the replica.
    let task = new_task(
        &a.url,
        &with_tasks(3, "tools/call", json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "kept"}})),
    )
    .await;
    let before = status(&a.url, "/readyz").await;
    assert_eq!(before["redis"]["master"], format!("127.0.0.1:{p_master}"), "{before}");

    // The master dies.
    let killed = Instant::now();
    master.kill().await.unwrap();
    let promoted = format!("127.0.0.1:{p_replica}");
    for node in [&a, &b] {
        until("the instance follows the promoted replica", 15, async || {
            status(&node.url, "/readyz").await["redis"]["master"] == promoted.as_str()
        })
        .await;
    }
    let followed = killed.elapsed();
    // Whatever the gap brought (the resync's list_changed), then a new change
    // made on A reaches the stream B held open since before the kill.
    while let Some(Some(_)) = stream.next_within(Duration::from_secs(2)).await {}
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut heard = false;
    let mut id = 10;
    while !heard && Instant::now() < deadline {
        id += 1;
        post(&a.url, &trigger(id)).await;
        heard = matches!(stream.next_within(Duration::from_secs(1)).await, Some(Some(n)) if n["method"] == "notifications/tools/list_changed");
    }
    assert!(heard, "a change after the failover reached the stream opened before it");
    assert_eq!(task_get(&b.url, &task).await["status"], "working", "the acknowledged task outlived the failover");
    let s = status(&a.url, "/status.json").await;
    assert!(s["redis"]["failovers"].as_u64().unwrap_or(0) >= 1, "{s}");
    assert!(s["redis"]["last_failover_unix"].is_number(), "{s}");
    println!("both instances used the promoted replica {:.1} s after the master was killed", followed.as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
}
