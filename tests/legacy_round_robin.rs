//! The official TypeScript and Python SDK clients in legacy sessions
//! (initialize) behind the shipped `config/nginx.conf`, round robin over
//! three real instances with no stickiness and sessions in a real
//! `redis-server` (`legacy.store = "redis"`): full flows — list, a call with
//! progress, an elicitation answered mid-call, subscribe and the update on
//! the GET stream, cancel, ping, DELETE — 200 of each client with none
//! failing; then one instance is SIGKILLed mid-run: only what was in flight
//! on it fails, and every session goes on on the others.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::nginx::ShippedNginx;
use common::redis::Redis;
use common::*;
use serde_json::Value;

const KEY: &str = "cm91bmQtcm9iaW4tbGVnYWN5LXNlc3Npb25zLWtleS0wMQ=="; // 35 bytes

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Both clients installed (their install scripts run), or `None` after
/// printing why `test` is skipped.
fn installed(test: &str) -> Option<PathBuf> {
    external(test, &["redis-server", "nginx", "node", "npm", "python3"])?;
    let python = real_servers(test, "python", &["python3"])?;
    let script = root().join("tests/ts-client/install.sh");
    if !std::process::Command::new("bash").arg(script).status().is_ok_and(|s| s.success()) {
        assert!(!external_required(), "{test}: tests/ts-client/install.sh failed");
        println!("SKIP {test}: tests/ts-client/install.sh failed");
        return None;
    }
    Some(python.join("bin/python"))
}

/// An instance over the Redis at `redis_port`, its stderr drained once it
/// is up (so that its logging never blocks): the process and its port.
async fn instance(name: &str, redis_port: u16) -> (tokio::process::Child, u16, ConfigFile) {
    let cfg = ConfigFile::new(
        &format!("round-robin-{name}-{redis_port}"),
        &format!(
            "[server]\nname = \"{name}\"\n[hub]\nbackend = \"redis\"\nredis_channel_prefix = \"rr-{pid}\"\n\
             [redis]\nurl = \"redis://127.0.0.1:{redis_port}/\"\n[mrtr]\nkey = \"{KEY}\"\n\
             [catalog]\nname = \"everything\"\n",
            pid = std::process::id()
        ),
    );
    let mut node = HttpChild::spawn(&["--config", cfg.path()]).await;
    node.stderr_until_all(&["redis subscription established", "bus subscribed"]).await;
    let port = node.url.trim_end_matches("/mcp").rsplit(':').next().unwrap().parse().unwrap();
    let HttpChild { child, mut stderr, .. } = node;
    actix_rt::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (child, port, cfg)
}

/// Starts a flows driver; its one JSON line is read by [`report`].
fn driver(program: &Path, args: &[&str], cwd: &Path) -> tokio::process::Child {
    tokio::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the driver starts")
}

/// What a driver printed, once it ended (within 5 minutes).
async fn report(what: &str, child: tokio::process::Child) -> Value {
    let out = tokio::time::timeout(Duration::from_secs(300), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{what} ended within 5 minutes"))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{what} printed no JSON ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// Requests the balancer's access log shows answered by the instance on `port`.
fn answered_by(lb: &ShippedNginx, port: u16) -> usize {
    let upstream = format!("upstream=127.0.0.1:{port} ");
    lb.access_log().lines().filter(|l| l.contains(&upstream)).count()
}

/// Runs `flows` flows of each client through `lb`, 4 at a time each;
/// SIGKILLs `kill` (an instance and its port, if given) once it has answered
/// 40 requests of this run, both drivers still running.
async fn both(
    python: &Path,
    lb: &ShippedNginx,
    flows: usize,
    kill: Option<(&mut tokio::process::Child, u16)>,
) -> (Value, Value) {
    let url = lb.url("/mcp");
    let (n, c) = (flows.to_string(), "4".to_string());
    let before = kill.as_ref().map(|(_, port)| answered_by(lb, *port));
    let mut ts = driver(Path::new("node"), &["legacy_flows.mjs", &url, &n, &c], &root().join("target/ts-client"));
    let script = root().join("tests/real-servers/legacy_flows.py");
    let mut py = driver(python, &[script.to_str().unwrap(), &url, &n, &c], &root());
    if let (Some((victim, port)), Some(before)) = (kill, before) {
        let what = format!("the instance on {port} answered 40 requests of the flows");
        wait_for(&what, Duration::from_secs(120), Duration::from_millis(100), async || {
            let answered = answered_by(lb, port) - before;
            if answered >= 40 {
                Ok(())
            } else {
                Err(format!("{answered} answered"))
            }
        })
        .await;
        for (what, driver) in [("TypeScript", &mut ts), ("Python", &mut py)] {
            let ended = driver.try_wait().expect("the driver's status");
            assert!(ended.is_none(), "the {what} flows still run when the instance is killed: they ended {ended:?}");
        }
        victim.start_kill().expect("SIGKILL");
        let _ = victim.wait().await;
    }
    (report("the TypeScript flows", ts).await, report("the Python flows", py).await)
}

#[actix_rt::test]
async fn official_clients_in_legacy_sessions_round_robin_over_three_instances() {
    let test = "legacy_round_robin::official_clients_in_legacy_sessions_round_robin_over_three_instances";
    let Some(python) = installed(test) else { return };
    let redis_port = free_fixed_port();
    let _redis = Redis::start(redis_port).await;
    let (_a, a_port, _fa) = instance("rr-a", redis_port).await;
    let (mut b, b_port, _fb) = instance("rr-b", redis_port).await;
    let (_c, c_port, _fc) = instance("rr-c", redis_port).await;
    let lb = ShippedNginx::start(&[(a_port, true), (b_port, true), (c_port, true)]).await;

    // 200 flows of each client: none fails.
    let (ts, py) = both(&python, &lb, 200, None).await;
    for (what, v) in [("TypeScript", &ts), ("Python", &py)] {
        println!("{what} flows: {v}");
        assert_eq!(v["flows"], 200, "{what}: {v}");
        assert_eq!(v["ok"], 200, "{what}: {v}");
        assert_eq!(v["lostSessions"], 0, "{what}: {v}");
    }
    // Round robin did spread them: every instance answered.
    let log = lb.access_log();
    for port in [a_port, b_port, c_port] {
        assert!(log.contains(&format!("upstream=127.0.0.1:{port}")), "instance {port} served nothing");
    }

    // Instance B is SIGKILLed mid-run of 100 more flows of each (once it has
    // answered 40 of their requests): only steps in flight on it fail (each
    // flow has one request out at a time, 4 flows per client), each with an
    // error; no session is lost.
    let (ts, py) = both(&python, &lb, 100, Some((&mut b, b_port))).await;
    for (what, v) in [("TypeScript", &ts), ("Python", &py)] {
        println!("{what} flows with an instance killed: {v}");
        assert_eq!(v["flows"], 100, "{what}: {v}");
        assert_eq!(v["lostSessions"], 0, "{what}: every session went on: {v}");
        let failed = v["failedSteps"].as_u64().unwrap();
        assert!(failed <= 4, "{what}: at most the 4 requests in flight on the killed instance failed: {v}");
        for e in v["errors"].as_array().unwrap() {
            assert!(e.as_str().is_some_and(|e| e.len() > 10), "{what}: a failure says what failed: {e}");
        }
    }
}
