//! Reloading the configuration on SIGHUP, against the binary: the policy,
//! quotas and upstreams change in place (a call in flight to a changed
//! upstream finishes, lists announce their change), a file that does not
//! load is refused and the running configuration kept, and a hundred
//! reloads under load fail no call. And a server from the builder, over
//! loopback: what it set in code — its upstreams, its name — outlives a
//! reloaded configuration that does not mention it.

use crate::common;

use std::path::Path;
use std::time::Duration;

use actix_mcp::client::{Client, SubscriptionFilter};
use actix_mcp::config::UpstreamConfig;
use actix_mcp::gateway::FleetChange;
use actix_mcp::prelude::*;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};

/// `/status.json`'s `config`: the generation and the last reload's error.
async fn generation(url: &str) -> Value {
    let status: Value = reqwest::get(url.replace("/mcp", "/status.json")).await.unwrap().json().await.unwrap();
    status["config"].clone()
}

/// Waits up to 20 s for the configuration's `config` to satisfy `done`.
async fn until_config(url: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..200 {
        let c = generation(url).await;
        if done(&c) {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the configuration did not get there within 20 s: {}", generation(url).await)
}

async fn names(client: &Client) -> Vec<String> {
    let mut names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    names
}

fn text(r: &CallToolResult) -> String {
    serde_json::to_value(r).unwrap()["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

const BASE: &str = "[catalog]\nname = \"everything\"\n[status]\nenabled = true\n";

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[actix_rt::test]
async fn a_reload_applies_policy_quotas_and_upstreams_and_refuses_what_does_not_load() {
    let dir = scratch("reload-test-apply");
    let (config, policy) = (dir.join("config.toml"), dir.join("policy.cedar"));
    let v1 = format!("{BASE}{}", everything_upstream("up", ""));
    write(&config, &v1);
    let mut server = HttpChild::spawn(&["--config", config.to_str().unwrap()]).await;
    let url = server.url.clone();
    let client = Client::connect(&url, answering()).await.unwrap();
    until_tools(&client, &["up__echo"], true).await;
    assert_eq!(until_config(&url, |c| c["generation"] == 1).await["last_reload_error"], Value::Null);
    let filter = SubscriptionFilter { tools_list_changed: true, ..Default::default() };
    let mut changes = client.listen(filter).await.unwrap();

    // A call in flight to "up", which the reload changes (restarts).
    let slow = {
        let client = Client::connect(&url, answering()).await.unwrap();
        tokio::spawn(async move { client.call_tool("up__sleep", json!({"ms": 1500})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let permit = "permit(principal, action == Action::\"tools/call\", resource)\n  \
                  when { resource == Tool::\"echo\" || resource == Tool::\"up__sleep\" || resource == Tool::\"two__echo\" };\n";
    write(&policy, permit);
    let v2 = format!(
        "quotas_fail = \"closed\"\n{BASE}[policy]\nfile = {policy:?}\n\
         [[quotas]]\nname = \"one-echo\"\nlimit = 1\nper_secs = 600\ntools = [\"echo\"]\n{}{}",
        everything_upstream("up", "timeout_ms = 30000"),
        everything_upstream("two", ""),
    );
    write(&config, &v2);
    server.hangup();
    until_config(&url, |c| c["generation"] == 2).await;
    let finished = slow.await.unwrap().expect("the call in flight finishes on the upstream it started with");
    assert!(!finished.is_error.unwrap_or(false), "{finished:?}");
    // The policy changed what the tool list shows: announced, and shown.
    let n = tokio::time::timeout(Duration::from_secs(10), changes.next()).await.expect("list_changed").unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    until_tools(&client, &["two__echo"], true).await;
    assert_eq!(names(&client).await, ["echo", "two__echo", "up__sleep"]);
    // The quota applies.
    assert_eq!(text(&client.call_tool("echo", json!({"text": "a"})).await.unwrap()), "a");
    let over = post(&url, &request(json!(9), "tools/call", json!({"name": "echo", "arguments": {"text": "b"}}))).await;
    assert_eq!(over.status, 429, "{}", over.raw);

    // A file that does not load is refused; the running configuration stays.
    for (broken, says) in
        [("[catalog\nname = 1\n".to_owned(), "config.toml"), (v2.replace("one-echo", "one echo"), "quotas")]
    {
        write(&config, &broken);
        server.hangup();
        let c = until_config(&url, |c| c["last_reload_error"].as_str().is_some_and(|e| e.contains(says))).await;
        assert_eq!(c["generation"], 2, "{c}");
        let line = server.stderr_until("reload refused").await;
        assert!(line.contains("ERRO") && line.contains(says), "{line}");
    }
    write(&config, &v2);
    write(&policy, "permit(principal, action, resource) when { resource.no_such_attribute };\n");
    server.hangup();
    let c = until_config(&url, |c| c["last_reload_error"].as_str().is_some_and(|e| e.contains("policy.file"))).await;
    assert_eq!(c["generation"], 2, "{c}");
    assert_eq!(names(&client).await, ["echo", "two__echo", "up__sleep"], "the running policy is kept");
    let over = post(&url, &request(json!(10), "tools/call", json!({"name": "echo", "arguments": {"text": "c"}}))).await;
    assert_eq!(over.status, 429, "the running quotas are kept (and counting): {}", over.raw);

    // Back to the first file: no policy, no quota, no "two".
    write(&config, &v1);
    server.hangup();
    until_config(&url, |c| c["generation"] == 3).await;
    until_tools(&client, &["two__echo"], false).await;
    for i in 0..3 {
        assert_eq!(text(&client.call_tool("echo", json!({"text": i.to_string()})).await.unwrap()), i.to_string());
    }
    // "up" is restarted with its first configuration: its tools come back.
    until_tools(&client, &["up__echo"], true).await;
    drop(changes);
    client.close().await;
    server.terminate().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[actix_rt::test]
async fn a_hundred_reloads_under_load_fail_no_call() {
    let dir = scratch("reload-test-load");
    let config = dir.join("config.toml");
    let stable = everything_upstream("up", "");
    let quiet = format!("{BASE}{stable}");
    let busy = format!(
        "{BASE}[[quotas]]\nname = \"roomy\"\nlimit = 1000000\nper_secs = 3600\n{stable}{}",
        everything_upstream("extra", "")
    );
    write(&config, &quiet);
    let server = HttpChild::spawn(&["--config", config.to_str().unwrap()]).await;
    let url = server.url.clone();
    let client = Client::connect(&url, answering()).await.unwrap();
    until_tools(&client, &["up__echo"], true).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Four callers, each calling a local tool and a stable upstream's in turn.
    let callers: Vec<_> = (0..4)
        .map(|c| {
            let (url, stop) = (url.clone(), stop.clone());
            tokio::spawn(async move {
                let client = Client::connect(&url, answering()).await.unwrap();
                let (mut ok, mut failed) = (0u32, Vec::new());
                let mut i = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let tool = if i.is_multiple_of(2) { "echo" } else { "up__echo" };
                    match client.call_tool(tool, json!({"text": format!("{c}-{i}")})).await {
                        Ok(r) if text(&r) == format!("{c}-{i}") => ok += 1,
                        other => failed.push(format!("{tool}: {other:?}")),
                    }
                    i += 1;
                }
                client.close().await;
                (ok, failed)
            })
        })
        .collect();
    for n in 0..100u64 {
        write(&config, if n.is_multiple_of(2) { &busy } else { &quiet });
        server.hangup();
        until_config(&url, |c| c["generation"] == n + 2).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut ok, mut failed) = (0, Vec::new());
    for caller in callers {
        let (o, f) = caller.await.unwrap();
        ok += o;
        failed.extend(f);
    }
    assert!(
        failed.is_empty(),
        "{} of {} calls failed: {:?}",
        failed.len(),
        ok as usize + failed.len(),
        &failed[..failed.len().min(5)]
    );
    assert!(ok > 100, "the load ran through the reloads: {ok} calls");
    println!("{ok} calls through 100 reloads, none failed");
    client.close().await;
    server.terminate().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// An upstream of the everything catalog at `url`, named `name`, its
/// resources under `name+` (two of them serve the same URIs).
fn everything_at(name: &str, url: &str) -> UpstreamConfig {
    let mut up = UpstreamConfig::parse_flag(&format!("{name}={url}")).unwrap();
    up.uri_prefix = format!("{name}+");
    up
}

/// An upstream given to the builder in code is part of the program: a
/// reload whose configuration lists no upstream (a SIGHUP meant for the
/// policy) leaves it running; the configuration's own come and go next to
/// it; a configuration naming it too is refused.
#[actix_rt::test]
async fn a_reload_keeps_the_upstreams_given_in_code() {
    let upstream = TestServer::everything();
    let server = McpServer::builder(mcp_protocol::model::discover::Implementation::new("weather", "1.0.0"))
        .config(test_config())
        .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
        .upstream(everything_at("time", &upstream.url))
        .build()
        .unwrap();
    let served = TestServer::serve(server.clone());
    let client = Client::connect(&served.url, answering()).await.unwrap();
    until_tools(&client, &["time__echo"], true).await;

    let r = server.reload(Config::default()).unwrap();
    assert_eq!(r.upstreams, FleetChange::default(), "nothing started, stopped or restarted");
    assert!(names(&client).await.contains(&"time__echo".to_owned()), "{:?}", names(&client).await);
    let echoed = client.call_tool("time__echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(text(&echoed), "still here");

    let mut more = Config::default();
    more.upstreams.push(everything_at("extra", &upstream.url));
    let r = server.reload(more).unwrap();
    assert_eq!(r.upstreams.added, ["extra"]);
    assert!(r.upstreams.removed.is_empty(), "{:?}", r.upstreams);
    until_tools(&client, &["extra__echo", "time__echo"], true).await;
    let r = server.reload(Config::default()).unwrap();
    assert_eq!(r.upstreams.removed, ["extra"], "the configuration's own leaves with it");
    until_tools(&client, &["extra__echo"], false).await;
    assert!(names(&client).await.contains(&"time__echo".to_owned()), "the code's stays");

    let mut clash = Config::default();
    clash.upstreams.push(everything_at("time", &upstream.url));
    let refused = server.reload(clash).unwrap_err();
    assert!(refused.contains("\"time\" is given in code"), "{refused}");
    assert!(names(&client).await.contains(&"time__echo".to_owned()), "a refused reload changes nothing");
    client.close().await;
    served.stop().await;
    upstream.stop().await;
}

/// The builder's `serverInfo` and instructions are what a reload compares
/// with: a reloaded configuration that does not name the server changes
/// nothing that needs a restart (no WARN at every SIGHUP); one that does is
/// told apart.
#[actix_rt::test]
async fn a_reload_keeps_the_builders_server_name() {
    let server = McpServer::builder(mcp_protocol::model::discover::Implementation::new("weather", "2.0.0"))
        .config(test_config())
        .instructions("Ask about the weather.")
        .build()
        .unwrap();
    let served = TestServer::serve(server.clone());
    let r = server.reload(test_config()).unwrap();
    assert_eq!(r.need_restart, Vec::<String>::new(), "nothing changed");
    let discover = post(&served.url, &request(json!(1), "server/discover", json!({}))).await;
    let result = &discover.response()["result"];
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "weather", "{}", discover.raw);
    assert_eq!(result["instructions"], "Ask about the weather.");
    let mut named = test_config();
    named.server.name = "gateway".into();
    assert_eq!(server.reload(named).unwrap().need_restart, ["server"]);
    served.stop().await;
}
