//! Cedar policies (`[policy]`): one decision for a list and a call, through
//! the local catalog and the gateway, in both eras; a denied call answered
//! exactly as for an unknown item; shadow mode; the schema check at start;
//! a template's policy deciding the reads through it; and, for random
//! policies and catalogs, "listed ⇔ permitted on call".

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use actix_mcp::auth::{bearer_token, AuthError, Authenticator};
use actix_mcp::facts::head::Head;
use actix_mcp::facts::identity::Identity;
use actix_mcp::prelude::*;
use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use sha2::Digest;

fn hex(key: &str) -> String {
    sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

const TABLE_POLICY: &str = r#"
permit(principal, action, resource) when { principal.scopes.contains("ops") };
permit(principal, action == Action::"tools/call", resource == Tool::"echo");
permit(principal, action == Action::"tools/call", resource == Tool::"up__echo");
permit(principal, action == Action::"prompts/get", resource == Prompt::"test_simple_prompt");
permit(principal, action == Action::"resources/read", resource == Resource::"test://static-text");
forbid(principal, action, resource) when { resource.upstream == "up" && !principal.scopes.contains("ops") };
"#;

/// A caller in one era: stateless requests, or a legacy session.
struct Caller {
    url: String,
    token: &'static str,
    session: Option<String>,
}

impl Caller {
    async fn new(url: &str, token: &'static str, legacy: bool) -> Caller {
        let mut caller = Caller { url: url.to_owned(), token, session: None };
        if legacy {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                "capabilities": {}, "clientInfo": {"name": "policy-test", "version": "1"}}});
            let r = caller.post_legacy(&init).await;
            assert_eq!(r.status, 200, "{}", r.raw);
            caller.session = Some(r.headers["mcp-session-id"].to_str().unwrap().to_owned());
            caller.post_legacy(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        }
        caller
    }

    async fn post_legacy(&self, body: &Value) -> Reply {
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json, text/event-stream".to_owned()),
            ("Authorization".to_owned(), format!("Bearer {}", self.token)),
        ];
        if let Some(s) = &self.session {
            headers.push(("Mcp-Session-Id".into(), s.clone()));
        }
        post_raw(&self.url, &headers, serde_json::to_vec(body).unwrap()).await
    }

    /// `method` with `params`: its result, or its error.
    async fn ask(&self, method: &str, params: Value) -> Result<Value, Value> {
        let r = match self.session {
            Some(_) => self.post_legacy(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})).await,
            None => {
                let body = request(json!(7), method, params);
                post_with(&self.url, &body, |h| set(h, "Authorization", &format!("Bearer {}", self.token))).await
            }
        };
        let m = r.messages.iter().find(|m| m.get("id").is_some()).unwrap_or_else(|| panic!("an answer: {}", r.raw));
        match m.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(m["result"].clone()),
        }
    }

    /// The names (or URIs) a list shows.
    async fn listed(&self, method: &str, key: &str, field: &str) -> BTreeSet<String> {
        let result = self.ask(method, json!({})).await.expect("a list");
        result[key].as_array().unwrap().iter().map(|i| i[field].as_str().unwrap().to_owned()).collect()
    }
}

/// The call of an item of `kind` named `name`.
fn call_of(kind: &str, name: &str) -> (&'static str, Value) {
    match kind {
        "tool" => ("tools/call", json!({"name": name, "arguments": {"text": "hi", "name": "x"}})),
        "prompt" => ("prompts/get", json!({"name": name, "arguments": {"arg1": "a", "arg2": "b"}})),
        _ => ("resources/read", json!({"uri": name})),
    }
}

#[actix_rt::test]
async fn the_table_through_the_catalog_and_the_gateway_in_both_eras() {
    let dir = scratch("policy-test-table");
    let policy = dir.join("policy.cedar");
    std::fs::write(&policy, TABLE_POLICY).unwrap();
    let toml = format!(
        "[auth]\nmode = \"api_key\"\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"dev\"\nscopes = [\"mcp\"]\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"ops\"\nscopes = [\"mcp\", \"ops\"]\n\
         [metrics]\npublic = true\n[policy]\nfile = {:?}\n[audit]\nfile = {:?}\n",
        hex("dev-key"),
        hex("ops-key"),
        policy.display().to_string(),
        dir.join("audit.jsonl").display().to_string()
    );
    let config = ConfigFile::new("policy-table", &toml);
    let upstream = format!("up={} stdio --catalog everything --log-level error", binary().display());
    let server =
        HttpChild::spawn(&["--catalog", "everything", "--config", config.path(), "--upstream", &upstream]).await;
    let url = server.url.clone();
    let ops = Caller::new(&url, "ops-key", false).await;
    let mut up = false;
    for _ in 0..100 {
        if ops.ask("tools/call", json!({"name": "up__echo", "arguments": {"text": "up"}})).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(up, "the upstream answers");
    // (caller, kind, item, permitted)
    let table: &[(&str, &str, &str, bool)] = &[
        ("dev-key", "tool", "echo", true),
        ("dev-key", "tool", "greet", false),
        ("dev-key", "tool", "up__echo", false),
        ("dev-key", "tool", "up__greet", false),
        ("dev-key", "prompt", "test_simple_prompt", true),
        ("dev-key", "prompt", "test_prompt_with_arguments", false),
        ("dev-key", "resource", "test://static-text", true),
        ("dev-key", "resource", "test://static-binary", false),
        ("ops-key", "tool", "echo", true),
        ("ops-key", "tool", "greet", true),
        ("ops-key", "tool", "up__echo", true),
        ("ops-key", "tool", "up__greet", true),
        ("ops-key", "prompt", "test_prompt_with_arguments", true),
        ("ops-key", "resource", "test://static-binary", true),
    ];
    for legacy in [false, true] {
        let era = if legacy { "legacy" } else { "stateless" };
        for token in ["dev-key", "ops-key"] {
            let caller = Caller::new(&url, if token == "dev-key" { "dev-key" } else { "ops-key" }, legacy).await;
            let tools = caller.listed("tools/list", "tools", "name").await;
            let prompts = caller.listed("prompts/list", "prompts", "name").await;
            let resources = caller.listed("resources/list", "resources", "uri").await;
            for (who, kind, name, permitted) in table.iter().filter(|r| r.0 == token) {
                let (method, params) = call_of(kind, name);
                let answer = caller.ask(method, params).await;
                let listed = match *kind {
                    "tool" => tools.contains(*name),
                    "prompt" => prompts.contains(*name),
                    _ => resources.contains(*name),
                };
                assert_eq!(listed, *permitted, "{era} {who}: {name} listed");
                match answer {
                    Ok(_) => assert!(permitted, "{era} {who}: {method} {name} must be refused"),
                    Err(e) => {
                        assert!(!permitted, "{era} {who}: {method} {name} refused: {e}");
                        // Exactly as for an item that does not exist.
                        let unknown = format!("{name}-missing");
                        let (m, p) = call_of(kind, &unknown);
                        let mut missing = caller.ask(m, p).await.expect_err("an unknown item is refused");
                        let text = serde_json::to_string(&missing).unwrap().replace(&unknown, name);
                        missing = serde_json::from_str(&text).unwrap();
                        assert_eq!(e, missing, "{era} {who}: {name}");
                    }
                }
            }
            if token == "dev-key" {
                assert_eq!(tools, BTreeSet::from(["echo".to_owned()]), "{era}: the dev caller's tools");
                assert_eq!(prompts, BTreeSet::from(["test_simple_prompt".to_owned()]));
                assert_eq!(resources, BTreeSet::from(["test://static-text".to_owned()]));
            }
        }
    }
    let metrics = client().get(url.replace("/mcp", "/metrics")).send().await.unwrap().text().await.unwrap();
    let count = |decision: &str| {
        let series = format!("mcp_server_policy_decisions_total{{decision=\"{decision}\"}} ");
        metrics.lines().find_map(|l| l.strip_prefix(&series)).and_then(|v| v.trim().parse::<f64>().ok())
    };
    assert!(count("allow").unwrap_or(0.0) >= 10.0 && count("deny").unwrap_or(0.0) >= 10.0, "{metrics}");
    assert_eq!(count("shadow_deny"), Some(0.0));
    // The audit log records each refusal as the policy's.
    let audited = |caller: &str, name: &str| {
        std::fs::read_to_string(dir.join("audit.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|r| r["caller"] == caller && r["name"] == name)
    };
    let mut found = None;
    for _ in 0..50 {
        found = audited("-:dev", "up__greet");
        if found.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let denied = found.expect("the refused call is in the audit log");
    assert_eq!(
        (denied["decision"].as_str(), denied["outcome"].as_str(), denied["upstream"].as_str()),
        (Some("deny"), Some("error"), Some("up")),
        "{denied}"
    );
    let allowed = audited("-:ops", "up__greet").expect("the allowed call");
    assert_eq!((allowed["decision"].as_str(), allowed["outcome"].as_str()), (Some("allow"), Some("ok")), "{allowed}");
}

#[actix_rt::test]
async fn shadow_mode_refuses_nothing_and_logs_each_would_be_denial() {
    let dir = scratch("policy-test-shadow");
    let policy = dir.join("policy.cedar");
    std::fs::write(&policy, r#"permit(principal, action, resource) unless { resource == Tool::"greet" };"#).unwrap();
    let toml = format!("[policy]\nfile = {:?}\nmode = \"shadow\"\n", policy.display().to_string());
    let config = ConfigFile::new("policy-shadow", &toml);
    let mut server =
        HttpChild::spawn(&["--catalog", "everything", "--config", config.path(), "--log-format", "json"]).await;
    let greet = request(json!(1), "tools/call", json!({"name": "greet", "arguments": {"name": "x"}}));
    let r = post(&server.url, &greet).await;
    assert!(r.response()["result"]["content"].is_array(), "shadow mode refuses nothing: {}", r.raw);
    let tools = post(&server.url, &request(json!(2), "tools/list", json!({}))).await;
    assert!(tools.raw.contains(r#""name":"greet""#), "nor hides anything");
    let line = server.stderr_until("the policy would deny").await;
    let record: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(record["level"], "WARN");
    assert_eq!(
        (record["policy"].as_str(), record["action"].as_str(), record["name"].as_str()),
        (Some("shadow"), Some("tools/call"), Some("greet")),
        "{line}"
    );
    let metrics = client().get(server.url.replace("/mcp", "/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("mcp_server_policy_decisions_total{decision=\"shadow_deny\"} 1"), "{metrics}");
    // An anonymous caller is Caller::"anonymous": the same policy allows echo.
    let echo = request(json!(3), "tools/call", json!({"name": "echo", "arguments": {"text": "e"}}));
    assert_eq!(post(&server.url, &echo).await.response()["result"]["content"][0]["text"], "e");
}

#[test]
fn a_policy_the_schema_does_not_know_or_not_cedar_is_a_start_up_error() {
    let dir = scratch("policy-test-schema");
    for (text, says) in [
        (r#"permit(principal, action, resource) when { resource.owner == "me" };"#, "schema"),
        (r#"permit(principal, action == Action::"tools/delete", resource);"#, "schema"),
        ("permit(principal, action", "not Cedar"),
    ] {
        let policy = dir.join("policy.cedar");
        std::fs::write(&policy, text).unwrap();
        let config =
            ConfigFile::new("policy-schema", &format!("[policy]\nfile = {:?}\n", policy.display().to_string()));
        let out = std::process::Command::new(binary())
            .args(["serve", "--bind", "127.0.0.1:0", "--catalog", "everything", "--config", config.path()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text}: must not start");
        assert!(stderr.contains("policy.file") && stderr.contains(says), "{text}: {stderr}");
    }
    // A shipped schema, and a policy that uses every attribute, start.
    let policy = dir.join("ok.cedar");
    std::fs::write(
        &policy,
        r#"permit(principal, action, resource is Tool) when { resource.read_only && !resource.destructive && resource.upstream == "" && principal.anonymous && principal.issuer == "" && principal.subject == "" && principal.client_id == "" && principal.scopes.isEmpty() };"#,
    )
    .unwrap();
    assert!(starts_with_policy("policy-ok", &policy), "a valid policy starts");
}

/// Whether the binary serving the `everything` catalog under the policy
/// file `policy` starts (prints its address within its first 20 lines).
fn starts_with_policy(name: &str, policy: &std::path::Path) -> bool {
    let config = ConfigFile::new(name, &format!("[policy]\nfile = {:?}\n", policy.display().to_string()));
    let mut child = std::process::Command::new(binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--catalog", "everything", "--config", config.path()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let started = lines.by_ref().take(20).flatten().any(|l| l.starts_with("listening on "));
    let _ = child.kill();
    let _ = child.wait();
    started
}

/// A server of the template `notes://{title}` and the resource
/// `memo://motd` under `policy`, for anonymous callers.
fn notes_under(dir: &std::path::Path, policy: &str) -> TestServer {
    let file = dir.join("policy.cedar");
    std::fs::write(&file, policy).unwrap();
    let mut config = test_config();
    config.policy.file = file.display().to_string();
    let template = ResourceTemplate::new("notes://{title}", "note", |uri, vars, _ctx| async move {
        Ok(vec![ResourceContents::text(uri, "text/plain", format!("title={}", vars["title"]))])
    })
    .unwrap();
    let motd = Resource::text("memo://motd", "motd", "text/plain", "Be kind.");
    let builder = McpServer::builder(server_info!()).config(config).template(template).resource(motd);
    TestServer::serve(builder.build().expect("a valid server"))
}

/// What a read of `uri` answers: the text read, or the error.
async fn read(url: &str, uri: &str) -> Result<String, Value> {
    let r = post(url, &request(json!(1), "resources/read", json!({"uri": uri}))).await;
    let text = |m: &Value| m["result"]["contents"][0]["text"].as_str().map(str::to_owned);
    match r.response().get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(text(r.response()).unwrap_or_else(|| panic!("a text: {}", r.raw))),
    }
}

/// The error a read of `uri` would get if nothing served it.
async fn as_unknown(url: &str, uri: &str) -> Value {
    let missing = "nothing://here";
    let e = read(url, missing).await.expect_err("nothing serves it");
    serde_json::from_str(&serde_json::to_string(&e).unwrap().replace(missing, uri)).unwrap()
}

/// The URI templates `resources/templates/list` shows.
async fn templates(url: &str) -> BTreeSet<String> {
    let r = post(url, &request(json!(2), "resources/templates/list", json!({}))).await;
    let listed = r.response()["result"]["resourceTemplates"].as_array().unwrap_or_else(|| panic!("{}", r.raw)).clone();
    listed.iter().map(|t| t["uriTemplate"].as_str().unwrap().to_owned()).collect()
}

#[actix_rt::test]
async fn a_forbid_on_a_template_refuses_every_read_through_it() {
    let dir = scratch("policy-test-template-forbid");
    let server = notes_under(
        &dir,
        r#"
        permit(principal, action, resource);
        forbid(principal, action == Action::"resources/read", resource == Resource::"notes://{title}");
        "#,
    );
    assert_eq!(templates(&server.url).await, BTreeSet::new(), "the template is hidden");
    for uri in ["notes://public", "notes://secret"] {
        let refused = read(&server.url, uri).await.expect_err("a read through a forbidden template is refused");
        assert_eq!(refused, as_unknown(&server.url, uri).await, "{uri}: as for an unknown URI");
    }
    assert_eq!(read(&server.url, "memo://motd").await, Ok("Be kind.".to_owned()), "the rest is read");
    server.stop().await;
}

#[actix_rt::test]
async fn a_permit_on_a_template_and_a_forbid_on_one_uri_refuse_just_that_uri() {
    let dir = scratch("policy-test-template-permit");
    let server = notes_under(
        &dir,
        r#"
        permit(principal, action == Action::"resources/read", resource in Resource::"notes://{title}");
        forbid(principal, action == Action::"resources/read", resource == Resource::"notes://secret");
        "#,
    );
    assert_eq!(templates(&server.url).await, BTreeSet::from(["notes://{title}".to_owned()]), "the template is shown");
    assert_eq!(read(&server.url, "notes://public").await, Ok("title=public".to_owned()));
    let refused = read(&server.url, "notes://secret").await.expect_err("the forbidden URI is refused");
    assert_eq!(refused, as_unknown(&server.url, "notes://secret").await);
    let motd = read(&server.url, "memo://motd").await.expect_err("nothing permits the resource");
    assert_eq!(motd, as_unknown(&server.url, "memo://motd").await);
    server.stop().await;
}

/// A forbid on a URI holds for every spelling of it that reads the same:
/// escaped unreserved characters are decoded before the policy decides
/// (a template reads `notes://%73ecret` as `notes://secret`).
#[actix_rt::test]
async fn a_forbid_on_a_uri_holds_for_its_escaped_spellings() {
    let dir = scratch("policy-test-escaped-uri");
    let server = notes_under(
        &dir,
        r#"
        permit(principal, action, resource);
        forbid(principal, action == Action::"resources/read", resource == Resource::"notes://secret");
        forbid(principal, action == Action::"resources/read", resource == Resource::"notes://café?");
        "#,
    );
    assert_eq!(read(&server.url, "notes://public").await, Ok("title=public".to_owned()));
    // Escapes of unreserved, reserved and non-ASCII characters alike: the
    // template reads each of them as the forbidden URI.
    for uri in [
        "notes://secret",
        "notes://%73ecret",
        "notes://s%65cr%65t",
        "notes://%73%65%63%72%65%74",
        "notes://café?",
        "notes://caf%C3%A9%3F",
        "notes://café%3f",
    ] {
        let refused = read(&server.url, uri).await.expect_err("every spelling of the forbidden URI is refused");
        assert_eq!(refused, as_unknown(&server.url, uri).await, "{uri}: as for an unknown URI");
    }
    server.stop().await;
}

/// What `completion/complete` answers for `reference` (its first argument
/// is `title`): the values, or the error.
async fn complete(url: &str, reference: Value) -> Result<Value, Value> {
    let params = json!({"ref": reference, "argument": {"name": "title", "value": ""}});
    let r = post(url, &request(json!(3), "completion/complete", params)).await;
    match r.response().get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(r.response()["result"]["completion"]["values"].clone()),
    }
}

/// Completion is no way around a list: a template or prompt the policy
/// hides is answered as an unknown one.
#[actix_rt::test]
async fn completion_of_a_hidden_template_or_prompt_is_answered_as_for_an_unknown_one() {
    let dir = scratch("policy-test-completion");
    let file = dir.join("policy.cedar");
    std::fs::write(
        &file,
        r#"
        permit(principal, action, resource);
        forbid(principal, action == Action::"resources/read", resource == Resource::"notes://{title}");
        forbid(principal, action == Action::"prompts/get", resource == Prompt::"hidden");
        "#,
    )
    .unwrap();
    let mut config = test_config();
    config.policy.file = file.display().to_string();
    let template = |t: &str| {
        ResourceTemplate::new(t, "note", |uri, _vars, _ctx| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "x")])
        })
        .unwrap()
    };
    let prompt = |name: &str| {
        Prompt::new(name, "d", |_, _| async { Ok(GetPromptResult { description: None, messages: vec![] }) })
    };
    let builder = McpServer::builder(server_info!())
        .config(config)
        .template(template("notes://{title}"))
        .template(template("memo://{title}"))
        .prompt(prompt("hidden"))
        .prompt(prompt("shown"));
    let server = TestServer::serve(builder.build().expect("a valid server"));
    let url = &server.url;
    // What is shown completes; what is hidden answers as what is not there.
    assert!(complete(url, json!({"type": "ref/resource", "uri": "memo://{title}"})).await.is_ok());
    assert!(complete(url, json!({"type": "ref/prompt", "name": "shown"})).await.is_ok());
    let hidden = complete(url, json!({"type": "ref/resource", "uri": "notes://{title}"})).await;
    let absent = complete(url, json!({"type": "ref/resource", "uri": "none://{title}"})).await;
    let absent = serde_json::to_string(&absent.expect_err("no such template")).unwrap().replace("none://", "notes://");
    assert_eq!(serde_json::to_string(&hidden.expect_err("a hidden template")).unwrap(), absent);
    let hidden = complete(url, json!({"type": "ref/prompt", "name": "hidden"})).await;
    let absent = complete(url, json!({"type": "ref/prompt", "name": "absent"})).await;
    let absent = serde_json::to_string(&absent.expect_err("no such prompt")).unwrap().replace("absent", "hidden");
    assert_eq!(serde_json::to_string(&hidden.expect_err("a hidden prompt")).unwrap(), absent);
    server.stop().await;
}

/// Bearer `SUBJECT:SCOPE,SCOPE` is that caller.
struct Named;

impl Authenticator for Named {
    fn authenticate<'a>(
        &'a self,
        head: &'a Head<'a>,
    ) -> futures::future::LocalBoxFuture<'a, Result<Arc<Identity>, AuthError>> {
        let found = match bearer_token(head) {
            Ok(Some(token)) => {
                let (subject, scopes) = token.split_once(':').unwrap_or((token, ""));
                let scopes: Vec<&str> = scopes.split(',').filter(|s| !s.is_empty()).collect();
                Ok(Arc::new(Identity::new(subject).with_scopes(scopes)))
            }
            Ok(None) => Err(AuthError::Missing),
            Err(e) => Err(e),
        };
        Box::pin(std::future::ready(found))
    }
}

/// One rule of a random policy: permit or forbid, when a condition holds.
#[derive(Debug, Clone)]
struct Rule {
    permit: bool,
    condition: Condition,
}

#[derive(Debug, Clone)]
enum Condition {
    Always,
    Named(usize),
    ReadOnly,
    Destructive,
    Upstream(usize),
    Scope(usize),
    Subject(usize),
}

const UPSTREAMS: [&str; 3] = ["", "u1", "u2"];
const SCOPES: [&str; 2] = ["s1", "s2"];
const SUBJECTS: [&str; 2] = ["alice", "bob"];

#[derive(Debug, Clone)]
struct ToolSpec {
    read_only: bool,
    destructive: bool,
    upstream: usize,
}

impl Condition {
    fn cedar(&self) -> String {
        match self {
            Condition::Always => "true".into(),
            Condition::Named(i) => format!("resource == Tool::\"t{i}\""),
            Condition::ReadOnly => "resource.read_only".into(),
            Condition::Destructive => "resource.destructive".into(),
            Condition::Upstream(u) => format!("resource.upstream == \"{}\"", UPSTREAMS[*u]),
            Condition::Scope(s) => format!("principal.scopes.contains(\"{}\")", SCOPES[*s]),
            Condition::Subject(s) => format!("principal.subject == \"{}\"", SUBJECTS[*s]),
        }
    }

    fn holds(&self, i: usize, tool: &ToolSpec, subject: usize, scopes: &[bool; 2]) -> bool {
        match self {
            Condition::Always => true,
            Condition::Named(n) => *n == i,
            Condition::ReadOnly => tool.read_only,
            Condition::Destructive => tool.destructive,
            Condition::Upstream(u) => *u == tool.upstream,
            Condition::Scope(s) => scopes[*s],
            Condition::Subject(s) => *s == subject,
        }
    }
}

fn condition() -> impl Strategy<Value = Condition> {
    prop_oneof![
        Just(Condition::Always),
        (0..6usize).prop_map(Condition::Named),
        Just(Condition::ReadOnly),
        Just(Condition::Destructive),
        (0..3usize).prop_map(Condition::Upstream),
        (0..2usize).prop_map(Condition::Scope),
        (0..2usize).prop_map(Condition::Subject),
    ]
}

fn rule() -> impl Strategy<Value = Rule> {
    (proptest::bool::weighted(0.7), condition()).prop_map(|(permit, condition)| Rule { permit, condition })
}

fn tool_spec() -> impl Strategy<Value = ToolSpec> {
    (any::<bool>(), any::<bool>(), 0..3usize).prop_map(|(read_only, destructive, upstream)| ToolSpec {
        read_only,
        destructive,
        upstream,
    })
}

/// Serves the tools `specs` under `policy` and returns, for the caller,
/// the tools listed, the tools whose call was not refused, and the oracle's.
fn listed_called_expected(
    specs: &[ToolSpec],
    rules: &[Rule],
    subject: usize,
    scopes: [bool; 2],
    case: u64,
) -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let dir = scratch(&format!("policy-test-prop-{case}"));
    let text: String = rules
        .iter()
        .map(|r| {
            format!(
                "{}(principal, action == Action::\"tools/call\", resource) when {{ {} }};\n",
                if r.permit { "permit" } else { "forbid" },
                r.condition.cedar()
            )
        })
        .collect();
    let file = dir.join("policy.cedar");
    std::fs::write(&file, &text).unwrap();
    let mut config = test_config();
    config.policy.file = file.display().to_string();
    let mut builder = McpServer::builder(server_info!()).config(config).authenticator(Named);
    for (i, spec) in specs.iter().enumerate() {
        let annotations = ToolAnnotations {
            read_only_hint: Some(spec.read_only),
            destructive_hint: Some(spec.destructive),
            ..Default::default()
        };
        let mut tool = Tool::no_args(format!("t{i}"), "", |_ctx| async { Ok("ran") }).with_annotations(annotations);
        if spec.upstream > 0 {
            tool = tool.with_upstream(UPSTREAMS[spec.upstream]);
        }
        builder = builder.tool(tool);
    }
    let token: String = format!(
        "{}:{}",
        SUBJECTS[subject],
        SCOPES.iter().zip(scopes).filter(|(_, on)| *on).map(|(s, _)| *s).collect::<Vec<_>>().join(",")
    );
    let expected: BTreeSet<String> = (0..specs.len())
        .filter(|&i| {
            let holds = |permit: bool| {
                rules.iter().any(|r| r.permit == permit && r.condition.holds(i, &specs[i], subject, &scopes))
            };
            holds(true) && !holds(false)
        })
        .map(|i| format!("t{i}"))
        .collect();
    let (listed, called) = actix_rt::System::new().block_on(async move {
        let server = TestServer::serve(builder.build().expect("a valid server"));
        let auth = format!("Bearer {token}");
        let list =
            post_with(&server.url, &request(json!(1), "tools/list", json!({})), |h| set(h, "Authorization", &auth))
                .await;
        let listed: BTreeSet<String> = list.response()["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{}", list.raw))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let mut called = BTreeSet::new();
        for name in (0..6).map(|i| format!("t{i}")) {
            let body = request(json!(2), "tools/call", json!({"name": name, "arguments": {}}));
            let r = post_with(&server.url, &body, |h| set(h, "Authorization", &auth)).await;
            if r.response()["result"]["content"][0]["text"] == "ran" {
                called.insert(name);
            }
        }
        server.stop().await;
        (listed, called)
    });
    let _ = std::fs::remove_dir_all(&dir);
    (listed, called, expected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn listed_exactly_when_permitted_on_call(
        specs in proptest::collection::vec(tool_spec(), 6),
        rules in proptest::collection::vec(rule(), 1..5),
        subject in 0..2usize,
        scopes in any::<[bool; 2]>(),
        case in any::<u64>(),
    ) {
        let (listed, called, expected) = listed_called_expected(&specs, &rules, subject, scopes, case);
        prop_assert_eq!(&listed, &called, "listed ⇔ permitted on call");
        prop_assert_eq!(&listed, &expected, "as the policy reads");
    }
}

const UPSTREAM_POLICY: &str = r#"
permit(principal, action, resource) when { principal.scopes.contains("ops") };
permit(principal, action == Action::"prompts/get", resource) when { resource.upstream == "up" };
forbid(principal, action == Action::"prompts/get", resource == Prompt::"up__test_prompt_with_arguments") unless { principal.scopes.contains("ops") };
permit(principal, action == Action::"resources/read", resource) when { resource.upstream == "up" && resource.template == "" };
forbid(principal, action == Action::"resources/read", resource == Resource::"test://static-binary") unless { principal.scopes.contains("ops") };
"#;

#[actix_rt::test]
async fn an_upstreams_prompts_and_resources_are_listed_exactly_when_permitted_in_both_eras() {
    let dir = scratch("policy-test-upstream-items");
    let policy = dir.join("policy.cedar");
    std::fs::write(&policy, UPSTREAM_POLICY).unwrap();
    let toml = format!(
        "[auth]\nmode = \"api_key\"\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"dev\"\nscopes = [\"mcp\"]\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"ops\"\nscopes = [\"mcp\", \"ops\"]\n\
         [policy]\nfile = {:?}\n{}",
        hex("dev-key"),
        hex("ops-key"),
        policy.display().to_string(),
        everything_upstream("up", "")
    );
    let config = ConfigFile::new("policy-upstream-items", &toml);
    // Only the upstream is served: every prompt and resource is its.
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    let url = server.url.clone();
    let ops = Caller::new(&url, "ops-key", false).await;
    let what = "the upstream's prompts and resources are served";
    wait_for(what, std::time::Duration::from_secs(20), std::time::Duration::from_millis(100), async || {
        let prompts = ops.listed("prompts/list", "prompts", "name").await;
        let resources = ops.listed("resources/list", "resources", "uri").await;
        if prompts.contains("up__test_simple_prompt") && resources.contains("test://static-text") {
            Ok(())
        } else {
            Err(format!("{prompts:?} {resources:?}"))
        }
    })
    .await;
    // (caller, kind, item, permitted)
    let table: &[(&str, &str, &str, bool)] = &[
        ("dev-key", "prompt", "up__test_simple_prompt", true),
        ("dev-key", "prompt", "up__test_prompt_with_image", true),
        ("dev-key", "prompt", "up__test_prompt_with_arguments", false),
        ("dev-key", "resource", "test://static-text", true),
        ("dev-key", "resource", "test://stateless-static-text", true),
        ("dev-key", "resource", "test://static-binary", false),
        ("ops-key", "prompt", "up__test_simple_prompt", true),
        ("ops-key", "prompt", "up__test_prompt_with_image", true),
        ("ops-key", "prompt", "up__test_prompt_with_arguments", true),
        ("ops-key", "resource", "test://static-text", true),
        ("ops-key", "resource", "test://stateless-static-text", true),
        ("ops-key", "resource", "test://static-binary", true),
    ];
    for legacy in [false, true] {
        let era = if legacy { "legacy" } else { "stateless" };
        let mut shown = Vec::new();
        for token in ["dev-key", "ops-key"] {
            let caller = Caller::new(&url, if token == "dev-key" { "dev-key" } else { "ops-key" }, legacy).await;
            let prompts = caller.listed("prompts/list", "prompts", "name").await;
            let resources = caller.listed("resources/list", "resources", "uri").await;
            for (who, kind, name, permitted) in table.iter().filter(|r| r.0 == token) {
                let listed = if *kind == "prompt" { prompts.contains(*name) } else { resources.contains(*name) };
                assert_eq!(listed, *permitted, "{era} {who}: {name} listed");
                let (method, params) = call_of(kind, name);
                match caller.ask(method, params).await {
                    Ok(_) => assert!(permitted, "{era} {who}: {method} {name} must be refused"),
                    Err(e) => {
                        assert!(!permitted, "{era} {who}: {method} {name} refused: {e}");
                        // Exactly as for an item that does not exist.
                        let unknown = format!("{name}-missing");
                        let (m, p) = call_of(kind, &unknown);
                        let missing = caller.ask(m, p).await.expect_err("an unknown item is refused");
                        let missing: Value =
                            serde_json::from_str(&serde_json::to_string(&missing).unwrap().replace(&unknown, name))
                                .unwrap();
                        assert_eq!(e, missing, "{era} {who}: {name}");
                    }
                }
            }
            shown.push((prompts, resources));
        }
        // Everything else the upstream serves: the dev caller is shown all
        // of it but the two items forbidden to it.
        let (dev, ops) = (&shown[0], &shown[1]);
        let mut expected_prompts = ops.0.clone();
        expected_prompts.remove("up__test_prompt_with_arguments");
        let mut expected_resources = ops.1.clone();
        expected_resources.remove("test://static-binary");
        assert!(ops.0.len() >= 3 && ops.1.len() >= 3, "{era}: the ops caller is shown the upstream's items: {ops:?}");
        assert_eq!(dev.0, expected_prompts, "{era}: the dev caller's prompts");
        assert_eq!(dev.1, expected_resources, "{era}: the dev caller's resources");
    }
}

#[test]
fn resource_read_only_where_the_resource_may_be_a_prompt_stops_the_server() {
    let dir = scratch("policy-test-read-only");
    let policy = dir.join("policy.cedar");
    for text in [
        r#"permit(principal, action, resource) when { resource.read_only };"#,
        r#"permit(principal, action == Action::"prompts/get", resource) when { resource.read_only };"#,
        r#"permit(principal, action in [Action::"tools/call", Action::"prompts/get"], resource) when { resource.read_only };"#,
    ] {
        std::fs::write(&policy, text).unwrap();
        let config =
            ConfigFile::new("policy-read-only", &format!("[policy]\nfile = {:?}\n", policy.display().to_string()));
        let out = std::process::Command::new(binary())
            .args(["serve", "--bind", "127.0.0.1:0", "--catalog", "everything", "--config", config.path()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text}: must not start: {stderr}");
        assert!(
            stderr.contains("policy.file") && stderr.contains("read_only") && stderr.contains("Prompt"),
            "{text}: the validator's message names the attribute and the type: {stderr}"
        );
    }
    // Scoped as the guide says, the same rule starts.
    for text in [
        r#"permit(principal, action == Action::"tools/call", resource) when { resource.read_only };"#,
        r#"permit(principal, action, resource is Tool) when { resource.read_only };"#,
    ] {
        std::fs::write(&policy, text).unwrap();
        assert!(starts_with_policy("policy-read-only-scoped", &policy), "{text}: a scoped rule starts");
    }
}

/// `completion/complete` (actors/src/pipeline/service/completion.rs): "A
/// prompt or template the caller's scopes … hide is answered as an unknown
/// one". A prompt and a template asking for scopes (`with_scopes`), beside
/// ones that ask for none, no policy: a caller granted the scopes completes
/// all four; a caller without them is not shown the two, and their
/// completion is answered exactly as that of a missing prompt or template,
/// in both eras.
#[actix_rt::test]
async fn completion_of_a_template_or_prompt_the_callers_scopes_hide_is_answered_as_for_an_unknown_one() {
    let template = |t: &str, scopes: &[&str]| {
        ResourceTemplate::new(t, "note", |uri, _vars, _ctx| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "x")])
        })
        .unwrap()
        .with_scopes(scopes.iter().copied())
        .with_completer(Arc::new(|_, _, _| vec!["alpha".to_owned()]))
    };
    let prompt = |name: &str, scopes: &[&str]| {
        Prompt::new(name, "d", |_, _| async { Ok(GetPromptResult { description: None, messages: vec![] }) })
            .with_scopes(scopes.iter().copied())
            .with_completer(Arc::new(|_, _, _| vec!["alpha".to_owned()]))
    };
    let builder = McpServer::builder(server_info!())
        .config(test_config())
        .authenticator(Named)
        .template(template("notes://{title}", &["notes:read"]))
        .template(template("memo://{title}", &[]))
        .prompt(prompt("secret", &["prompts:secret"]))
        .prompt(prompt("open", &[]));
    let server = TestServer::serve(builder.build().expect("a valid server"));
    let completing = |reference: Value| json!({"ref": reference, "argument": {"name": "title", "value": ""}});
    let of_prompt = |name: &str| json!({"type": "ref/prompt", "name": name});
    let of_template = |uri: &str| json!({"type": "ref/resource", "uri": uri});
    for legacy in [false, true] {
        let era = if legacy { "legacy" } else { "stateless" };
        let granted = Caller::new(&server.url, "bob:notes:read,prompts:secret", legacy).await;
        let plain = Caller::new(&server.url, "ada:", legacy).await;
        let all =
            [of_prompt("secret"), of_template("notes://{title}"), of_prompt("open"), of_template("memo://{title}")];
        for reference in &all {
            let done = granted.ask("completion/complete", completing(reference.clone())).await;
            let done = done.unwrap_or_else(|e| panic!("{era}: {reference} completes for a caller granted it: {e}"));
            assert_eq!(done["completion"]["values"], json!(["alpha"]), "{era}: {reference}");
        }
        for reference in &all[2..] {
            let done = plain.ask("completion/complete", completing(reference.clone())).await;
            let done = done.unwrap_or_else(|e| panic!("{era}: {reference} asks for no scope: {e}"));
            assert_eq!(done["completion"]["values"], json!(["alpha"]), "{era}: {reference}");
        }
        // Not shown to the caller without the scopes…
        let prompts = plain.listed("prompts/list", "prompts", "name").await;
        assert_eq!(prompts, BTreeSet::from(["open".to_owned()]), "{era}");
        let templates = plain.listed("resources/templates/list", "resourceTemplates", "uriTemplate").await;
        assert_eq!(templates, BTreeSet::from(["memo://{title}".to_owned()]), "{era}");
        // …nor completed for it: answered as what is not there.
        let as_for = |hidden: Result<Value, Value>, absent: Result<Value, Value>, from: &str, to: &str| {
            let hidden = serde_json::to_string(&hidden.expect_err("hidden: refused")).unwrap();
            let absent = serde_json::to_string(&absent.expect_err("absent: refused")).unwrap().replace(from, to);
            assert_eq!(hidden, absent, "{era}: {to}");
        };
        let hidden = plain.ask("completion/complete", completing(of_prompt("secret"))).await;
        let absent = plain.ask("completion/complete", completing(of_prompt("absent"))).await;
        as_for(hidden, absent, "absent", "secret");
        let hidden = plain.ask("completion/complete", completing(of_template("notes://{title}"))).await;
        let absent = plain.ask("completion/complete", completing(of_template("none://{title}"))).await;
        as_for(hidden, absent, "none://", "notes://");
    }
    server.stop().await;
}

/// A server of the everything catalog's event types under `policy`.
fn events_under(dir: &std::path::Path, policy: &str) -> TestServer {
    let file = dir.join("policy.cedar");
    std::fs::write(&file, policy).unwrap();
    TestServer::everything_with(|config| config.policy.file = file.display().to_string())
}

#[actix_rt::test]
async fn an_event_type_is_listed_exactly_when_it_may_be_polled_or_streamed() {
    let dir = scratch("policy-test-events");
    let srv = events_under(
        &dir,
        r#"permit(principal, action, resource) unless { resource is Event && resource == Event::"signal.fired" };"#,
    );
    let listed = post(&srv.url, &request(json!(1), "events/list", json!({}))).await;
    let names: BTreeSet<String> = listed.response()["result"]["events"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", listed.raw))
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, BTreeSet::from(["clock.tick".to_owned(), "limited.tick".to_owned()]));
    // Refused as if it did not exist: the same -32011 an unknown name gets.
    for method in ["events/poll", "events/stream"] {
        let forbidden = post(&srv.url, &request(json!(2), method, json!({"name": "signal.fired"}))).await;
        let unknown = post(&srv.url, &request(json!(2), method, json!({"name": "no.such"}))).await;
        let (f, u) = (&forbidden.response()["error"], &unknown.response()["error"]);
        assert_eq!((&f["code"], &f["data"]), (&u["code"], &u["data"]), "{method}: {f} vs {u}");
        assert_eq!(f["code"], -32011, "{method}");
    }
    let permitted = post(&srv.url, &request(json!(3), "events/poll", json!({"name": "clock.tick"}))).await;
    assert!(permitted.response()["result"]["cursor"].is_string(), "{}", permitted.raw);
    srv.stop().await;
}
