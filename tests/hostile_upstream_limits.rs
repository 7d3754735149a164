//! The gateway's bounds on what an upstream sends it: a line that never
//! ends, a handshake nobody answers, a listing that never ends, lines that
//! are not UTF-8 (findings 4, 5, 6 and 13 of the hostile review). The
//! upstreams are `tests/hostile/upstream.py` run by `python3`; the gateway
//! is the binary over loopback.

use crate::common;

use std::path::Path;
use std::time::Duration;

use actix_mcp::client::Client;
use common::*;
use serde_json::{json, Value};

fn python(test: &str) -> bool {
    external(test, &["python3"]).is_some()
}

/// A gateway serving `upstreams` with its status page on.
async fn gateway(dir: &Path, upstreams: &str) -> HttpChild {
    let toml = "[status]\nenabled = true\n[gateway]\nrestart_initial_ms = 300\n".to_owned() + upstreams;
    let path = dir.join("gateway.toml");
    std::fs::write(&path, toml).unwrap();
    HttpChild::spawn(&["--config", &path.display().to_string()]).await
}

/// Waits up to 20 s for upstream `name` to be down having restarted at
/// least once; its status row.
async fn down_and_restarted(url: &str, name: &str) -> Value {
    for _ in 0..200 {
        let row = upstream_row(url, name).await;
        if row["state"] == "down" && row["restarts"].as_u64() >= Some(1) {
            return row;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} never went down and restarted: {}", upstream_row(url, name).await);
}

/// Resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Finding 4: an upstream whose line never ends is cut off at its
/// `max_message_bytes`, marked down naming the limit; the gateway's memory
/// stays bounded and its other upstreams are served.
#[actix_rt::test]
async fn an_endless_line_takes_down_its_upstream_only() {
    if !python("hostile_upstream_limits::an_endless_line_takes_down_its_upstream_only") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let upstreams = hostile_upstream("flood", "max_message_bytes = 1048576", &["--endless-line"])
        + &hostile_upstream("fine", "", &["--tools", "echo"]);
    let gw = gateway(dir.path(), &upstreams).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    let row = down_and_restarted(&gw.url, "flood").await;
    let reason = row["detail"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("max_message_bytes"), "{row}");
    until_tools(&client, &["fine__echo"], true).await;
    let rss = rss_kib(gw.child.id().unwrap());
    assert!(rss < 200 * 1024, "the gateway holds {rss} KiB after an endless line");
}

/// Finding 5: an upstream that never answers its handshake is given up
/// after `timeout_ms`, marked down naming the wait, and started again.
#[actix_rt::test]
async fn a_silent_upstream_times_out_and_is_restarted() {
    if !python("hostile_upstream_limits::a_silent_upstream_times_out_and_is_restarted") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path(), &hostile_upstream("mute", "timeout_ms = 1000", &["--silent"])).await;
    let row = down_and_restarted(&gw.url, "mute").await;
    assert!(row["detail"]["reason"].as_str().unwrap_or_default().contains("1000 ms"), "{row}");
    let ready = reqwest::get(gw.url.replace("/mcp", "/readyz")).await.unwrap();
    assert_eq!(ready.status(), 503, "a required upstream that never answers is not ready");
}

/// Finding 6: a listing that always has a next page is followed for
/// `max_list_pages` pages, then given up naming the upstream's limit.
#[actix_rt::test]
async fn an_endless_listing_is_given_up() {
    if !python("hostile_upstream_limits::an_endless_listing_is_given_up") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path(), &hostile_upstream("pages", "max_list_pages = 50", &["--endless-pages"])).await;
    let row = down_and_restarted(&gw.url, "pages").await;
    assert!(row["detail"]["reason"].as_str().unwrap_or_default().contains("50 pages (max_list_pages)"), "{row}");
}

/// Finding 13: a line of invalid UTF-8 is skipped like any other line that
/// is not JSON; the upstream is served.
#[actix_rt::test]
async fn lines_of_invalid_utf8_are_skipped() {
    if !python("hostile_upstream_limits::lines_of_invalid_utf8_are_skipped") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path(), &hostile_upstream("bytes", "", &["--tools", "echo", "--invalid-utf8"])).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["bytes__echo"], true).await;
    let answer = client.call_tool("bytes__echo", json!({"text": "ok"})).await.unwrap();
    assert!(serde_json::to_string(&answer.content).unwrap().contains("echo: ok"));
    assert_eq!(upstream_row(&gw.url, "bytes").await["restarts"], 0);
}

/// Seconds since midnight of a log record's `ts` (`2026-12-07T01:03:56.559670635Z`).
fn seconds_of_day(ts: &str) -> f64 {
    let time = ts.split('T').nth(1).unwrap_or_else(|| panic!("a timestamp: {ts}")).trim_end_matches('Z');
    let parts: Vec<f64> = time.split(':').map(|p| p.parse::<f64>().unwrap_or_else(|e| panic!("{ts}: {e}"))).collect();
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
}

/// Forged updates are "dropped, counted … and logged at most once a second"
/// (gateway guide, "What an upstream may claim"): an upstream that floods
/// updates of a local URI for more than three seconds is logged again
/// after each second at most, never more often, and each line says how many
/// were dropped so far. Its log lines are read up to the line of a reload
/// the test asks for once the flood is over.
#[actix_rt::test]
async fn forged_updates_are_logged_at_most_once_a_second() {
    if !python("hostile_upstream_limits::forged_updates_are_logged_at_most_once_a_second") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = hostile_upstream(
        "evil",
        "",
        &["--resources", "evil://mine", "--forge", "test://static-text", "--forge-count", "500"],
    );
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, toml).unwrap();
    let mut gw =
        HttpChild::spawn(&["--catalog", "everything", "--log-format", "json", "--config", &path.display().to_string()])
            .await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["evil__echo"], true).await;
    let flooding = std::time::Instant::now();
    let mut floods = 0u64;
    while flooding.elapsed() < Duration::from_millis(3500) {
        let forged = client.call_tool("evil__forge", json!({})).await.unwrap();
        assert!(serde_json::to_string(&forged.content).unwrap().contains("forged 500"), "{forged:?}");
        floods += 1;
    }
    gw.hangup();
    let mut logged: Vec<Value> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let line = tokio::time::timeout_at(deadline, gw.stderr.next_line())
            .await
            .expect("the reload logged within 10 s")
            .unwrap()
            .expect("stderr open");
        let Ok(record) = serde_json::from_str::<Value>(&line) else { continue };
        match record["msg"].as_str().unwrap_or_default() {
            "SIGHUP: reloaded" => break,
            m if m.starts_with("upstream announced a resource it does not serve") => logged.push(record),
            _ => {}
        }
    }
    let at: Vec<f64> = logged.iter().map(|r| seconds_of_day(r["ts"].as_str().unwrap_or_default())).collect();
    assert!(logged.len() >= 2, "{floods} floods over 3.5 s were logged {} times: {logged:?}", logged.len());
    for pair in at.windows(2) {
        let gap = (pair[1] - pair[0]).rem_euclid(86_400.0);
        assert!(gap >= 0.99, "two lines {gap:.3} s apart: {logged:#?}");
    }
    let dropped: Vec<u64> = logged.iter().map(|r| r["dropped_so_far"].as_u64().unwrap_or_default()).collect();
    assert!(dropped.windows(2).all(|d| d[1] > d[0] + 1), "each line counts those dropped unlogged since: {dropped:?}");
}

/// The gateway guide ("Caching hints"): a legacy upstream gives none, so
/// "the gateway's `[cache]` settings apply to its lists, and its reads are
/// stale at once". Through a gateway whose `[cache]` says 45 s for lists,
/// 30 s for reads and `private`: the legacy upstream's tools and resources
/// are listed with 45,000 ms and `private`, its resource is read with a
/// `ttlMs` of 0 (not the 30 s of the gateway's own reads, which
/// `server/discover` shows).
#[actix_rt::test]
async fn a_legacy_upstreams_lists_take_the_cache_settings_and_its_reads_are_stale_at_once() {
    if !python(
        "hostile_upstream_limits::a_legacy_upstreams_lists_take_the_cache_settings_and_its_reads_are_stale_at_once",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = "[cache]\nlist_ttl_ms = 45000\nread_ttl_ms = 30000\nscope = \"private\"\n";
    let old = hostile_upstream("old", "", &["--legacy", "--tools", "echo", "--resources", "legacy://doc"]);
    let gw = gateway(dir.path(), &format!("{cache}{old}")).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["old__echo"], true).await;
    let hints = |r: &Reply| {
        let result = &r.response()["result"];
        let text = |key: &str| result[key].as_str().map(str::to_owned);
        (text("resultType"), result["ttlMs"].as_u64(), text("cacheScope"))
    };
    for (method, key, item) in [("tools/list", "tools", "old__echo"), ("resources/list", "resources", "legacy://doc")] {
        let field = if key == "tools" { "name" } else { "uri" };
        let what = format!("{method} lists {item}");
        let listed = wait_for(&what, Duration::from_secs(20), Duration::from_millis(100), async || {
            let listed = post(&gw.url, &request(json!(1), method, json!({}))).await;
            let items = listed.response()["result"][key].as_array().cloned().unwrap_or_default();
            match items.iter().any(|i| i[field] == item) {
                true => Ok(listed),
                false => Err(listed.raw),
            }
        })
        .await;
        let want = (Some("complete".to_owned()), Some(45_000), Some("private".to_owned()));
        assert_eq!(hints(&listed), want, "{method} takes the [cache] settings: {}", listed.raw);
    }
    let read = post(&gw.url, &request(json!(2), "resources/read", json!({"uri": "legacy://doc"}))).await;
    assert_eq!(read.response()["result"]["contents"][0]["text"], "legacy://doc", "{}", read.raw);
    assert_eq!(hints(&read).0.as_deref(), Some("complete"), "{}", read.raw);
    // Stale at once: a ttlMs of 0, or none at all.
    let ttl = read.response()["result"].get("ttlMs").cloned();
    assert!(ttl.is_none() || ttl == Some(json!(0)), "a legacy upstream's read is stale at once: {}", read.raw);
    let discover = post(&gw.url, &request(json!(3), "server/discover", json!({}))).await;
    assert_eq!(hints(&discover).1, Some(30_000), "the gateway's own reads keep [cache]: {}", discover.raw);
}
