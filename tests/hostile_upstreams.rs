//! What the gateway lets in from servers it does not trust. Each test names
//! the finding of the hostile review it covers and fails on the code before
//! the fix, or quotes the sentence of the gateway guide it attacks. The
//! upstreams are `tests/hostile/upstream.py` (a server that misbehaves on
//! request, run by `python3`, over stdio or HTTP) and the binary's own
//! `stdio --catalog everything`; the gateway is the binary, over loopback.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::{Client, ClientError, Listen, RequestOptions, SubscriptionFilter};
use actix_mcp::protocol::model::logging::{LogMessage, LoggingLevel};
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

/// A 403 `insufficient_scope` naming the scope `ev`, as a caller without it
/// gets for `what`.
fn refused_for_scope_ev(what: &str, result: Result<(), ClientError>) {
    match result {
        Err(ClientError::Auth { status: 403, challenge, .. }) => {
            let challenge = challenge.unwrap_or_default();
            assert!(
                challenge.contains(r#"error="insufficient_scope""#) && challenge.contains(r#"scope="ev""#),
                "{what}: {challenge}"
            );
        }
        other => panic!("{what}: a 403 for a caller without the scope, not {other:?}"),
    }
}

/// An upstream's `scopes` are "needed for each of its items (auth on)"
/// (gateway guide, "Configured") — its prompts, resources and templates as
/// well as its tools. The upstream is the binary's own `stdio --catalog
/// everything` with `scopes = ["ev"]`: a caller without `ev` is not shown
/// its prompts, resources or templates, and its `prompts/get`,
/// `resources/read` (of a resource, and of a URI its template matches) and
/// resource subscription are refused with 403 `insufficient_scope` naming
/// `ev`, in both eras; a caller holding `ev` is shown and served each.
#[actix_rt::test]
async fn an_upstreams_scopes_hold_for_its_prompts_resources_and_templates() {
    use sha2::Digest;
    let hex = |key: &str| sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "[auth]\nmode = \"api_key\"\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"reader\"\nscopes = [\"mcp\"]\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"holder\"\nscopes = [\"mcp\", \"ev\"]\n{}",
        hex("reader-key"),
        hex("holder-key"),
        everything_upstream("ev", "scopes = [\"ev\"]"),
    );
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let as_key = |key: &str| answering().bearer(key);
    let holder = Client::connect(&gw.url, as_key("holder-key")).await.unwrap();
    until_tools(&holder, &["ev__echo"], true).await;
    until_resources(&holder, &["test://static-text"]).await;
    let legacy = |key: &str| as_key(key).pin(ProtocolVersion::V2025_11_25);
    let eras = [
        ("stateless", Client::connect(&gw.url, as_key("reader-key")).await.unwrap(), holder),
        (
            "legacy",
            Client::connect(&gw.url, legacy("reader-key")).await.unwrap(),
            Client::connect(&gw.url, legacy("holder-key")).await.unwrap(),
        ),
    ];
    let (prompt, resource, templated) = ("ev__test_simple_prompt", "test://static-text", "test://template/7/data");
    let subscribe = || SubscriptionFilter { resource_subscriptions: vec![resource.to_owned()], ..Default::default() };
    for (era, reader, holder) in &eras {
        // Listed to the holder only.
        let prompts = |l: Vec<actix_mcp::protocol::model::prompts::Prompt>| -> Vec<String> {
            l.into_iter().map(|p| p.name).collect()
        };
        assert!(prompts(holder.list_prompts().await.unwrap()).iter().any(|n| n == prompt), "{era}");
        let shown = prompts(reader.list_prompts().await.unwrap());
        assert!(!shown.iter().any(|n| n.starts_with("ev__")), "{era}: {shown:?}");
        let uris = |l: Vec<actix_mcp::protocol::model::resources::Resource>| -> Vec<String> {
            l.into_iter().map(|r| r.uri).collect()
        };
        assert!(uris(holder.list_resources().await.unwrap()).iter().any(|u| u == resource), "{era}");
        let shown = uris(reader.list_resources().await.unwrap());
        assert!(!shown.iter().any(|u| u.starts_with("test://")), "{era}: {shown:?}");
        let templates = |l: Vec<actix_mcp::protocol::model::resources::ResourceTemplate>| -> Vec<String> {
            l.into_iter().map(|t| t.uri_template).collect()
        };
        let held = templates(holder.list_resource_templates().await.unwrap());
        assert!(held.iter().any(|t| t == "test://template/{id}/data"), "{era}: {held:?}");
        let shown = templates(reader.list_resource_templates().await.unwrap());
        assert!(!shown.iter().any(|t| t.starts_with("test://")), "{era}: {shown:?}");
        // Used: refused to the reader, before the upstream is asked.
        let what = |item: &str| format!("{era}: {item}");
        refused_for_scope_ev(&what(prompt), reader.get_prompt(prompt, json!({})).await.map(drop));
        refused_for_scope_ev(&what(resource), reader.read_resource(resource).await.map(drop));
        refused_for_scope_ev(&what(templated), reader.read_resource(templated).await.map(drop));
        refused_for_scope_ev(&what("a subscription"), reader.listen(subscribe()).await.map(drop));
        refused_for_scope_ev(&what("ev__echo"), reader.call_tool("ev__echo", json!({"text": "x"})).await.map(drop));
        // Served to the holder.
        let got = holder.get_prompt(prompt, json!({})).await.unwrap();
        assert_eq!(prompt_text(&got), "This is a simple prompt for testing.", "{era}");
        let read = serde_json::to_string(&holder.read_resource(resource).await.unwrap()).unwrap();
        assert!(read.contains("This is the content of the static text resource."), "{era}: {read}");
        let read = serde_json::to_string(&holder.read_resource(templated).await.unwrap()).unwrap();
        assert!(read.contains("Data for ID: 7"), "{era}: {read}");
        drop(holder.listen(subscribe()).await.unwrap());
    }
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

/// The messages an upstream run with `--log-requests FILE` received so far,
/// in order (none before the first).
fn received(log: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// How many of the messages in `log` are `method` (with `params.uri` equal
/// to `uri`, when given).
fn count(log: &Path, method: &str, uri: Option<&str>) -> usize {
    received(log).iter().filter(|m| m["method"] == method && uri.is_none_or(|u| m["params"]["uri"] == u)).count()
}

/// The ids of the `subscriptions/listen` requests in `log` that subscribe to `uri`.
fn listens_of(log: &Path, uri: &str) -> Vec<serde_json::Value> {
    received(log)
        .into_iter()
        .filter(|m| m["method"] == "subscriptions/listen")
        .filter(|m| {
            let uris = m["params"]["notifications"]["resourceSubscriptions"].as_array().cloned().unwrap_or_default();
            uris.iter().any(|u| u == uri)
        })
        .map(|m| m["id"].clone())
        .collect()
}

/// Waits up to 20 s for the gateway to list every one of `uris`.
async fn until_resources(client: &Client, uris: &[&str]) {
    wait_for(&format!("the gateway serves {uris:?}"), Duration::from_secs(20), Duration::from_millis(100), async || {
        let listed: Vec<String> =
            client.list_resources().await.map_err(|e| e.to_string())?.into_iter().map(|r| r.uri).collect();
        if uris.iter().all(|u| listed.iter().any(|l| l == u)) {
            Ok(())
        } else {
            Err(format!("{listed:?}"))
        }
    })
    .await
}

/// The first text of a prompt's first message.
fn prompt_text(r: &actix_mcp::protocol::model::prompts::GetPromptResult) -> String {
    serde_json::to_value(r).unwrap()["messages"][0]["content"]["text"].as_str().unwrap_or_default().to_owned()
}

/// `bearer_env` / `bearer_file` (gateway guide, "Configured"): an HTTP
/// upstream is sent the token of its configuration, "never the caller's
/// token" — and an upstream configured with none is sent no token at all —
/// for its listing, calls, reads and prompts, whichever era the caller
/// speaks. The upstream is `tests/hostile/upstream.py` over HTTP, recording
/// each request's `Authorization` header.
#[actix_rt::test]
async fn an_http_upstream_gets_its_configured_token_never_the_callers() {
    use sha2::Digest;
    if !python("hostile_upstreams::an_http_upstream_gets_its_configured_token_never_the_callers") {
        return;
    }
    const VAR: &str = "ACTIX_MCP_TEST_HOSTILE_UPSTREAM_BEARER";
    let hex = |key: &str| sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let port_file = dir.path().join("port");
    let auth_log = dir.path().join("auth.log");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "file-token\n").unwrap();
    let (port_arg, auth_arg) = (port_file.display().to_string(), auth_log.display().to_string());
    let mut upstream = tokio::process::Command::new("python3");
    upstream
        .arg(hostile_script())
        .args(["--http-port-file", port_arg.as_str(), "--log-auth", auth_arg.as_str()])
        .args(["--tools", "echo", "--resources", "crm://doc", "--prompts", "brief", "--say", "crm "])
        .kill_on_drop(true);
    let _upstream = upstream.spawn().unwrap();
    let port: u16 =
        wait_for("the HTTP upstream listens", Duration::from_secs(10), Duration::from_millis(50), async || {
            let text = std::fs::read_to_string(&port_file).map_err(|e| e.to_string())?;
            text.trim().parse::<u16>().map_err(|e| format!("{text:?}: {e}"))
        })
        .await;
    let url = |path: &str| format!("http://127.0.0.1:{port}/{path}");
    let toml = format!(
        "[auth]\nmode = \"api_key\"\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"caller\"\nscopes = [\"mcp\"]\n\
         [[upstreams]]\nname = \"envy\"\nurl = {:?}\nbearer_env = {:?}\nuri_prefix = \"envy+\"\n\
         [[upstreams]]\nname = \"filed\"\nurl = {:?}\nbearer_file = {:?}\nuri_prefix = \"filed+\"\n\
         [[upstreams]]\nname = \"bare\"\nurl = {:?}\nuri_prefix = \"bare+\"\n",
        hex("caller-key"),
        url("envy"),
        VAR,
        url("filed"),
        token_file.display().to_string(),
        url("bare"),
    );
    // Only the gateway's configuration names this variable, set in its process.
    let gw = HttpChild::spawn_env(&[(VAR, "env-token")], &["--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering().bearer("caller-key")).await.unwrap();
    let legacy =
        Client::connect(&gw.url, answering().bearer("caller-key").pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_tools(&stateless, &["envy__echo", "filed__echo", "bare__echo"], true).await;
    for client in [&stateless, &legacy] {
        for up in ["envy", "filed", "bare"] {
            let called = client.call_tool(&format!("{up}__echo"), json!({"text": "hi"})).await.unwrap();
            assert_eq!(text(&called), "crm echo: hi");
            let read = client.read_resource(&format!("{up}+crm://doc")).await.unwrap();
            assert!(serde_json::to_string(&read).unwrap().contains("crm crm://doc"), "{up}: {read:?}");
            let prompt = client.get_prompt(&format!("{up}__brief"), json!({})).await.unwrap();
            assert_eq!(prompt_text(&prompt), "crm brief");
        }
    }
    let seen = std::fs::read_to_string(&auth_log).unwrap_or_default();
    assert!(!seen.contains("caller-key"), "the caller's token reached an upstream:\n{seen}");
    for (up, sent) in [("envy", "Bearer env-token"), ("filed", "Bearer file-token"), ("bare", "-")] {
        // "PATH METHOD AUTHORIZATION" per request.
        let lines: Vec<&str> = seen.lines().filter(|l| l.starts_with(&format!("/{up} "))).collect();
        for method in ["server/discover", "tools/list", "tools/call", "resources/read", "prompts/get"] {
            assert!(lines.iter().any(|l| l.split(' ').nth(1) == Some(method)), "{up} was sent {method}:\n{seen}");
        }
        for line in &lines {
            assert_eq!(line.splitn(3, ' ').nth(2), Some(sent), "{up}'s Authorization:\n{seen}");
        }
    }
}

/// "An upstream's item … that a local tool or prompt already has, is left
/// out and logged … the local catalog always wins" (gateway guide, "What an
/// upstream may claim"), for prompts: an upstream without a prefix listing
/// the local `test_simple_prompt`, and `good__hello` in another upstream's
/// namespace, serves neither; each name is listed once and answered by its
/// owner, in both eras.
#[actix_rt::test]
async fn an_upstream_prompt_cannot_take_a_local_name_or_another_upstreams() {
    if !python("hostile_upstreams::an_upstream_prompt_cannot_take_a_local_name_or_another_upstreams") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = hostile_upstream(
        "evil",
        "prefix = \"\"",
        &["--tools", "evil_tool", "--prompts", "test_simple_prompt,good__hello,evil_prompt", "--say", "HIJACKED "],
    ) + &hostile_upstream("good", "", &["--tools", "good_tool", "--prompts", "hello", "--say", "good "]);
    let mut gw = HttpChild::spawn(&["--catalog", "everything", "--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_tools(&stateless, &["evil_tool", "good__good_tool"], true).await;
    for client in [&stateless, &legacy] {
        let names: Vec<String> = client.list_prompts().await.unwrap().into_iter().map(|p| p.name).collect();
        for name in ["test_simple_prompt", "good__hello", "evil_prompt"] {
            assert_eq!(names.iter().filter(|n| *n == name).count(), 1, "{name} once in {names:?}");
        }
        let local = client.get_prompt("test_simple_prompt", json!({})).await.unwrap();
        assert_eq!(prompt_text(&local), "This is a simple prompt for testing.", "the local prompt answers");
        let good = client.get_prompt("good__hello", json!({})).await.unwrap();
        assert_eq!(prompt_text(&good), "good hello", "the upstream whose namespace it is answers");
        let evil = client.get_prompt("evil_prompt", json!({})).await.unwrap();
        assert_eq!(prompt_text(&evil), "HIJACKED evil_prompt", "its own prompt is served");
    }
    gw.stderr_until_all(&[
        "the local catalog serves that name, name: test_simple_prompt, kind: prompt",
        "name: good__hello, kind: prompt",
    ])
    .await;
}

/// Forged updates from a legacy upstream: "An upstream may announce
/// `resources/updated` only for URIs it serves; any other is dropped"
/// (gateway guide) — in the initialize era too, where the upstream sends
/// its updates without a subscription id. Its own URI's update still
/// arrives; the forged one never does.
#[actix_rt::test]
async fn a_legacy_upstreams_forged_updates_are_dropped() {
    if !python("hostile_upstreams::a_legacy_upstreams_forged_updates_are_dropped") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("evil.log");
    let toml = hostile_upstream(
        "evil",
        "",
        &[
            "--legacy",
            "--resources",
            "evil://mine",
            "--forge",
            "test://static-text",
            "--forge-count",
            "100",
            "--touch",
            "--log-requests",
            &log.display().to_string(),
        ],
    );
    let gw = HttpChild::spawn(&["--catalog", "everything", "--config", &config(dir.path(), &toml)]).await;
    let client = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&client, &["evil__echo"], true).await;
    let uris = ["evil://mine", "test://static-text"];
    let filter = SubscriptionFilter { resource_subscriptions: uris.map(str::to_owned).to_vec(), ..Default::default() };
    let mut updates = client.listen(filter).await.unwrap();
    wait_for(
        "the gateway subscribes to evil://mine upstream",
        Duration::from_secs(10),
        Duration::from_millis(50),
        async || match count(&log, "resources/subscribe", Some("evil://mine")) {
            0 => Err("no resources/subscribe yet".to_owned()),
            _ => Ok(()),
        },
    )
    .await;
    assert_eq!(text(&client.call_tool("evil__forge", json!({})).await.unwrap()), "forged 100");
    assert_eq!(text(&client.call_tool("evil__touch", json!({})).await.unwrap()), "touched");
    let first = tokio::time::timeout(Duration::from_secs(10), updates.next())
        .await
        .expect("evil://mine's update within 10 s")
        .expect("the listen stream stays open");
    assert_eq!(first.params["uri"], "evil://mine", "the forged update was dropped: {first:?}");
}

/// "an item whose definition is the same is left alone" (gateway guide):
/// an upstream that announces `list_changed` while its lists stay the same
/// (tools from a stateless upstream, prompts from a legacy one) makes the
/// gateway list it again, and its listeners, in both eras, hear nothing of
/// it — the first change they hear is the resource that appears afterwards.
#[actix_rt::test]
async fn an_unchanged_relisting_is_not_announced() {
    if !python("hostile_upstreams::an_unchanged_relisting_is_not_announced") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (new_log, old_log) = (dir.path().join("new.log"), dir.path().join("old.log"));
    let grown = dir.path().join("grown");
    let toml = hostile_upstream(
        "new",
        "",
        &[
            "--tools",
            "echo,relist,grow",
            "--resources",
            "new://a",
            "--relist",
            "tools",
            "--grow",
            &grown.display().to_string(),
            "--log-requests",
            &new_log.display().to_string(),
        ],
    ) + &hostile_upstream(
        "old",
        "uri_prefix = \"old+\"",
        &[
            "--legacy",
            "--tools",
            "echo,relist",
            "--prompts",
            "hello",
            "--resources",
            "old://a",
            "--relist",
            "prompts",
            "--log-requests",
            &old_log.display().to_string(),
        ],
    );
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_tools(&stateless, &["new__relist", "old__relist"], true).await;
    let names = async || {
        let tools: Vec<String> = stateless.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        let prompts: Vec<String> = stateless.list_prompts().await.unwrap().into_iter().map(|p| p.name).collect();
        (tools, prompts)
    };
    let before = names().await;
    assert!(before.1.iter().any(|p| p == "old__hello"), "{before:?}");
    let every = SubscriptionFilter {
        tools_list_changed: true,
        prompts_list_changed: true,
        resources_list_changed: true,
        ..Default::default()
    };
    let mut listeners = [stateless.listen(every.clone()).await.unwrap(), legacy.listen(every).await.unwrap()];
    // Each upstream lists once at start; each `relist` has it listed again.
    let listings = |log: &Path| count(log, "resources/templates/list", None);
    let (new_before, old_before) = (listings(new_log.as_path()), listings(old_log.as_path()));
    for tool in ["new__relist", "old__relist"] {
        assert_eq!(text(&stateless.call_tool(tool, json!({})).await.unwrap()), "relisted");
    }
    wait_for("both upstreams are listed again", Duration::from_secs(10), Duration::from_millis(50), async || {
        let (n, o) = (listings(new_log.as_path()), listings(old_log.as_path()));
        if n > new_before && o > old_before {
            Ok(())
        } else {
            Err(format!("new listed {n} times, old {o} times"))
        }
    })
    .await;
    // Then a real change, of another kind.
    assert_eq!(text(&stateless.call_tool("new__grow", json!({})).await.unwrap()), "grown");
    for (era, listener) in ["stateless", "legacy"].into_iter().zip(listeners.iter_mut()) {
        let heard = tokio::time::timeout(Duration::from_secs(10), listener.next())
            .await
            .unwrap_or_else(|_| panic!("{era} listener: the new resource announced within 10 s"))
            .expect("the listen stream stays open");
        assert_eq!(
            heard.method, "notifications/resources/list_changed",
            "{era} listener: an unchanged relisting was announced: {heard:?}"
        );
    }
    until_resources(&stateless, &["grown://new"]).await;
    assert_eq!(names().await, before, "the relisted items are the same");
}

/// Reads `updates` until an update of each of `uris` came (fails after 10 s).
async fn until_updated(updates: &mut Listen, uris: &[&str], who: &str) {
    let mut left: Vec<&str> = uris.to_vec();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !left.is_empty() {
        let n = tokio::time::timeout_at(deadline, updates.next())
            .await
            .unwrap_or_else(|_| panic!("{who}: no update of {left:?} within 10 s"))
            .unwrap_or_else(|| panic!("{who}: the listen stream ended"));
        if n.method == "notifications/resources/updated" {
            let uri = n.params["uri"].as_str().unwrap_or_default().to_owned();
            left.retain(|u| *u != uri);
        }
    }
}

/// "makes the gateway subscribe to it upstream — once per URI, however many
/// listeners want it, and only while one does" (gateway guide): three
/// listeners (two stateless listen streams, a legacy session's
/// `resources/subscribe`) of a legacy upstream's URI and a stateless
/// upstream's make one `resources/subscribe` and one subscribing
/// `subscriptions/listen` upstream; each listener hears each update; the
/// last one left still hears them, and once it leaves the subscriptions end,
/// once each.
#[actix_rt::test]
async fn one_upstream_subscription_per_uri_however_many_listeners() {
    if !python("hostile_upstreams::one_upstream_subscription_per_uri_however_many_listeners") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (old_log, new_log) = (dir.path().join("old.log"), dir.path().join("new.log"));
    let toml = hostile_upstream(
        "old",
        "",
        &[
            "--legacy",
            "--tools",
            "touch",
            "--touch",
            "--resources",
            "old://a",
            "--log-requests",
            &old_log.display().to_string(),
        ],
    ) + &hostile_upstream(
        "new",
        "",
        &["--tools", "touch", "--touch", "--resources", "new://a", "--log-requests", &new_log.display().to_string()],
    );
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let first = Client::connect(&gw.url, answering()).await.unwrap();
    let second = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    let third = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&first, &["old__touch", "new__touch"], true).await;
    let uris = ["old://a", "new://a"];
    let filter = SubscriptionFilter { resource_subscriptions: uris.map(str::to_owned).to_vec(), ..Default::default() };
    let touch = async || {
        for tool in ["old__touch", "new__touch"] {
            assert_eq!(text(&first.call_tool(tool, json!({})).await.unwrap()), "touched");
        }
    };
    let mut a = first.listen(filter.clone()).await.unwrap();
    wait_for("the gateway subscribes upstream", Duration::from_secs(10), Duration::from_millis(50), async || {
        let (old, new) =
            (count(&old_log, "resources/subscribe", Some("old://a")), listens_of(&new_log, "new://a").len());
        if old >= 1 && new >= 1 {
            Ok(())
        } else {
            Err(format!("{old} resources/subscribe, {new} subscriptions/listen"))
        }
    })
    .await;
    let mut b = second.listen(filter.clone()).await.unwrap();
    let mut c = third.listen(filter).await.unwrap();
    touch().await;
    for (who, listener) in
        [("the first listener", &mut a), ("the legacy listener", &mut b), ("the third listener", &mut c)]
    {
        until_updated(listener, &uris, who).await;
    }
    drop(a);
    drop(b);
    touch().await;
    until_updated(&mut c, &uris, "the last listener left").await;
    drop(c);
    let listen_ids = listens_of(&new_log, "new://a");
    wait_for(
        "the upstream subscriptions end with the last listener",
        Duration::from_secs(10),
        Duration::from_millis(50),
        async || {
            let unsubscribed = count(&old_log, "resources/unsubscribe", Some("old://a"));
            let cancelled = received(&new_log)
                .iter()
                .filter(|m| m["method"] == "notifications/cancelled" && listen_ids.contains(&m["params"]["requestId"]))
                .count();
            if unsubscribed >= 1 && cancelled >= 1 {
                Ok(())
            } else {
                Err(format!("{unsubscribed} resources/unsubscribe, {cancelled} listens cancelled"))
            }
        },
    )
    .await;
    assert_eq!(count(&old_log, "resources/subscribe", Some("old://a")), 1, "{:#?}", received(&old_log));
    assert_eq!(count(&old_log, "resources/unsubscribe", Some("old://a")), 1, "{:#?}", received(&old_log));
    assert_eq!(listens_of(&new_log, "new://a").len(), 1, "{:#?}", received(&new_log));
}

/// "When the process ends … calls in flight fail with an error naming it"
/// (gateway guide): calls of a tool the upstream never answers, from a
/// stateless and a legacy caller, to a stateless upstream and to a legacy
/// one (which takes them one at a time, so one of them waits in the
/// gateway), fail as soon as the process is killed — not at a time limit —
/// with a JSON-RPC error naming the upstream.
#[actix_rt::test]
async fn calls_in_flight_fail_naming_their_upstream_when_it_ends() {
    if !python("hostile_upstreams::calls_in_flight_fail_naming_their_upstream_when_it_ends") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).display().to_string();
    let toml = "[gateway]\nrestart_initial_ms = 60000\nrestart_max_ms = 60000\n".to_owned()
        + &hostile_upstream(
            "flaky",
            "timeout_ms = 60000",
            &[
                "--tools",
                "echo,stall",
                "--hang",
                "stall",
                "--pidfile",
                &file("flaky.pid"),
                "--log-calls",
                &file("flaky.calls"),
            ],
        )
        + &hostile_upstream(
            "elder",
            "timeout_ms = 60000",
            &[
                "--legacy",
                "--tools",
                "echo,stall",
                "--hang",
                "stall",
                "--pidfile",
                &file("elder.pid"),
                "--log-calls",
                &file("elder.calls"),
            ],
        );
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_tools(&stateless, &["flaky__stall", "elder__stall"], true).await;
    // How many of the two calls reach each upstream before it is killed.
    for (name, reaching) in [("flaky", 2), ("elder", 1)] {
        let tool = format!("{name}__stall");
        let calls = file(&format!("{name}.calls"));
        let in_flight =
            futures::future::join(stateless.call_tool(&tool, json!({})), legacy.call_tool(&tool, json!({})));
        let end = async {
            wait_for(
                &format!("{tool} reaches {name}"),
                Duration::from_secs(10),
                Duration::from_millis(20),
                async || {
                    let n =
                        std::fs::read_to_string(&calls).unwrap_or_default().lines().filter(|l| *l == "stall").count();
                    if n >= reaching {
                        Ok(())
                    } else {
                        Err(format!("{n} calls"))
                    }
                },
            )
            .await;
            let pid = std::fs::read_to_string(file(&format!("{name}.pid"))).unwrap();
            assert!(std::process::Command::new("kill").args(["-9", pid.trim()]).status().unwrap().success());
        };
        let ((a, b), ()) = tokio::time::timeout(Duration::from_secs(15), futures::future::join(in_flight, end))
            .await
            .unwrap_or_else(|_| panic!("the calls in flight to {name} did not end within 15 s of its process"));
        for (era, outcome) in [("stateless", a), ("legacy", b)] {
            let e = outcome.expect_err(&format!("{era} caller: {tool} was never answered"));
            let said = message(&e);
            assert!(said.contains(&format!("upstream {name}")), "{era} caller of {tool}: {said}");
        }
    }
}

/// "Progress and log messages of the upstream call go down to the caller
/// (logs at the caller's own level)" (gateway guide, "Per call"): an
/// upstream that sends a log message at each of debug, info, warning and
/// error (whatever it was asked) reaches each caller with those at or
/// above the level the caller set — none for a caller that set none — in
/// both eras.
#[actix_rt::test]
async fn upstream_logs_reach_each_caller_at_its_own_level() {
    if !python("hostile_upstreams::upstream_logs_reach_each_caller_at_its_own_level") {
        return;
    }
    use LoggingLevel::{Debug, Error, Info, Warning};
    let dir = tempfile::tempdir().unwrap();
    let toml = hostile_upstream("talk", "", &["--tools", "chatty", "--chatty"]);
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let plain = Client::connect(&gw.url, answering()).await.unwrap();
    until_tools(&plain, &["talk__chatty"], true).await;
    let legacy = Some(ProtocolVersion::V2025_11_25);
    let cases: [(Option<ProtocolVersion>, Option<LoggingLevel>, Vec<LoggingLevel>); 6] = [
        (None, Some(Warning), vec![Warning, Error]),
        (None, Some(Debug), vec![Debug, Info, Warning, Error]),
        (None, Some(Error), vec![Error]),
        (None, None, vec![]),
        (legacy, Some(Warning), vec![Warning, Error]),
        (legacy, Some(Error), vec![Error]),
    ];
    for (era, level, expected) in cases {
        let mut options = answering();
        if let Some(v) = era {
            options = options.pin(v);
        }
        if let Some(l) = level {
            options = options.log_level(l);
        }
        let client = Client::connect(&gw.url, options).await.unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let into = heard.clone();
        let request = RequestOptions::new().on_log(move |m: LogMessage| into.lock().unwrap().push(m.level));
        let answer = client.call_tool_with("talk__chatty", json!({}), request).await.unwrap();
        assert_eq!(text(&answer), "chatty: done");
        let heard = heard.lock().unwrap().clone();
        assert_eq!(heard, expected, "a caller of {era:?} at level {level:?}");
    }
}

/// "An upstream's … 'resource not found' error is given in the caller's
/// era's code" (gateway guide, "Per call"): a read a legacy upstream
/// answers -32002 (with its `data.uri`), and one a stateless upstream
/// answers -32602, reach a stateless caller as -32602 and a legacy caller as
/// -32002 — as a URI nothing serves does.
#[actix_rt::test]
async fn an_upstreams_resource_not_found_is_given_in_the_callers_era() {
    if !python("hostile_upstreams::an_upstreams_resource_not_found_is_given_in_the_callers_era") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = hostile_upstream("old", "", &["--legacy", "--missing", "old://gone"])
        + &hostile_upstream("new", "", &["--missing", "new://gone"]);
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_resources(&stateless, &["old://gone", "new://gone"]).await;
    for (era, client, code) in [("stateless", &stateless, -32602), ("legacy", &legacy, -32002)] {
        let unknown = client.read_resource("nothing://here").await.unwrap_err();
        assert_eq!(unknown.code(), Some(code), "{era}: what a URI nothing serves gets: {unknown}");
        for uri in ["old://gone", "new://gone"] {
            let e = client.read_resource(uri).await.unwrap_err();
            assert_eq!(e.code(), Some(code), "{era} caller reading {uri}: {e}");
            let ClientError::Protocol(data) = &e else { unreachable!() };
            assert_eq!(data.data.as_ref().map(|d| d["uri"].clone()), Some(json!(uri)), "{era}: {e}");
        }
    }
}

/// As above, for the error as a legacy server may give it: -32002, the
/// 2025 revisions' "Resource not found" code, without `data`. It is that
/// error all the same, and reaches a stateless caller as -32602 (never the
/// legacy code), a legacy caller as -32002.
#[actix_rt::test]
async fn a_legacy_resource_not_found_without_data_is_given_in_the_callers_era() {
    if !python("hostile_upstreams::a_legacy_resource_not_found_without_data_is_given_in_the_callers_era") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toml = hostile_upstream("old", "", &["--legacy", "--missing-bare", "old://bare"]);
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), &toml)]).await;
    let stateless = Client::connect(&gw.url, answering()).await.unwrap();
    let legacy = Client::connect(&gw.url, answering().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    until_resources(&stateless, &["old://bare"]).await;
    for (era, client, code) in [("stateless", &stateless, -32602), ("legacy", &legacy, -32002)] {
        let e = client.read_resource("old://bare").await.unwrap_err();
        assert_eq!(e.code(), Some(code), "{era} caller reading old://bare: {e}");
    }
}
