//! The gateway against tool poisoning: a definition carrying hidden
//! characters is never served, and with `gateway.pins` a definition that
//! changes after it was pinned (a "rug pull") is quarantined — not listed,
//! refused by name with the reason — until `actix-mcp gateway approve` and a
//! restart. The upstream is `tests/hostile/upstream.py` (python3), or one
//! written here that lists tools, prompts and resources from a JSON file and
//! records what reaches it; the gateway is the real binary.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

async fn tool_names(url: &str) -> Vec<String> {
    let r = post(url, &request(json!(1), "tools/list", json!({}))).await;
    let tools = r.response()["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// Waits up to 20 s until `name` is listed (`present`) or not.
async fn until_listed(url: &str, name: &str, present: bool) {
    for _ in 0..200 {
        if tool_names(url).await.iter().any(|n| n == name) == present {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} was not {} within 20 s", if present { "listed" } else { "withdrawn" });
}

async fn call(url: &str, name: &str) -> Value {
    post(url, &request(json!(2), "tools/call", json!({"name": name, "arguments": {"text": "hi"}})))
        .await
        .response()
        .clone()
}

#[actix_rt::test]
async fn hidden_characters_are_never_served_and_a_changed_definition_waits_for_approval() {
    if external("pins::hidden_characters_are_never_served_and_a_changed_definition_waits_for_approval", &["python3"])
        .is_none()
    {
        return;
    }
    let dir = scratch("pins-test-rug");
    let (pins, flag) = (dir.join("pins.json"), dir.join("flipped"));
    let flags = ["--legacy", "--tools", "echo", "--rug-pull", flag.to_str().unwrap(), "--tagged", "sneaky"];
    let toml = format!(
        "[status]\nenabled = true\n[gateway]\npins = {:?}\n{}",
        pins.display().to_string(),
        hostile_upstream("rug", "", &flags)
    );
    let config = ConfigFile::new("pins-rug", &toml);
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    let url = server.url.clone();
    until_listed(&url, "rug__echo", true).await;
    assert_eq!(call(&url, "rug__echo").await["result"]["content"][0]["text"], "echo: hi");
    // Tag characters: not listed, and refused by name (not forwarded) with why.
    assert!(!tool_names(&url).await.contains(&"rug__sneaky".to_owned()));
    let sneaky = call(&url, "rug__sneaky").await;
    let why = sneaky["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(why.contains("upstream rug") && why.contains("hidden character (U+E0069)"), "{sneaky}");
    // Pinned at first sight.
    let file: Value = serde_json::from_slice(&std::fs::read(&pins).unwrap()).unwrap();
    assert!(file["pinned"]["rug"]["tool:echo"]["description"].is_string(), "{file}");
    // The upstream changes echo's description: quarantined.
    assert_eq!(call(&url, "rug__flip").await["result"]["content"][0]["text"], "flipped");
    until_listed(&url, "rug__echo", false).await;
    let refused = call(&url, "rug__echo").await;
    let why = refused["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(why.contains("upstream rug") && why.contains("description changed") && why.contains("approve"), "{why}");
    let status: Value = reqwest::get(url.replace("/mcp", "/status.json")).await.unwrap().json().await.unwrap();
    let row = status["upstreams"].as_array().unwrap().iter().find(|r| r["name"] == "rug").unwrap().clone();
    assert!(row["refused"]["tool:rug__echo"].as_str().unwrap().contains("description"), "{row}");
    assert!(row["refused"]["tool:rug__sneaky"].is_string(), "{row}");
    let metrics = reqwest::get(url.replace("/mcp", "/metrics")).await.unwrap().text().await.unwrap();
    let refusals = metrics
        .lines()
        .find_map(|l| l.strip_prefix("mcp_gateway_items_refused_total{upstream=\"rug\"} "))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(refusals.unwrap_or(0.0) >= 2.0, "{metrics}");

    // Approved, and served after a reload (SIGHUP); the tagged tool still is not.
    let out = std::process::Command::new(binary())
        .args(["gateway", "approve", "--pins", pins.to_str().unwrap(), "rug/echo"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("approved 1"));
    let again = std::process::Command::new(binary())
        .args(["gateway", "approve", "--pins", pins.to_str().unwrap(), "rug/echo"])
        .output()
        .unwrap();
    assert!(!again.status.success(), "nothing waits any more");
    server.hangup();
    until_listed(&url, "rug__echo", true).await;
    assert_eq!(call(&url, "rug__echo").await["result"]["content"][0]["text"], "echo: hi");
    assert!(call(&url, "rug__sneaky").await["error"]["message"].as_str().unwrap().contains("hidden character"));
    // A pins file that is not one: the reload is refused, the pins in force stay.
    let approved = std::fs::read(&pins).unwrap();
    std::fs::write(&pins, "not json").unwrap();
    server.hangup();
    let mut refused = None;
    for _ in 0..200 {
        let status: Value = reqwest::get(url.replace("/mcp", "/status.json")).await.unwrap().json().await.unwrap();
        if status["config"]["last_reload_error"].as_str().is_some_and(|e| e.contains("gateway.pins")) {
            refused = Some(status);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let status = refused.expect("the reload with a broken pins file is refused within 20 s");
    assert_eq!(status["config"]["generation"], 2, "the running configuration stays: {status}");
    assert_eq!(call(&url, "rug__echo").await["result"]["content"][0]["text"], "echo: hi");
    std::fs::write(&pins, approved).unwrap();
    drop(server);
    // And after a restart.
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    until_listed(&server.url, "rug__echo", true).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pins_file_that_is_not_json_stops_the_gateway() {
    let dir = scratch("pins-test-bad");
    let pins = dir.join("pins.json");
    std::fs::write(&pins, "not json").unwrap();
    let toml = format!("[gateway]\npins = {:?}\n{}", pins.display().to_string(), everything_upstream("e", ""));
    let config = ConfigFile::new("pins-bad", &toml);
    let out = std::process::Command::new(binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--catalog", "none", "--config", config.path()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("gateway.pins") && stderr.contains("not a pins file"), "{stderr}");
}

/// An upstream (python3, initialize era) listing the tools, prompts and
/// resources of the JSON file `argv[1]` (read again at each listing), and
/// writing each call, get and read it answers to `argv[2]`, one line each
/// (`tool NAME`, `prompt NAME`, `resource URI`) before it answers.
const LISTING_UPSTREAM: &str = r##"
import json, sys

defs_path, log_path = sys.argv[1], sys.argv[2]
out = sys.stdout.buffer


def send(msg):
    out.write(json.dumps(msg).encode() + b"\n")
    out.flush()


def defs(kind):
    with open(defs_path, encoding="utf-8") as f:
        return json.load(f).get(kind, [])


def logged(line):
    with open(log_path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def answer(method, params):
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "serverInfo": {"name": "listing-upstream", "version": "1"},
                "capabilities": {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                                 "resources": {"listChanged": True}}}
    if method == "tools/list":
        return {"tools": defs("tools")}
    if method == "prompts/list":
        return {"prompts": defs("prompts")}
    if method == "resources/list":
        return {"resources": defs("resources")}
    if method == "resources/templates/list":
        return {"resourceTemplates": []}
    if method == "tools/call":
        logged("tool " + params.get("name", ""))
        return {"content": [{"type": "text", "text": "called " + params.get("name", "")}]}
    if method == "prompts/get":
        logged("prompt " + params.get("name", ""))
        text = "prompt " + params.get("name", "")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
    if method == "resources/read":
        logged("resource " + params.get("uri", ""))
        return {"contents": [{"uri": params.get("uri", ""), "mimeType": "text/plain", "text": "read"}]}
    if method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        return {}
    return None


for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict) or msg.get("id") is None or msg.get("method") is None:
        continue
    result = answer(msg["method"], msg.get("params") or {})
    if result is None:
        error = {"code": -32601, "message": "Method not found: " + msg["method"]}
        send({"jsonrpc": "2.0", "id": msg["id"], "error": error})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
"##;

/// Writes the listing upstream and its definitions `defs` into `dir`, and
/// returns its `[[upstreams]]` entry, named `name`; what reached it is in
/// [`reached`].
fn listing_upstream(dir: &std::path::Path, name: &str, defs: &Value) -> String {
    let (script, file, log) = (dir.join("upstream.py"), dir.join("defs.json"), dir.join("reached.log"));
    std::fs::write(&script, LISTING_UPSTREAM).unwrap();
    // Hidden characters go in the JSON file as they are, never through TOML.
    std::fs::write(&file, serde_json::to_vec(defs).unwrap()).unwrap();
    let args = [&script, &file, &log].map(|p| format!("{:?}", p.display().to_string())).join(", ");
    format!("[[upstreams]]\nname = {name:?}\ncommand = \"python3\"\nargs = [{args}]\n")
}

/// The calls, gets and reads that reached the listing upstream of `dir`, in order.
fn reached(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("reached.log")).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// The names (or URIs) a stateless list shows.
async fn listed(url: &str, method: &str, key: &str, field: &str) -> Vec<String> {
    let r = post(url, &request(json!(1), method, json!({}))).await;
    let items = r.response()["result"][key].as_array().cloned().unwrap_or_else(|| panic!("{method}: {}", r.raw));
    items.iter().map(|i| i[field].as_str().unwrap().to_owned()).collect()
}

/// A legacy session (initialize, initialized) at `url`: its id.
async fn legacy_session(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "pins-test", "version": "1"}}});
    let opened = legacy_post(url, None, &init).await;
    let session = opened.headers["mcp-session-id"].to_str().unwrap().to_owned();
    legacy_post(url, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    session
}

/// `method` with `params`, stateless (`session` `None`) or in a legacy
/// session: the response.
async fn ask(url: &str, session: Option<&str>, method: &str, params: Value) -> Value {
    let r = match session {
        None => post(url, &request(json!(3), method, params)).await,
        Some(s) => {
            let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
            legacy_post(url, Some(s), &body).await
        }
    };
    r.messages.iter().find(|m| m.get("id").is_some()).cloned().unwrap_or_else(|| panic!("an answer: {}", r.raw))
}

/// The code points the gateway guide lists beside the tag characters, U+202A–U+202E
/// and U+200B–U+200D: the bidi controls U+2066–U+2069, U+200E, U+200F,
/// U+061C and the zero-width U+2060, U+FEFF, U+180E.
const LISTED_HIDDEN: [u32; 10] = [0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C, 0x2060, 0xFEFF, 0x180E];

#[actix_rt::test]
async fn each_listed_hidden_character_keeps_a_tool_out_and_its_calls_from_the_upstream() {
    if external("pins::each_listed_hidden_character_keeps_a_tool_out_and_its_calls_from_the_upstream", &["python3"])
        .is_none()
    {
        return;
    }
    let dir = scratch("pins-test-hidden");
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let mut tools = vec![json!({"name": "plain", "description": "reads a file and says so", "inputSchema": schema})];
    for cp in LISTED_HIDDEN {
        let c = char::from_u32(cp).unwrap();
        let description = format!("reads a file{c} and says so");
        tools.push(json!({"name": format!("h{cp:04x}"), "description": description, "inputSchema": schema}));
    }
    // No pins: hidden characters are refused whatever else is configured.
    let toml = format!("[status]\nenabled = true\n{}", listing_upstream(&dir, "up", &json!({"tools": tools})));
    let config = ConfigFile::new("pins-hidden", &toml);
    let server = HttpChild::spawn(&["--catalog", "none", "--config", config.path()]).await;
    let url = server.url.clone();
    until_listed(&url, "up__plain", true).await;
    assert_eq!(call(&url, "up__plain").await["result"]["content"][0]["text"], "called plain");
    let names = tool_names(&url).await;
    assert_eq!(names, ["up__plain"], "only the plain tool is listed");
    let row = upstream_row(&url, "up").await;
    for cp in LISTED_HIDDEN {
        let name = format!("up__h{cp:04x}");
        let refused = call(&url, &name).await;
        assert_eq!(refused["error"]["code"], -32602, "U+{cp:04X}: {refused}");
        let why = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("upstream up") && why.contains(&format!("hidden character (U+{cp:04X})")), "{why}");
        let shown = row["refused"][format!("tool:{name}")].as_str().unwrap_or_default();
        assert!(shown.contains(&format!("U+{cp:04X}")), "U+{cp:04X} on the status page: {row}");
    }
    // The upstream answers in order: the last plain call reached it, none of the refused ones did.
    assert_eq!(call(&url, "up__plain").await["result"]["content"][0]["text"], "called plain");
    assert_eq!(reached(&dir), ["tool plain", "tool plain"], "no refused call reached the upstream");
}

/// The WARN records `upstream item not served` of `items`, by item: read
/// from the server's stderr (JSON lines), up to 10 s.
async fn refusals_logged(server: &mut HttpChild, items: &[&str]) -> std::collections::BTreeMap<String, Value> {
    fn note(line: &str, found: &mut std::collections::BTreeMap<String, Value>) {
        let Ok(record) = serde_json::from_str::<Value>(line) else { return };
        if record["msg"] == "upstream item not served"
            && let Some(item) = record["item"].as_str()
        {
            found.entry(item.to_owned()).or_insert_with(|| record.clone());
        }
    }
    let mut found = std::collections::BTreeMap::new();
    for line in server.early_lines().to_vec() {
        note(&line, &mut found);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !items.iter().all(|i| found.contains_key(*i)) {
        let line = tokio::time::timeout_at(deadline, server.stderr.next_line())
            .await
            .unwrap_or_else(|_| panic!("no refusal logged within 10 s for some of {items:?}: {found:?}"))
            .unwrap()
            .expect("stderr open");
        note(&line, &mut found);
    }
    found
}

#[actix_rt::test]
async fn a_refused_prompt_or_resource_is_unknown_a_refused_tool_never_reaches_the_upstream_and_each_is_logged() {
    if external(
        "pins::a_refused_prompt_or_resource_is_unknown_a_refused_tool_never_reaches_the_upstream_and_each_is_logged",
        &["python3"],
    )
    .is_none()
    {
        return;
    }
    let dir = scratch("pins-test-unknown");
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let defs = json!({
        "tools": [
            {"name": "plain", "description": "a tool", "inputSchema": schema},
            {"name": "pinned", "description": "a tool", "inputSchema": schema},
        ],
        "prompts": [
            {"name": "plain", "description": "a prompt"},
            {"name": "pinned", "description": "a prompt"},
            {"name": "hidden", "description": "a\u{2066} prompt"},
        ],
        "resources": [
            {"uri": "plain://x", "name": "plain", "description": "a resource"},
            {"uri": "pinned://x", "name": "pinned", "description": "a resource"},
            {"uri": "hidden://x", "name": "hidden", "description": "a resource\u{200F}"},
        ],
    });
    // Pins of definitions other than those the upstream lists now: as if it
    // changed them since (a rug pull between two runs).
    let pins = dir.join("pins.json");
    let was = json!({"description": "what it said before"});
    let file = json!({"pinned": {"up": {"tool:pinned": was, "prompt:pinned": was, "resource:pinned://x": was}}});
    std::fs::write(&pins, serde_json::to_vec(&file).unwrap()).unwrap();
    let toml = format!(
        "[status]\nenabled = true\n[gateway]\npins = {:?}\n{}",
        pins.display().to_string(),
        listing_upstream(&dir, "up", &defs)
    );
    let config = ConfigFile::new("pins-unknown", &toml);
    let mut server = HttpChild::spawn(&["--catalog", "none", "--config", config.path(), "--log-format", "json"]).await;
    let url = server.url.clone();
    until_listed(&url, "up__plain", true).await;
    let what = "the upstream's plain prompt and resource are listed";
    wait_for(what, Duration::from_secs(20), Duration::from_millis(100), async || {
        let prompts = listed(&url, "prompts/list", "prompts", "name").await;
        let resources = listed(&url, "resources/list", "resources", "uri").await;
        if prompts.iter().any(|p| p == "up__plain") && resources.iter().any(|r| r == "plain://x") {
            Ok(())
        } else {
            Err(format!("{prompts:?} {resources:?}"))
        }
    })
    .await;

    // Each refusal is logged at WARN, naming the item and why.
    let pinned = "changed since it was pinned";
    let expected: [(&str, &str); 5] = [
        ("tool:up__pinned", pinned),
        ("prompt:up__pinned", pinned),
        ("prompt:up__hidden", "hidden character (U+2066)"),
        ("resource:pinned://x", pinned),
        ("resource:hidden://x", "hidden character (U+200F)"),
    ];
    let items: Vec<&str> = expected.iter().map(|(item, _)| *item).collect();
    let logged = refusals_logged(&mut server, &items).await;
    for (item, why) in expected {
        let record = &logged[item];
        assert_eq!(record["level"], "WARN", "{record}");
        let said = record["why"].as_str().unwrap_or_default();
        assert!(said.contains("upstream up") && said.contains(why), "{item}: {record}");
    }

    // Not listed.
    assert_eq!(tool_names(&url).await, ["up__plain"]);
    assert_eq!(listed(&url, "prompts/list", "prompts", "name").await, ["up__plain"]);
    assert_eq!(listed(&url, "resources/list", "resources", "uri").await, ["plain://x"]);

    // The tool refused by its pin: -32602 with why.
    let refused = call(&url, "up__pinned").await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let why = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("upstream up") && why.contains(pinned) && why.contains("approve"), "{why}");

    // A refused prompt or resource is unknown: answered exactly as one nothing serves, in both eras.
    for session in [None, Some(legacy_session(&url).await)] {
        let era = if session.is_some() { "legacy" } else { "stateless" };
        let s = session.as_deref();
        for name in ["up__pinned", "up__hidden"] {
            let got = ask(&url, s, "prompts/get", json!({"name": name})).await;
            let missing = format!("{name}_missing");
            let unknown = ask(&url, s, "prompts/get", json!({"name": missing})).await;
            let unknown: Value = serde_json::from_str(&unknown.to_string().replace(&missing, name)).unwrap();
            assert!(got.get("error").is_some(), "{era}: {name} is not served: {got}");
            assert_eq!(got["error"], unknown["error"], "{era}: the prompt {name} is as unknown");
        }
        for uri in ["pinned://x", "hidden://x"] {
            let got = ask(&url, s, "resources/read", json!({"uri": uri})).await;
            let missing = "missing://nothing";
            let unknown = ask(&url, s, "resources/read", json!({"uri": missing})).await;
            let unknown: Value = serde_json::from_str(&unknown.to_string().replace(missing, uri)).unwrap();
            assert!(got.get("error").is_some(), "{era}: {uri} is not served: {got}");
            assert_eq!(got["error"], unknown["error"], "{era}: the resource {uri} is as unknown");
        }
        // The plain ones are served.
        let plain = ask(&url, s, "prompts/get", json!({"name": "up__plain"})).await;
        assert_eq!(plain["result"]["messages"][0]["content"]["text"], "prompt plain", "{era}: {plain}");
        let plain = ask(&url, s, "resources/read", json!({"uri": "plain://x"})).await;
        assert_eq!(plain["result"]["contents"][0]["text"], "read", "{era}: {plain}");
    }

    // Nothing refused reached the upstream: it saw only the plain items
    // (the upstream answers in order, so the last plain call, answered, came after every refused one).
    assert_eq!(call(&url, "up__plain").await["result"]["content"][0]["text"], "called plain");
    assert_eq!(
        reached(&dir),
        ["prompt plain", "resource plain://x", "prompt plain", "resource plain://x", "tool plain"],
        "only the served items reached the upstream (under their own names)"
    );
}
