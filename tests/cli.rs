//! The `actix-mcp` binary's command-line contract, over real HTTP.

use crate::common;

use common::*;
use serde_json::json;

#[actix_rt::test]
async fn serve_prints_the_bound_address_and_serves_until_terminated() {
    let served = HttpChild::spawn(&["--catalog", "everything", "--log-format", "json"]).await;
    // Under --log-format json every line is JSON, the address line too.
    for line in served.early_lines() {
        assert!(serde_json::from_str::<serde_json::Value>(line).is_ok(), "not JSON: {line}");
    }
    let address: serde_json::Value = serde_json::from_str(&served.address_line).expect("the address line is JSON");
    assert_eq!(address["msg"], format!("listening on {}", served.url));
    assert_eq!((address["level"].as_str(), address["url"].as_str()), (Some("INFO"), Some(served.url.as_str())));
    let (mut child, url) = (served.child, served.url);
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let r = post(&url, &request(json!(1), "server/discover", json!({}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.response()["result"]["resultType"], "complete");
    // An open subscription receives its completion result at SIGTERM.
    let listen = request(json!("bye"), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    // SIGTERM → graceful exit.
    let pid = child.id().unwrap() as i32;
    let killed = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let done = stream.next().await.expect("the completion result");
    assert_eq!(done["id"], "bye");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "bye");
    assert!(stream.next().await.is_none(), "then the stream closes");
    let status = tokio::time::timeout(std::time::Duration::from_secs(15), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn help_documents_every_flag() {
    let out = std::process::Command::new(binary()).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--config", "--bind", "--catalog", "--log-level", "--log-format"] {
        assert!(help.contains(flag), "serve --help lacks {flag}:\n{help}");
    }
    let out = std::process::Command::new(binary()).args(["stdio", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--config", "--catalog"] {
        assert!(help.contains(flag), "stdio --help lacks {flag}:\n{help}");
    }
}

/// The commands that do not serve list only their own options: no server
/// flag in their `--help`, and one given to them is refused.
#[test]
fn commands_that_do_not_serve_take_only_their_own_options() {
    for command in [&["audit", "verify"][..], &["gateway", "approve"], &["client"]] {
        let out = std::process::Command::new(binary()).args(command).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{command:?} --help: {help}");
        for flag in ["--bind", "--catalog", "--upstream", "--root", "--skills", "--h2c"] {
            assert!(!help.contains(flag), "{command:?} --help lists the server's {flag}:\n{help}");
        }
    }
    let out = std::process::Command::new(binary()).args(["audit", "verify", "--bind", "x:1", "f"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    // Each serving command still takes them after its name.
    let out = std::process::Command::new(binary()).args(["stdio", "--catalog", "nope"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("catalog"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let out = std::process::Command::new(binary()).args(["serve", "--bind", "not-an-address"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("http.bind"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = std::process::Command::new(binary()).args(["stdio", "--catalog", "nope"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown catalog"));
    // A setting this build cannot serve (h2c in a build without it) is
    // refused naming the feature: tests/embed_lean.rs checks that on a
    // build without default features.
}

#[actix_rt::test]
async fn a_config_file_names_a_wrong_word_and_keeps_its_files_beside_it() {
    // A valid word in another case is refused, naming its setting.
    let wrong = ConfigFile::new("cli-wrong-word", "[auth]\nmode = \"OAuth\"\n");
    let out = std::process::Command::new(binary()).args(["serve", "--config", wrong.path()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(r#"auth.mode must be one of "none", "oauth", "api_key", not "OAuth""#), "{stderr}");
    // A relative audit.file is beside the file, not in the working directory.
    let config = ConfigFile::new("cli-beside", "[audit]\nfile = \"beside.jsonl\"\nsync_ms = 0\n");
    let audit = std::path::Path::new(config.path()).parent().unwrap().join("beside.jsonl");
    let server = HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await;
    let call = request(json!(1), "tools/call", json!({"name": "echo", "arguments": {"text": "beside"}}));
    assert_eq!(post(&server.url, &call).await.status, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&audit).is_ok_and(|log| log.contains("echo")) {
        assert!(std::time::Instant::now() < deadline, "no record in {}", audit.display());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!std::path::Path::new("beside.jsonl").exists(), "a record in the working directory");
}

/// Log records name the server as configured, not the program.
#[actix_rt::test]
async fn log_records_name_the_configured_server() {
    let config = ConfigFile::new("cli-service-name", "[server]\nname = \"notes\"\n");
    let served =
        HttpChild::spawn(&["--catalog", "everything", "--log-format", "json", "--config", config.path()]).await;
    for line in served.early_lines().iter().chain([&served.address_line]) {
        // As written: a key given twice would read as its last value.
        assert!(line.contains(r#""service":"notes""#), "{line}");
        assert!(!line.contains(r#""service":"actix-mcp""#), "{line}");
    }
}

/// With OAuth on, the server must know the URL clients reach it at: without
/// `http.public_url` (or `auth.resource`) it refuses to start with a message
/// naming the key; with it, the start line names the resource advertised.
#[actix_rt::test]
async fn oauth_needs_the_public_url_and_says_what_it_advertises() {
    let without = ConfigFile::new("oauth-no-url", "[auth]\nmode = \"oauth\"\nissuers = [\"https://id.example.com\"]\n");
    let out = std::process::Command::new(binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--config", without.path()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("http.public_url"), "{stderr}");
    let with = ConfigFile::new(
        "oauth-url",
        "[http]\npublic_url = \"https://mcp.example.com/mcp\"\n[auth]\nmode = \"oauth\"\nissuers = [\"https://id.example.com\"]\n",
    );
    let mut served = HttpChild::spawn(&["--config", with.path()]).await;
    let line = served.stderr_until("authorization").await;
    assert!(line.contains("resource: https://mcp.example.com/mcp"), "{line}");
    assert!(line.contains("issuers: https://id.example.com"), "{line}");
}

#[test]
fn a_port_in_use_is_a_clear_error_without_a_panic() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = std::process::Command::new(binary()).args(["serve", "--bind", &addr]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Finding 13: at SIGTERM, a request that outlives the shutdown timeout
/// gets a JSON-RPC error on its stream before the stream closes, instead of
/// a cut stream with no response.
#[actix_rt::test]
async fn a_request_running_at_shutdown_gets_an_error_response() {
    let config = ConfigFile::new("shutdown", "[http]\nshutdown_timeout_secs = 2\n");
    let served = HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await;
    let (mut child, url) = (served.child, served.url);
    let mut call = request(json!(7), "tools/call", json!({"name": "sleep", "arguments": {"ms": 30000}}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    let mut stream = SseReader::open(&url, &call).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/progress");
    let pid = child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let last = loop {
        let message = stream.next().await.expect("a response before the stream ends");
        if message.get("id").is_some() {
            break message;
        }
    };
    assert_eq!(last["id"], 7, "{last}");
    assert_eq!(last["error"]["code"], -32603, "{last}");
    assert_eq!(last["error"]["message"], "server shutting down", "{last}");
    assert!(stream.next().await.is_none(), "then the stream closes");
    let status = tokio::time::timeout(std::time::Duration::from_secs(15), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
}

/// Shutdown under load: SIGTERM while 256 connections each have a request
/// running and listen streams are open. Every request gets its response or
/// a JSON-RPC error (here: the requests outlive the shutdown timeout, so
/// -32603 "server shutting down"), every listen stream its completion
/// result, and the process exits cleanly.
#[actix_rt::test]
async fn sigterm_under_256_connections_answers_everything() {
    let config = ConfigFile::new("load-stop", "[http]\nshutdown_timeout_secs = 3\n");
    let served = HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await;
    // Its log is read to the end, so that its stderr never fills.
    let HttpChild { mut child, url, mut stderr, .. } = served;
    actix_rt::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let mut listens = Vec::new();
    for i in 0..4 {
        let body = request(
            json!(format!("listen-{i}")),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        );
        let mut s = SseReader::open(&url, &body).await;
        assert_eq!(s.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
        listens.push(s);
    }
    // 256 calls, each on a connection of its own, each with a progress
    // notification as soon as it runs (so we know it is in flight).
    let mut calls = Vec::new();
    for i in 0..256 {
        let mut call = request(json!(i), "tools/call", json!({"name": "sleep", "arguments": {"ms": 20000}}));
        call["params"]["_meta"]["progressToken"] = json!(i);
        let mut s = SseReader::open(&url, &call).await;
        assert_eq!(s.next().await.unwrap()["method"], "notifications/progress", "call {i} runs");
        calls.push(s);
    }
    let pid = child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    for (i, mut s) in listens.into_iter().enumerate() {
        let done = s.next().await.expect("the completion result");
        assert_eq!(done["id"], format!("listen-{i}"), "{done}");
        assert_eq!(done["result"]["resultType"], "complete", "{done}");
    }
    let answers = futures::future::join_all(calls.into_iter().enumerate().map(|(i, mut s)| async move {
        loop {
            let m = s.next().await.unwrap_or_else(|| panic!("call {i}: the stream ended without a response"));
            if m.get("id").is_some() {
                return m;
            }
        }
    }))
    .await;
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["id"], i, "{a}");
        assert_eq!(a["error"]["code"], -32603, "{a}");
        assert_eq!(a["error"]["message"], "server shutting down", "{a}");
    }
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
}

/// The `fs` catalog says at start, in one line, what it exposes: the
/// absolute directory (with the default `root = "."`, the one the process
/// started in) and what is left out.
#[actix_rt::test]
async fn the_fs_catalog_names_what_it_exposes_at_start() {
    let mut served = HttpChild::spawn(&[]).await;
    let line = served.stderr_until("serving every file under a directory").await;
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    assert!(line.contains("(the directory the process started in)"), "{line}");
    assert!(line.contains(&format!("root: {}", cwd.display())), "{line}");
    assert!(line.contains("exclude: **/.git/**"), "{line}");
    drop(served);

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut served = HttpChild::spawn(&["--root", root.to_str().unwrap()]).await;
    let line = served.stderr_until("serving every file under a directory").await;
    assert!(!line.contains("started in") && line.contains(&format!("root: {}", root.display())), "{line}");
}

/// The signals are handled from before the address is announced: a SIGTERM
/// that comes right after the address line shuts down gracefully (exit 0),
/// never by the signal's default action.
#[actix_rt::test]
async fn sigterm_right_after_the_address_line_shuts_down_gracefully() {
    let config = ConfigFile::new("cli-early-sigterm", "[shutdown]\ndrain_ms = 0\n");
    for _ in 0..10 {
        HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await.terminate().await;
    }
}
