//! Quotas (`[[quotas]]`) on real `actix-mcp serve` processes: past a limit
//! a call is refused with HTTP 429, `Retry-After` and -32000 naming the
//! quota, in both eras, counted on /metrics and in the audit log; across
//! two instances over a real `redis-server` the limit holds exactly; with
//! Redis gone, `quotas_fail` decides.

use crate::common;

use std::time::{Duration, Instant};

use common::redis::Redis;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};

fn call(id: u64, tool: &str) -> Value {
    request(json!(id), "tools/call", json!({"name": tool, "arguments": {"text": "q"}}))
}

/// A refusal's `Retry-After` header, and its `data`.
fn refusal(r: &Reply) -> (u64, Value) {
    assert_eq!(r.status, 429, "{}", r.raw);
    let header = r.headers.get("retry-after").expect("Retry-After").to_str().unwrap().parse::<u64>().unwrap();
    let error = &r.response()["error"];
    assert_eq!(error["code"], -32000, "{}", r.raw);
    (header, error["data"].clone())
}

/// The value of the series of `name` whose labels include all of `labels`.
async fn metric(url: &str, name: &str, labels: &[&str]) -> f64 {
    let text = reqwest::get(url.replace("/mcp", "/metrics")).await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) && labels.iter().all(|x| l.contains(x)))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} {labels:?} in\n{text}"))
}

/// A 2025-11-25 session opened at `url` (`initialize`, then
/// `notifications/initialized`): its id.
async fn legacy_session(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "quota-test", "version": "1"}}});
    let opened = legacy_post(url, None, &init).await;
    let session = opened.headers["mcp-session-id"].to_str().unwrap().to_owned();
    legacy_post(url, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    session
}

#[actix_rt::test]
async fn past_its_limit_a_call_is_refused_with_429_retry_after_and_the_quota_named_in_both_eras() {
    let dir = scratch("quota-test-one");
    let audit = dir.join("audit.jsonl");
    let toml = format!(
        "[catalog]\nname = \"everything\"\n[audit]\nfile = {:?}\nsync_ms = 0\n\
         [[quotas]]\nname = \"echoes\"\nlimit = 3\nper_secs = 600\ntools = [\"echo\"]\n\
         [[quotas]]\nname = \"all\"\nlimit = 1000\nper_secs = 600\nby = \"tool\"\n",
        audit.display()
    );
    let config = ConfigFile::new("quota-test-one", &toml);
    let server = HttpChild::spawn(&["--config", config.path()]).await;
    let url = server.url.clone();
    for id in 1..=3 {
        let r = post(&url, &call(id, "echo")).await;
        assert_eq!(r.status, 200, "call {id} is within the limit: {}", r.raw);
    }
    let over = post(&url, &call(4, "echo")).await;
    let (after, data) = refusal(&over);
    assert_eq!((data["reason"].as_str(), data["quota"].as_str()), (Some("quota"), Some("echoes")), "{data}");
    assert_eq!(data["retryAfterSecs"], after, "the header and the data agree");
    assert!((590..=600).contains(&after), "the window's rest, in whole seconds: {after}");
    // A tool the quota does not name is not limited by it.
    let other = request(json!(5), "tools/call", json!({"name": "test_simple_text", "arguments": {}}));
    assert_eq!(post(&url, &other).await.status, 200);
    // A legacy session's call of the same caller: the same refusal (not 200).
    let session = legacy_session(&url).await;
    let legacy = legacy_post(
        &url,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "q"}}}),
    )
    .await;
    let (after, data) = refusal(&legacy);
    assert_eq!((data["quota"].as_str(), data["retryAfterSecs"].as_u64()), (Some("echoes"), Some(after)), "{data}");
    // Counted per quota: the refused calls were counted by neither quota.
    assert_eq!(
        metric(&url, "mcp_server_quota_decisions_total", &[r#"quota="echoes""#, r#"decision="allow""#]).await,
        3.0
    );
    assert_eq!(
        metric(&url, "mcp_server_quota_decisions_total", &[r#"quota="echoes""#, r#"decision="quota""#]).await,
        2.0
    );
    assert_eq!(metric(&url, "mcp_server_quota_decisions_total", &[r#"quota="all""#, r#"decision="allow""#]).await, 4.0);
    // The audit log records the refusals as decided by a quota.
    server.terminate().await;
    let records: Vec<Value> =
        std::fs::read_to_string(&audit).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let decisions: Vec<&str> = records.iter().map(|r| r["decision"].as_str().unwrap()).collect();
    assert_eq!(decisions, ["allow", "allow", "allow", "quota", "allow", "quota"], "{records:?}");
    assert_eq!(records[3]["outcome"], "error");
}

/// Instance `name` counting on the Redis at `port`: at most 100 calls of
/// `echo` per hour, while Redis is unreachable `fail`.
async fn instance(name: &str, port: u16, fail: &str) -> (HttpChild, ConfigFile) {
    let toml = format!(
        "quotas_fail = \"{fail}\"\n[server]\nname = \"{name}\"\n[catalog]\nname = \"everything\"\n\
         [hub]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:{port}/\"\nredis_channel_prefix = \"quota-{pid}\"\n\
         [[quotas]]\nname = \"hundred\"\nlimit = 100\nper_secs = 3600\ntools = [\"echo\"]\n",
        pid = std::process::id()
    );
    let config = ConfigFile::new(&format!("quota-test-{name}-{port}"), &toml);
    let mut child = HttpChild::spawn(&["--config", config.path()]).await;
    child.stderr_until("redis subscription established").await;
    (child, config)
}

#[actix_rt::test]
async fn two_instances_over_redis_allow_exactly_the_limit_and_quotas_fail_decides_without_it() {
    let test = "quotas::two_instances_over_redis_allow_exactly_the_limit";
    let Some(_) = external(test, &["redis-server"]) else { return };
    let port = free_port();
    let redis = Redis::start(port).await;
    let (a, _ca) = instance("a", port, "open").await;
    let (b, _cb) = instance("b", port, "closed").await;
    let urls = [a.url.clone(), b.url.clone()];
    // 1,000 calls split between them in turn, 16 at a time.
    let statuses: Vec<u16> = futures::stream::iter(0..1000u64)
        .map(|i| {
            let url = urls[(i % 2) as usize].clone();
            async move { post(&url, &call(i, "echo")).await.status }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let allowed = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((allowed, refused), (100, 900), "exactly the limit across instances");
    redis.stop().await;
    // Redis gone: "open" lets calls through; "closed" refuses them at once.
    let started = Instant::now();
    assert_eq!(post(&a.url, &call(2000, "echo")).await.status, 200, "quotas_fail = open");
    let closed = post(&b.url, &call(2001, "echo")).await;
    let (after, data) = refusal(&closed);
    assert_eq!((after, data["quota"].as_str()), (1, Some("hundred")), "{data}");
    let message = closed.response()["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("cannot be counted"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5), "answered at once, not after a long wait");
    assert_eq!(metric(&b.url, "mcp_server_quota_decisions_total", &[r#"decision="fail_closed""#]).await, 1.0);
    assert_eq!(metric(&a.url, "mcp_server_quota_decisions_total", &[r#"decision="fail_open""#]).await, 1.0);
}

/// The text of a served call's answer (fails the test on anything else).
fn served_text(r: &Reply) -> String {
    assert_eq!(r.status, 200, "{}", r.raw);
    let text = r.response()["result"]["content"][0]["text"].as_str();
    text.unwrap_or_else(|| panic!("a served call: {}", r.raw)).to_owned()
}

#[actix_rt::test]
async fn a_call_over_its_quota_never_reaches_the_upstream_in_both_eras() {
    if external("quotas::a_call_over_its_quota_never_reaches_the_upstream_in_both_eras", &["python3"]).is_none() {
        return;
    }
    let dir = scratch("quota-test-upstream");
    let log = dir.join("calls.log");
    // `secret` is answered but not listed: reached by name through the gateway's route.
    let flags = ["--tools", "echo,other", "--hidden", "secret", "--log-calls", log.to_str().unwrap()];
    let toml = format!(
        "[[quotas]]\nname = \"two\"\nlimit = 2\nper_secs = 600\ntools = [\"h__echo\"]\n\
         [[quotas]]\nname = \"one\"\nlimit = 1\nper_secs = 600\ntools = [\"h__secret\"]\n{}",
        hostile_upstream("h", "", &flags)
    );
    let config = ConfigFile::new("quota-test-upstream", &toml);
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    let url = server.url.clone();
    wait_for("the upstream's tools are served", Duration::from_secs(20), Duration::from_millis(100), async || {
        let r = post(&url, &request(json!(0), "tools/list", json!({}))).await;
        if r.raw.contains("\"h__echo\"") {
            Ok(())
        } else {
            Err(r.raw)
        }
    })
    .await;
    assert_eq!(served_text(&post(&url, &call(1, "h__echo")).await), "echo: q");
    assert_eq!(served_text(&post(&url, &call(2, "h__echo")).await), "echo: q");
    let (_, data) = refusal(&post(&url, &call(3, "h__echo")).await);
    assert_eq!(data["quota"], "two", "{data}");
    assert_eq!(served_text(&post(&url, &call(4, "h__secret")).await), "secret: q");
    let (_, data) = refusal(&post(&url, &call(5, "h__secret")).await);
    assert_eq!(data["quota"], "one", "{data}");
    // A legacy session's call over the quota: refused as well.
    let session = legacy_session(&url).await;
    let legacy = legacy_post(
        &url,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "h__echo", "arguments": {"text": "q"}}}),
    )
    .await;
    let (_, data) = refusal(&legacy);
    assert_eq!(data["quota"], "two", "{data}");
    // The upstream answers in order and logs each call before answering it:
    // once this last call is answered, every call that reached it is logged.
    assert_eq!(served_text(&post(&url, &call(7, "h__other")).await), "other: q");
    let reached: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_owned).collect();
    assert_eq!(reached, ["echo", "echo", "secret", "other"], "no refused call reached the upstream");
}

#[actix_rt::test]
async fn policies_decide_first_a_call_a_policy_denies_is_not_counted() {
    let dir = scratch("quota-test-policy-first");
    let policy = dir.join("policy.cedar");
    std::fs::write(
        &policy,
        "permit(principal, action, resource);\nforbid(principal, action == Action::\"tools/call\", resource == Tool::\"greet\");\n",
    )
    .unwrap();
    let toml = format!(
        "[catalog]\nname = \"everything\"\n[policy]\nfile = {:?}\n\
         [[quotas]]\nname = \"three\"\nlimit = 3\nper_secs = 600\nby = \"caller\"\n",
        policy.display().to_string()
    );
    let config = ConfigFile::new("quota-test-policy-first", &toml);
    let server = HttpChild::spawn(&["--config", config.path()]).await;
    let url = server.url.clone();
    // As many denied calls as the quota allows calls.
    for id in 1..=3 {
        let greet = request(json!(id), "tools/call", json!({"name": "greet", "arguments": {"name": "x"}}));
        let denied = post(&url, &greet).await;
        assert_ne!(denied.status, 429, "a denied call is the policy's, not the quota's: {}", denied.raw);
        assert_eq!(denied.error_code(), Some(-32602), "denied by the policy: {}", denied.raw);
    }
    // The quota is still whole: 3 permitted calls are served, and then it holds.
    for id in 4..=6 {
        assert_eq!(served_text(&post(&url, &call(id, "echo")).await), "q", "permitted call {id}");
    }
    let (_, data) = refusal(&post(&url, &call(7, "echo")).await);
    assert_eq!(data["quota"], "three", "{data}");
    assert_eq!(
        metric(&url, "mcp_server_quota_decisions_total", &[r#"quota="three""#, r#"decision="allow""#]).await,
        3.0
    );
    assert_eq!(
        metric(&url, "mcp_server_quota_decisions_total", &[r#"quota="three""#, r#"decision="quota""#]).await,
        1.0
    );
    assert_eq!(metric(&url, "mcp_server_policy_decisions_total", &[r#"decision="deny""#]).await, 3.0);
}

/// A loopback port where something accepts TCP connections and never
/// answers: a Redis slower than any timeout.
fn silent_redis() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            match stream {
                Ok(s) => held.push(s),
                Err(_) => break,
            }
        }
    });
    port
}

/// An instance counting on the Redis at `port`, with `quotas_fail = fail`
/// and `quotas_timeout_ms = timeout_ms` (`None`: the default, 100).
async fn slow_redis_instance(port: u16, fail: &str, timeout_ms: Option<u64>) -> (HttpChild, ConfigFile) {
    let timeout_line = timeout_ms.map(|ms| format!("quotas_timeout_ms = {ms}\n")).unwrap_or_default();
    let toml = format!(
        "quotas_fail = \"{fail}\"\n{timeout_line}[catalog]\nname = \"everything\"\n\
         [hub]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:{port}/\"\nredis_channel_prefix = \"quota-slow-{pid}\"\n\
         [[quotas]]\nname = \"hundred\"\nlimit = 100\nper_secs = 3600\ntools = [\"echo\"]\n",
        pid = std::process::id()
    );
    let config = ConfigFile::new(&format!("quota-test-slow-{fail}"), &toml);
    (HttpChild::spawn(&["--config", config.path()]).await, config)
}

#[actix_rt::test]
async fn a_redis_slower_than_quotas_timeout_ms_is_decided_by_quotas_fail() {
    let port = silent_redis();
    // Below http.stream_after_ms (200), so that a refusal keeps its status.
    let (open_ms, closed_ms) = (100, 50);
    let (mut open, _open_config) = slow_redis_instance(port, "open", None).await;
    let (mut closed, _closed_config) = slow_redis_instance(port, "closed", Some(closed_ms)).await;
    // "open": served, uncounted.
    let started = Instant::now();
    assert_eq!(served_text(&post(&open.url, &call(1, "echo")).await), "q", "quotas_fail = open");
    assert!(started.elapsed() < Duration::from_secs(5), "decided, not left waiting on Redis: {:?}", started.elapsed());
    // "closed": refused as over the quota, Retry-After: 1, "cannot be counted now".
    let started = Instant::now();
    let refused = post(&closed.url, &call(2, "echo")).await;
    assert!(started.elapsed() < Duration::from_secs(5), "decided, not left waiting on Redis: {:?}", started.elapsed());
    let (after, data) = refusal(&refused);
    assert_eq!((after, data["quota"].as_str()), (1, Some("hundred")), "{data}");
    let message = refused.response()["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("cannot be counted now"), "{message}");
    assert_eq!(metric(&open.url, "mcp_server_quota_decisions_total", &[r#"decision="fail_open""#]).await, 1.0);
    assert_eq!(metric(&closed.url, "mcp_server_quota_decisions_total", &[r#"decision="fail_closed""#]).await, 1.0);
    assert_eq!(metric(&open.url, "mcp_server_quota_decisions_total", &[r#"decision="allow""#]).await, 0.0);
    // Each says why: no answer within its own quotas_timeout_ms.
    for (server, fail, ms) in [(&mut open, "open", open_ms), (&mut closed, "closed", closed_ms)] {
        let line = server.stderr_until("the quota counters cannot count calls").await;
        assert!(line.contains("WARN") && line.contains(&format!("quotas_fail: {fail}")), "{line}");
        assert!(line.contains(&format!("within {ms} ms")), "the timeout is quotas_timeout_ms ({ms}): {line}");
    }
}

/// The counters' decisions series.
const DECISIONS: &str = "mcp_server_quota_decisions_total";

/// A refusal's error message.
fn refusal_message(r: &Reply) -> String {
    r.response()["error"]["message"].as_str().unwrap_or_default().to_owned()
}

/// The server's stderr lines from here on until one contains `needle`
/// (that line last); fails after 10 s.
async fn lines_until(server: &mut HttpChild, needle: &str) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut lines = Vec::new();
    loop {
        let line = tokio::time::timeout_at(deadline, server.stderr.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line with {needle:?} within 10 s; read: {lines:?}"))
            .unwrap()
            .expect("stderr open");
        let found = line.contains(needle);
        lines.push(line);
        if found {
            return lines;
        }
    }
}

/// "A counter's window starts with the first call it counts and ends
/// `per_secs` later; then the count starts again" (gateway guide, "How many
/// calls: quotas"), for the counters in a real `redis-server` (the count
/// script). With `limit = 2` and `per_secs = 3`: the first call opens the
/// window; a second, 1.5 s later, is counted in it without moving it; then
/// calls are refused ("exceeded") until 3 s after the first call — no
/// sooner, and not 3 s after the second (nor do the refusals in between
/// move it). Then the count starts again: two calls are served and the
/// third is refused for a fresh window.
#[actix_rt::test]
async fn over_redis_a_window_starts_with_its_first_call_and_the_count_starts_again_after_per_secs() {
    let test = "quotas::over_redis_a_window_starts_with_its_first_call_and_the_count_starts_again_after_per_secs";
    let Some(_) = external(test, &["redis-server"]) else { return };
    let port = free_port();
    let _redis = Redis::start(port).await;
    let toml = format!(
        "quotas_fail = \"closed\"\n[catalog]\nname = \"everything\"\n\
         [hub]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:{port}/\"\nredis_channel_prefix = \"quota-window-{pid}\"\n\
         [[quotas]]\nname = \"two\"\nlimit = 2\nper_secs = 3\ntools = [\"echo\"]\n",
        pid = std::process::id()
    );
    let config = ConfigFile::new("quota-test-window", &toml);
    let mut server = HttpChild::spawn(&["--config", config.path()]).await;
    server.stderr_until("redis subscription established").await;
    let url = server.url.clone();
    let window = Duration::from_secs(3);
    // Refused by the count ("exceeded"), not for want of Redis: its Retry-After.
    let over = |r: &Reply| {
        let (after, data) = refusal(r);
        assert_eq!(data["quota"], "two", "{data}");
        let message = refusal_message(r);
        assert!(message.contains("exceeded"), "refused by the count: {message}");
        after
    };
    let before_first = Instant::now();
    assert_eq!(served_text(&post(&url, &call(1, "echo")).await), "q", "the first call opens the window");
    let first_answered = Instant::now();
    // Paced: the second call half-way through the window.
    tokio::time::sleep(window / 2).await;
    assert_eq!(served_text(&post(&url, &call(2, "echo")).await), "q", "the second call of the window");
    let after = over(&post(&url, &call(3, "echo")).await);
    assert!(after <= 2, "Retry-After counts to 3 s after the first call, not the second: {after}");
    let reopened = wait_for("the window to end", Duration::from_secs(10), Duration::from_millis(50), async || {
        let r = post(&url, &call(4, "echo")).await;
        if r.status == 200 {
            assert_eq!(served_text(&r), "q");
            return Ok(Instant::now());
        }
        Err(format!("refused, Retry-After {}", over(&r)))
    })
    .await;
    let since_before_first = reopened.duration_since(before_first);
    assert!(since_before_first >= window, "refused until the window ended: served again after {since_before_first:?}");
    // A window opened by the second call would end 4.5 s after the first.
    let since_first = reopened.duration_since(first_answered);
    assert!(
        since_first < window + Duration::from_millis(1200),
        "the window ends 3 s after its first call: served again {since_first:?} after it"
    );
    // The count starts again: the call served was the first of a new window.
    assert_eq!(served_text(&post(&url, &call(5, "echo")).await), "q", "the second call of the new window");
    let after = over(&post(&url, &call(6, "echo")).await);
    assert!((2..=3).contains(&after), "a fresh window's Retry-After: {after}");
    assert_eq!(metric(&url, DECISIONS, &[r#"quota="two""#, r#"decision="allow""#]).await, 4.0);
    assert_eq!(metric(&url, DECISIONS, &[r#"quota="two""#, r#"decision="fail_closed""#]).await, 0.0);
}

/// An instance whose in-memory counters hold one counter at most
/// (`quotas_max_keys = 1`), with `quotas_fail = fail` and one quota of 100
/// calls per 2 s for each tool.
async fn one_counter_instance(fail: &str) -> (HttpChild, ConfigFile) {
    let toml = format!(
        "quotas_fail = \"{fail}\"\nquotas_max_keys = 1\n[catalog]\nname = \"everything\"\n\
         [[quotas]]\nname = \"per-tool\"\nlimit = 100\nper_secs = 2\nby = \"tool\"\n"
    );
    let config = ConfigFile::new(&format!("quota-test-full-{fail}"), &toml);
    (HttpChild::spawn(&["--config", config.path()]).await, config)
}

/// A call of `test_simple_text` (a second tool: a second counter).
fn simple(id: u64) -> Value {
    request(json!(id), "tools/call", json!({"name": "test_simple_text", "arguments": {}}))
}

/// "While the counters cannot count a call — … or the memory counters full
/// — `quotas_fail` decides: `open` (the default) serves the call uncounted,
/// `closed` refuses it as over its quota (`Retry-After: 1`, message "cannot
/// be counted now"); the first failure and the recovery are logged"
/// (gateway guide, "How many calls: quotas"), end to end with the in-memory
/// counters held to one: `echo`'s counter fills them, so a call of a second
/// tool cannot be counted. `open` serves it, counted as `fail_open` and not
/// `allow`; `closed` refuses it (429, `Retry-After: 1`, "cannot be counted
/// now") though that tool is nowhere near its limit, until `echo`'s window
/// (2 s) ended and was swept: then it is served and counted. Each logs one
/// WARN naming the full counters and its `quotas_fail` for the outage,
/// however many calls it refused; `closed` one INFO after it once they
/// count again.
#[actix_rt::test]
async fn full_memory_counters_are_decided_by_quotas_fail_and_the_recovery_is_logged() {
    let (mut open, _open_config) = one_counter_instance("open").await;
    let (mut closed, _closed_config) = one_counter_instance("closed").await;
    // closed: echo takes the one counter; the next tool's call is refused.
    assert_eq!(served_text(&post(&closed.url, &call(1, "echo")).await), "q");
    let refused = post(&closed.url, &simple(2)).await;
    let (after, data) = refusal(&refused);
    assert_eq!((after, data["quota"].as_str()), (1, Some("per-tool")), "{data}");
    let message = refusal_message(&refused);
    assert!(message.contains("cannot be counted now"), "{message}");
    // open: the same call is served, uncounted.
    assert_eq!(served_text(&post(&open.url, &call(1, "echo")).await), "q");
    let served = post(&open.url, &simple(2)).await;
    assert_eq!(served.status, 200, "{}", served.raw);
    assert!(served.response()["result"]["content"].is_array(), "served: {}", served.raw);
    assert_eq!(metric(&open.url, DECISIONS, &[r#"quota="per-tool""#, r#"decision="fail_open""#]).await, 1.0);
    assert_eq!(metric(&open.url, DECISIONS, &[r#"quota="per-tool""#, r#"decision="allow""#]).await, 1.0);
    // closed: once echo's window ended and was swept, the call is counted.
    wait_for("the second tool's call is counted", Duration::from_secs(10), Duration::from_millis(100), async || {
        let r = post(&closed.url, &simple(3)).await;
        if r.status == 200 {
            return Ok(());
        }
        let (after, _) = refusal(&r);
        let message = refusal_message(&r);
        assert!(after == 1 && message.contains("cannot be counted now"), "{}", r.raw);
        Err(message)
    })
    .await;
    let refusals = metric(&closed.url, DECISIONS, &[r#"quota="per-tool""#, r#"decision="fail_closed""#]).await;
    assert!(refusals >= 1.0, "{refusals}");
    assert_eq!(metric(&closed.url, DECISIONS, &[r#"quota="per-tool""#, r#"decision="allow""#]).await, 2.0);
    // Logged: the outage once, however many calls it refused, then the recovery.
    let lines = lines_until(&mut closed, "the quota counters count again").await;
    let warns: Vec<&String> = lines.iter().filter(|l| l.contains("the quota counters cannot count calls")).collect();
    assert_eq!(warns.len(), 1, "one WARN for {refusals} refusals: {lines:?}");
    let open_warn = open.stderr_until("the quota counters cannot count calls").await;
    for (line, fail) in [(warns[0].clone(), "closed"), (open_warn, "open")] {
        assert!(line.contains(" WARN "), "{line}");
        assert!(line.contains("quotas_max_keys = 1") && line.contains(&format!("quotas_fail: {fail}")), "{line}");
    }
    assert!(lines.last().unwrap().contains(" INFO the quota counters count again"), "{lines:?}");
}

/// "the first failure and the recovery are logged" (gateway guide, "How
/// many calls: quotas"), over a real `redis-server` that stops and comes
/// back on its port: the calls made while it is gone are served uncounted
/// (`quotas_fail = "open"`, each counted as `fail_open`) with one WARN for
/// the outage however many they are; once it is back a call is counted
/// again, and one INFO after that WARN says so.
#[actix_rt::test]
async fn over_redis_the_first_failure_and_the_recovery_are_logged_once_each() {
    let test = "quotas::over_redis_the_first_failure_and_the_recovery_are_logged_once_each";
    let Some(_) = external(test, &["redis-server"]) else { return };
    // Below the ephemeral range: Redis comes back on this port.
    let port = free_fixed_port();
    let redis = Redis::start(port).await;
    let toml = format!(
        "quotas_fail = \"open\"\n[catalog]\nname = \"everything\"\n\
         [hub]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:{port}/\"\nredis_channel_prefix = \"quota-back-{pid}\"\n\
         [[quotas]]\nname = \"hundred\"\nlimit = 100\nper_secs = 3600\ntools = [\"echo\"]\n",
        pid = std::process::id()
    );
    let config = ConfigFile::new("quota-test-recovery", &toml);
    let mut server = HttpChild::spawn(&["--config", config.path()]).await;
    server.stderr_until("redis subscription established").await;
    let url = server.url.clone();
    let allow = [r#"quota="hundred""#, r#"decision="allow""#];
    assert_eq!(served_text(&post(&url, &call(1, "echo")).await), "q");
    assert_eq!(metric(&url, DECISIONS, &allow).await, 1.0, "counted in Redis");
    redis.stop().await;
    for id in 2..=4 {
        assert_eq!(served_text(&post(&url, &call(id, "echo")).await), "q", "quotas_fail = open");
    }
    assert_eq!(metric(&url, DECISIONS, &[r#"quota="hundred""#, r#"decision="fail_open""#]).await, 3.0);
    let _redis = Redis::start(port).await;
    wait_for("a call counted in Redis again", Duration::from_secs(20), Duration::from_millis(100), async || {
        assert_eq!(served_text(&post(&url, &call(5, "echo")).await), "q");
        let counted = metric(&url, DECISIONS, &allow).await;
        if counted >= 2.0 {
            Ok(())
        } else {
            Err(format!("{counted} calls counted"))
        }
    })
    .await;
    let lines = lines_until(&mut server, "the quota counters count again").await;
    let warns: Vec<&String> = lines.iter().filter(|l| l.contains("the quota counters cannot count calls")).collect();
    assert_eq!(warns.len(), 1, "one WARN for the outage: {lines:?}");
    assert!(warns[0].contains(" WARN ") && warns[0].contains("quotas_fail: open"), "{}", warns[0]);
    assert!(lines.last().unwrap().contains(" INFO the quota counters count again"), "{lines:?}");
}
