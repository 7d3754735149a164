//! The audit log (`[audit]`) of the real binary over real HTTP: one record
//! per call with its caller, item, upstream, outcome and the digest of the
//! arguments as sent; the chain verified by `actix-mcp audit verify` (and
//! `actix_mcp::audit::verify`), a flipped byte named by its line, lines
//! removed from the start named at line 1, rotation carrying the chain
//! across files, and no audit file left by a server whose build failed.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use futures::StreamExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The server with `[audit]` writing to `file`, and `extra` TOML.
async fn audited_server(dir: &Path, file: &Path, extra: &str, args: &[&str]) -> (HttpChild, ConfigFile) {
    let toml = format!("[audit]\nfile = {:?}\n{extra}", file.display().to_string());
    let config = ConfigFile::new(&format!("audit-{}", dir.file_name().unwrap().to_string_lossy()), &toml);
    let mut all = vec!["--catalog", "everything", "--config", config.path()];
    all.extend_from_slice(args);
    (HttpChild::spawn(&all).await, config)
}

/// A `tools/call` of `name` whose arguments are exactly the text `args`.
async fn call_raw(url: &str, id: u64, name: &str, args: &str) -> Reply {
    let value = request(
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": serde_json::from_str::<Value>(args).unwrap()}),
    );
    let headers = standard_headers(&value);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},"_meta":{}}}}}"#,
        meta()
    );
    post_raw(url, &headers, body.into_bytes()).await
}

/// `actix-mcp audit verify FILES…`: its exit status and output.
fn verify(files: &[PathBuf]) -> (bool, String) {
    verify_with(&[], files)
}

/// `actix-mcp audit verify ARGS… FILES…`: its exit status and output.
fn verify_with(args: &[&str], files: &[PathBuf]) -> (bool, String) {
    let out = std::process::Command::new(binary()).args(["audit", "verify"]).args(args).args(files).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A log of `n` records written by the binary, one `echo` call each, and
/// its lines.
async fn log_of(dir: &Path, n: u64) -> (PathBuf, Vec<String>) {
    let file = dir.join("audit.jsonl");
    let (server, _config) = audited_server(dir, &file, "", &[]).await;
    for i in 1..=n {
        assert_eq!(call_raw(&server.url, i, "echo", &format!(r#"{{"text":"call {i}"}}"#)).await.status, 200);
    }
    server.terminate().await;
    let lines: Vec<String> = std::fs::read_to_string(&file).unwrap().lines().map(str::to_owned).collect();
    assert_eq!(lines.len() as u64, n, "one record per call");
    (file, lines)
}

/// `sed -i 1,Kd FILE`: `file` holds `lines` from the `k`th on (from 0).
fn keep_from(file: &Path, lines: &[String], k: usize) {
    std::fs::write(file, lines[k..].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[actix_rt::test]
async fn a_thousand_calls_are_a_thousand_chained_records_and_a_flipped_byte_is_named() {
    let dir = scratch("audit-test-thousand");
    let file = dir.join("audit.jsonl");
    let (server, _config) = audited_server(&dir, &file, "", &[]).await;
    let url = server.url.clone();
    // 1,000 calls, 8 at a time: echoes (their arguments spaced as a client
    // may send them), a tool error, an unknown tool, a prompt and a read.
    let answers: Vec<Reply> = futures::stream::iter(1..=996u64)
        .map(|i| {
            let url = url.clone();
            async move { call_raw(&url, i, "echo", &format!(r#"{{ "text" : "call {i}" }}"#)).await }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert!(answers.iter().all(|r| r.status == 200 && r.response()["result"]["content"][0]["text"].is_string()));
    assert_eq!(call_raw(&url, 997, "test_error_handling", "{}").await.response()["result"]["isError"], true);
    assert_eq!(call_raw(&url, 998, "no_such_tool", "{}").await.error_code(), Some(-32602));
    let prompt = request(
        json!(999),
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    );
    assert_eq!(post(&url, &prompt).await.status, 200);
    let read = request(json!(1000), "resources/read", json!({"uri": "test://static-text"}));
    assert_eq!(post(&url, &read).await.status, 200);
    server.terminate().await;

    let all = records(&file);
    assert_eq!(all.len(), 1000, "one record per call");
    for (i, r) in all.iter().enumerate() {
        assert_eq!(r["seq"], i as u64 + 1);
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 11, "{r}");
        assert_eq!((r["caller"].as_str(), r["decision"].as_str()), (Some("anonymous"), Some("allow")), "{r}");
        assert!(r["time"].as_str().unwrap().ends_with('Z'), "{r}");
    }
    let echo = all.iter().find(|r| r["name"] == "echo" && r["outcome"] == "ok").expect("an echo record");
    let n = all.iter().filter(|r| r["name"] == "echo" && r["outcome"] == "ok").count();
    assert_eq!(n, 996);
    // The digest is of the arguments' bytes as sent, spaces and all.
    let sent: Vec<String> = (1..=996).map(|i| sha256_hex(format!(r#"{{ "text" : "call {i}" }}"#).as_bytes())).collect();
    assert!(sent.contains(&echo["arguments_sha256"].as_str().unwrap().to_owned()), "{echo}");
    let by_name = |name: &str| all.iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no record of {name}"));
    assert_eq!(by_name("test_error_handling")["outcome"], "tool_error");
    assert_eq!(by_name("no_such_tool")["outcome"], "error");
    assert_eq!(by_name("test_prompt_with_arguments")["method"], "prompts/get");
    let read = by_name("test://static-text");
    assert_eq!(
        (read["method"].as_str(), read["arguments_sha256"].as_str()),
        (Some("resources/read"), Some(sha256_hex(b"{}").as_str()))
    );

    let (ok, out) = verify(std::slice::from_ref(&file));
    assert!(ok, "{out}");
    assert!(out.lines().next() == Some("1000 records intact"), "{out}");
    // One byte flipped in line 517 (not the last line: see the guide on anchoring the head).
    let original = std::fs::read(&file).unwrap();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(original.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1))
        .collect();
    for at in [starts[516] + 3, starts[516] + 120, starts[517] - 2] {
        let mut text = original.clone();
        text[at] ^= 0x01;
        std::fs::write(&file, &text).unwrap();
        let (ok, out) = verify(std::slice::from_ref(&file));
        assert!(!ok, "a flipped byte at {at} must fail: {out}");
        assert!(out.contains("line 517:"), "byte {at}: {out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[actix_rt::test]
async fn rotation_carries_the_chain_and_a_gateway_call_names_its_upstream() {
    let dir = scratch("audit-test-rotation");
    let file = dir.join("audit.jsonl");
    let bin = binary().display().to_string();
    let upstream = format!("up={bin} stdio --catalog everything --log-level error");
    let (server, _config) =
        audited_server(&dir, &file, "max_bytes = 20000\nsync_ms = 0\n", &["--upstream", &upstream]).await;
    let url = server.url.clone();
    let mut upstream_up = false;
    for _ in 0..100 {
        if call_raw(&url, 1, "up__echo", r#"{"text":"up"}"#).await.response()["result"]["content"][0]["text"] == "up" {
            upstream_up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(upstream_up, "the upstream answers");
    for i in 0..200u64 {
        assert_eq!(call_raw(&url, i + 2, "echo", &format!(r#"{{"text":"r{i}"}}"#)).await.status, 200);
    }
    // A legacy session's call is recorded as well.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "legacy-client", "version": "1.0"}}});
    let r = legacy_post(&url, None, &init).await;
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
    legacy_post(&url, Some(&sid), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet", "arguments": {"name": "L"}}});
    assert_eq!(legacy_post(&url, Some(&sid), &call).await.status, 200);
    server.terminate().await;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    let seq_of = |p: &PathBuf| p.extension().and_then(|e| e.to_str()?.parse::<u64>().ok());
    files.retain(|p| p.file_name().unwrap().to_string_lossy().starts_with("audit.jsonl"));
    files.sort_by_key(|p| seq_of(p).unwrap_or(u64::MAX));
    assert!(files.len() >= 3, "rotated at 20,000 bytes: {files:?}");
    let (ok, out) = verify(&files);
    assert!(ok, "{out}");
    let total: usize = files.iter().map(|f| records(f).len()).sum();
    assert!(out.starts_with(&format!("{total} records intact")), "{out}");
    // Each rotated file is named by its first record's seq.
    for f in &files[..files.len() - 1] {
        assert_eq!(records(f)[0]["seq"].as_u64(), seq_of(f), "{f:?}");
    }
    // The gateway's calls name their upstream; the local ones none.
    let all: Vec<Value> = files.iter().flat_map(|f| records(f)).collect();
    let forwarded = all.iter().find(|r| r["name"] == "up__echo" && r["outcome"] == "ok").expect("the forwarded call");
    assert_eq!(forwarded["upstream"], "up");
    assert!(all.iter().filter(|r| r["name"] == "echo").all(|r| r["upstream"] == ""));
    let legacy = all.iter().find(|r| r["name"] == "greet").expect("the legacy session's call");
    assert_eq!(
        (legacy["outcome"].as_str(), legacy["arguments_sha256"].as_str()),
        (Some("ok"), Some(sha256_hex(br#"{"name":"L"}"#).as_str()))
    );
    // Files out of order break the chain where they meet.
    let (ok, out) = verify(&[files[0].clone(), files[2].clone(), files[1].clone()]);
    assert!(!ok && out.contains(&format!("{} line 1: seq ", files[2].display())), "{out}");
    // Without its first file the log is missing its start, unless verified
    // after that file's head.
    let (ok, out) = verify(&files[1..]);
    assert!(!ok && out.contains(&format!("{} line 1: the first record has seq ", files[1].display())), "{out}");
    let first = std::fs::read_to_string(&files[0]).unwrap();
    let head = format!("{}:{}", records(&files[0]).len(), sha256_hex(first.lines().last().unwrap().as_bytes()));
    let (ok, out) = verify_with(&["--after", &head], &files[1..]);
    assert!(ok && out.starts_with(&format!("{} records intact", total - records(&files[0]).len())), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[actix_rt::test]
async fn a_log_missing_its_first_two_lines_is_broken_at_line_1() {
    let dir = scratch("audit-test-prefix");
    let (file, lines) = log_of(&dir, 6).await;
    let files = [file.clone()];
    let (ok, out) = verify(&files);
    assert!(ok && out.starts_with("6 records intact\nhead: seq 6 sha256 "), "{out}");
    keep_from(&file, &lines, 2);
    let why = "the first record has seq 3, not 1: the records before it (seq 1 to 2) are missing";
    let (ok, out) = verify(&files);
    assert!(!ok, "{out}");
    assert_eq!(out.trim_end(), format!("altered: {} line 1: {why}", file.display()));
    let broken = actix_mcp::audit::verify(&files).unwrap_err();
    assert_eq!((broken.file.as_path(), broken.line, broken.why.as_str()), (file.as_path(), 1, why));
    // What is left continues the log after the head of the lines removed
    // (as `verify` printed it, or the server logged it), and after no other.
    let anchor = actix_mcp::audit::Head { seq: 2, hash: sha256_hex(lines[1].as_bytes()) };
    let intact = actix_mcp::audit::verify_after(&anchor, &files).unwrap();
    assert_eq!((intact.records, intact.head_seq), (4, 6));
    let (ok, out) = verify_with(&["--after", &format!("2:{}", anchor.hash)], &files);
    assert!(ok && out.starts_with("4 records intact\nhead: seq 6 sha256 "), "{out}");
    let (ok, out) = verify_with(&["--after", &format!("1:{}", sha256_hex(lines[0].as_bytes()))], &files);
    assert!(!ok && out.contains("line 1: the first record has seq 3, not 2"), "{out}");
    // An anchor that is not SEQ:SHA256 is a usage error.
    let out = std::process::Command::new(binary()).args(["audit", "verify", "--after", "2"]).arg(&file).output();
    assert_eq!(out.unwrap().status.code(), Some(2));
}

#[actix_rt::test]
async fn a_log_missing_its_first_line_is_broken_at_line_1() {
    let dir = scratch("audit-test-first-line");
    let (file, lines) = log_of(&dir, 4).await;
    keep_from(&file, &lines, 1);
    let files = [file.clone()];
    let why = "the first record has seq 2, not 1: the record before it (seq 1) is missing";
    let (ok, out) = verify(&files);
    assert!(!ok, "{out}");
    assert_eq!(out.trim_end(), format!("altered: {} line 1: {why}", file.display()));
    let broken = actix_mcp::audit::verify(&files).unwrap_err();
    assert_eq!((broken.line, broken.why.as_str()), (1, why));
}

#[actix_rt::test]
async fn a_build_that_fails_leaves_no_audit_file() {
    let dir = scratch("audit-test-failed-build");
    let file = dir.join("audit.jsonl");
    let mut config = actix_mcp::config::Config::default();
    config.audit.file = file.display().to_string();
    // The policy is loaded after the audit log opened.
    config.policy.file = dir.join("missing.cedar").display().to_string();
    let e = actix_mcp::McpServer::builder(actix_mcp::server_info!()).config(config).build().unwrap_err();
    assert!(e.to_string().contains("policy.file"), "{e}");
    assert!(!file.exists(), "the audit file is removed with the server that was not built");
}
