//! What the gateway lets in from servers it does not trust. Each test names
//! the finding of the hostile review it covers and fails on the code before
//! the fix. The upstreams are `tests/hostile/upstream.py` (a server that
//! misbehaves on request, run by `python3`) and the binary's own
//! `stdio --catalog everything`; the gateway is the binary, over loopback.

mod common;

use std::path::Path;
use std::time::Duration;

use actix_mcp::client::{Client, ClientError, SubscriptionFilter};
use actix_mcp::protocol::ProtocolVersion;
use common::*;
use futures::StreamExt;
use serde_json::json;

/// Whether python3 runs here (else the test prints SKIP and passes).
fn python(test: &str) -> bool {
    external(test, &["python3"]).is_some()
}

/// Writes `toml` to `dir/gateway.toml`; its path.
fn config(dir: &Path, toml: &str) -> String {
    let path = dir.join("gateway.toml");
    std::fs::write(&path, toml).unwrap();
    path.display().to_string()
}

/// A JSON-RPC error's message.
fn message(e: &ClientError) -> String {
    match e {
        ClientError::Protocol(e) => e.message.clone(),
        other => panic!("a JSON-RPC error, not {other:?}"),
    }
}

/// The first text of a tool result.
fn text(r: &actix_mcp::protocol::model::tools::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap()[0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Finding 1: `allow_tools` and `deny_tools` decide calls, not only lists:
/// a name they leave out is refused exactly as an unknown tool is, in both
/// eras, and never reaches the upstream.
#[actix_rt::test]
async fn filtered_out_tools_are_refused_on_call_and_never_forwarded() {
    if !python("hostile_upstreams::filtered_out_tools_are_refused_on_call_and_never_forwarded") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.log").display().to_string();
    let toml = hostile_upstream(
        "ro",
        r#"allow_tools = ["git_status", "git_log"]"#,
        &["--tools", "git_status,git_log,git_branch", "--log-calls", &calls],
    ) + &hostile_upstream(
        "git",
        r#"deny_tools = ["git_reset*"]"#,
        &["--tools", "git_status,git_reset", "--log-calls", &calls],
    );
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_tools(&stateless, &["ro__git_status", "git__git_status"], true).await;
    for client in [&stateless, &legacy] {
        let names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert!(!names.iter().any(|n| n == "ro__git_branch" || n == "git__git_reset"), "{names:?}");
        // What a name nothing serves gets.
        let unknown = client.call_tool("nobody__git_branch", json!({})).await.unwrap_err();
        for name in ["ro__git_branch", "git__git_reset"] {
            let refused = client.call_tool(name, json!({})).await.unwrap_err();
            assert_eq!(refused.code(), unknown.code(), "{name}: {refused}");
            assert_eq!(message(&refused), message(&unknown).replace("nobody__git_branch", name));
        }
        let served = client.call_tool("ro__git_status", json!({"text": "hi"})).await.unwrap();
        assert_eq!(text(&served), "git_status: hi");
    }
    let called = std::fs::read_to_string(&calls).unwrap_or_default();
    assert!(!called.contains("git_branch") && !called.contains("git_reset"), "forwarded: {called}");
    assert!(called.contains("git_status"), "{called}");
}

/// Finding 1, with authorization on: an upstream's `scopes` guard the tools
/// it answers without listing them as they guard its listed ones, and its
/// filters hold for a caller who holds them.
#[actix_rt::test]
async fn an_upstreams_scopes_and_filters_hold_for_its_unlisted_tools() {
    use sha2::Digest;
    if !python("hostile_upstreams::an_upstreams_scopes_and_filters_hold_for_its_unlisted_tools") {
        return;
    }
    let hex = |key: &str| sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.log").display().to_string();
    let toml = format!(
        "[auth]\nmode = \"api_key\"\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"reader\"\nscopes = [\"mcp\"]\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"gitter\"\nscopes = [\"mcp\", \"git\"]\n{}",
        hex("reader-key"),
        hex("gitter-key"),
        hostile_upstream(
            "git",
            "scopes = [\"git\"]\ndeny_tools = [\"git_reset\"]",
            &["--tools", "git_status,git_reset", "--hidden", "git_gc", "--log-calls", &calls],
        )
    );
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let as_key = |key: &str| answering().bearer(key);
    let reader = Client::connect(&gw.url, as_key("reader-key")).await.unwrap();
    let gitter = Client::connect(&gw.url, as_key("gitter-key")).await.unwrap();
    until_tools(&gitter, &["git__git_status"], true).await;
    for name in ["git__git_status", "git__git_gc"] {
        match reader.call_tool(name, json!({})).await {
            Err(ClientError::Auth { status: 403, .. }) => {}
            other => panic!("{name}: a 403 for a caller without the scope, not {other:?}"),
        }
    }
    assert_eq!(text(&gitter.call_tool("git__git_gc", json!({"text": "x"})).await.unwrap()), "git_gc: x");
    let refused = gitter.call_tool("git__git_reset", json!({})).await.unwrap_err();
    assert_eq!(refused.code(), Some(-32602), "{refused}");
    assert!(message(&refused).ends_with("Unknown tool: git__git_reset"), "{refused}");
    let called = std::fs::read_to_string(&calls).unwrap_or_default();
    assert_eq!(called.lines().collect::<Vec<_>>(), ["git_gc"], "only the permitted call reached the upstream");
}

/// Finding 3: names cannot be hijacked. The local catalog keeps its names
/// (an upstream without a prefix listing `echo` is left out for it), and an
/// upstream keeps its namespace (`good__echo` listed by another upstream is
/// left out), whichever starts first; both are logged.
#[actix_rt::test]
async fn an_upstream_cannot_take_a_local_name_or_another_upstreams() {
    if !python("hostile_upstreams::an_upstream_cannot_take_a_local_name_or_another_upstreams") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The hijacker comes up last (its first start fails), after the names it
    // lists are served.
    let starts = format!("{}:1", dir.path().join("starts").display());
    let toml = "[gateway]\nrestart_initial_ms = 200\n".to_owned()
        + &hostile_upstream(
            "evil",
            "prefix = \"\"",
            &["--tools", "echo,good__echo,evil_only", "--say", "HIJACKED ", "--crash-until", &starts],
        )
        + &hostile_upstream("good", "", &["--tools", "echo", "--say", "good "]);
    let mut gw = HttpChild::spawn(&["--catalog", "everything", "--config", &config(dir.path(), &toml)]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["evil_only", "good__echo"], true).await;
    let local: String = client.call("echo", json!({"text": "mine"})).await.unwrap();
    assert_eq!(local, "mine", "the local echo answers");
    let good = client.call_tool("good__echo", json!({"text": "x"})).await.unwrap();
    assert_eq!(text(&good), "good echo: x");
    let names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    for name in ["echo", "good__echo"] {
        assert_eq!(names.iter().filter(|n| *n == name).count(), 1, "{name} once in {names:?}");
    }
    gw.stderr_until_all(&["local catalog serves that name, name: echo,", "another upstream, name: good__echo,"]).await;
}

/// Finding 3: prefixes that could give two upstreams one name — the same
/// prefix, or one that starts with another's prefix and separator — are
/// refused at start, naming both.
#[actix_rt::test]
async fn ambiguous_prefixes_are_refused_at_start() {
    // What the binary says on stderr, having exited at once.
    let refused = |args: Vec<String>| async move {
        let mut serve = tokio::process::Command::new(binary());
        serve.args(["serve", "--bind", "127.0.0.1:0"]).args(&args).kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(20), serve.output())
            .await
            .unwrap_or_else(|_| panic!("{args:?}: refused at start, not served"))
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (a, b) in [("hx", "hx__good"), ("hx_", "hx")] {
        let flags = [a, b].map(|n| ["--upstream".to_owned(), format!("{n}=sleep 1")]).concat();
        let err = refused(flags).await;
        assert!(err.contains(&format!("{a:?}")) && err.contains(&format!("{b:?}")), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = "[[upstreams]]\nname = \"a\"\nprefix = \"x\"\ncommand = \"sleep\"\n\
                [[upstreams]]\nname = \"b\"\nprefix = \"x\"\ncommand = \"sleep\"\n";
    let err = refused(vec!["--config".into(), config(dir.path(), toml)]).await;
    assert!(err.contains("\"a\"") && err.contains("\"b\""), "{err}");
}

/// Finding 7: an upstream announces `resources/updated` only for URIs it
/// serves. A flood of updates it forges for the local catalog's and another
/// upstream's URIs reaches no listener (nor closes one as fallen behind),
/// and is counted; its own URI's update still arrives.
#[actix_rt::test]
async fn forged_resource_updates_are_dropped_and_counted() {
    if !python("hostile_upstreams::forged_resource_updates_are_dropped_and_counted") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = everything_upstream("good", "uri_prefix = \"good+\"")
        + &hostile_upstream(
            "evil",
            "",
            &[
                "--resources",
                "evil://mine",
                "--forge",
                "test://static-text,good+test://static-text",
                "--forge-count",
                "1000",
            ],
        );
    let gw = HttpChild::spawn(&["--catalog", "everything", "--config", &config(dir.path(), &toml)]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["evil__echo", "good__echo"], true).await;
    let uris = ["test://static-text", "good+test://static-text", "evil://mine"];
    let filter = SubscriptionFilter { resource_subscriptions: uris.map(str::to_owned).to_vec(), ..Default::default() };
    let mut updates = client.listen(filter).await.unwrap();
    // Until the gateway's own subscription upstream (for the URI evil
    // serves) is open, a flood brings nothing; then only evil's own URI, flood
    // after flood (the stream was not closed as fallen behind).
    let mut heard = Vec::new();
    for _ in 0..10 {
        heard = flood(&client, &mut updates).await;
        if !heard.is_empty() {
            break;
        }
    }
    for _ in 0..2 {
        assert!(!heard.is_empty() && heard.iter().all(|u| u == "evil://mine"), "{heard:?}");
        heard = flood(&client, &mut updates).await;
    }
    let metrics = reqwest::get(gw.url.replace("/mcp", "/metrics")).await.unwrap().text().await.unwrap();
    let counted = metrics
        .lines()
        .find(|l| l.starts_with("mcp_gateway_forged_notifications_total") && l.contains("upstream=\"evil\""))
        .unwrap_or_else(|| panic!("forged updates counted: {metrics}"));
    let n: f64 = counted.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(n >= 2000.0, "{counted}");
}

/// Has upstream `evil` forge its flood; what `updates` brings within a second.
async fn flood(client: &Client, updates: &mut actix_mcp::client::Listen) -> Vec<serde_json::Value> {
    let r = client.call_tool("evil__forge", json!({})).await.unwrap();
    assert_eq!(text(&r), "forged 2000");
    let mut heard = Vec::new();
    while let Ok(n) = tokio::time::timeout(Duration::from_secs(1), updates.next()).await {
        heard.push(n.expect("the listen stream stays open").params["uri"].clone());
    }
    heard
}

/// Finding 9: a URI conflict found after start-up — an upstream that comes
/// up only after two failed starts claims a URI another serves — is logged
/// and left out; the gateway goes on serving.
#[actix_rt::test]
async fn a_late_uri_conflict_is_logged_and_left_out() {
    if !python("hostile_upstreams::a_late_uri_conflict_is_logged_and_left_out") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let starts = format!("{}:2", dir.path().join("starts").display());
    let toml = "[gateway]\nrestart_initial_ms = 200\n[status]\nenabled = true\n".to_owned()
        + &everything_upstream("one", "")
        + &hostile_upstream(
            "late",
            "",
            &["--tools", "late_tool", "--resources", "test://static-text", "--say", "LATE ", "--crash-until", &starts],
        );
    let mut gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["one__echo", "late__late_tool"], true).await;
    gw.stderr_until("test://static-text").await;
    assert!(gw.child.try_wait().unwrap().is_none(), "the gateway runs on");
    assert_eq!(upstream_row(&gw.url, "late").await["state"], "up");
    let read = client.read_resource("test://static-text").await.unwrap();
    assert!(!serde_json::to_string(&read).unwrap().contains("LATE"), "one still serves it: {read:?}");
}

/// Finding 12: a tool whose `inputSchema` is not a JSON Schema object
/// (`null`, `{"type": "string"}`) is left out, logged; the others are served.
#[actix_rt::test]
async fn tools_with_an_invalid_input_schema_are_left_out() {
    if !python("hostile_upstreams::tools_with_an_invalid_input_schema_are_left_out") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = hostile_upstream("up", "", &["--tools", "echo", "--bad-schemas"]);
    let mut gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["up__echo"], true).await;
    let names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["up__echo"]);
    gw.stderr_until_all(&["up__null_schema", "up__string_schema"]).await;
}

/// Finding 16: while an upstream is down a call of one of its names says
/// so, and when it was last up; an unknown name an upstream refuses is
/// named as the caller sent it.
#[actix_rt::test]
async fn a_down_upstream_and_an_unknown_name_are_told_as_such() {
    if !python("hostile_upstreams::a_down_upstream_and_an_unknown_name_are_told_as_such") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("py.pid");
    let toml = "[gateway]\nrestart_initial_ms = 60000\nrestart_max_ms = 60000\n".to_owned()
        + &hostile_upstream("py", "", &["--tools", "echo", "--pidfile", &pid.display().to_string()])
        + &hostile_upstream("git", "", &["--tools", "git_status"]);
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["py__echo", "git__git_status"], true).await;
    let unknown = client.call_tool("git__nope", json!({})).await.unwrap_err();
    assert_eq!(unknown.code(), Some(-32602), "{unknown}");
    assert!(message(&unknown).contains("Unknown tool: git__nope"), "named as sent: {unknown}");
    let pid = std::fs::read_to_string(&pid).unwrap();
    assert!(std::process::Command::new("kill").args(["-9", pid.trim()]).status().unwrap().success());
    until_tools(&client, &["py__echo"], false).await;
    let down = client.call_tool("py__echo", json!({})).await.unwrap_err();
    let said = message(&down);
    assert_eq!(down.code(), Some(-32602), "{said}");
    assert!(said.contains("Unknown tool: py__echo ("), "{said}");
    assert!(said.contains("upstream py is down") && said.contains("last up"), "{said}");
}
