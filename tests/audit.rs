//! The audit log (`[audit]`) of the real binary over real HTTP: one record
//! per call with its caller, item, upstream, outcome and the digest of the
//! arguments as sent; the chain verified by `actix-mcp audit verify` (and
//! `actix_mcp::audit::verify`), a flipped byte named by its line, lines
//! removed from the start named at line 1, rotation carrying the chain
//! across files, and no audit file left by a server whose build failed;
//! cancelled calls, a disk that stalls (`when_full` "block" and "drop"),
//! `max_bytes = 0`, and the heads the server logs.

use crate::common;

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

/// `audit verify` on a file that is not there says it cannot be read (exit
/// 2, on stderr), not that the log was altered: nothing is known of it.
#[test]
fn a_missing_file_is_unreadable_not_altered() {
    let dir = scratch("audit-test-missing");
    let missing = dir.join("audit.jsonl.9");
    let out = std::process::Command::new(binary()).args(["audit", "verify"]).arg(&missing).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(!stdout.contains("altered"), "{stdout}");
    assert!(stderr.contains(&format!("{} cannot be read: ", missing.display())), "{stderr}");
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

/// `actix-mcp serve --catalog everything` with `[audit] file = FILE`, run
/// until it exits by itself (within 30 s): its exit status and stderr.
async fn serve_until_it_exits(file: &Path) -> (std::process::ExitStatus, String) {
    let config = ConfigFile::new("audit-refused", &format!("[audit]\nfile = {:?}\n", file.display().to_string()));
    let child = tokio::process::Command::new(binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--catalog", "everything", "--config", config.path()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await;
    let out = out.expect("it exits by itself within 30 s").unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// "… and refuses to start on one whose last line is cut short or is not a
/// record" (operating guide, "Audit log"): the binary started on such a
/// log — its live file, or, the live file missing, the rotated file it
/// would continue — exits with status 1 without listening, naming the file
/// and why on stderr, and leaves the log as it found it (nothing appended,
/// no live file created). The log is three records the binary wrote.
#[actix_rt::test]
async fn a_server_refuses_to_start_on_a_log_whose_last_line_is_cut_short_or_not_a_record() {
    let dir = scratch("audit-test-refused");
    let (file, lines) = log_of(&dir, 3).await;
    let whole: String = lines[..2].iter().map(|l| format!("{l}\n")).collect();
    let cut = format!("{whole}{}", &lines[2][..lines[2].len() / 2]);
    let not_a_record = format!("{whole}{}\nnot a record\n", lines[2]);
    let rotated = dir.join("audit.jsonl.1");
    let cut_short = "the last line is cut short (no newline); move the file aside to start a new log";
    let cases = [
        ("the live file's last line cut short", &file, cut.clone(), cut_short),
        ("the live file's last line not a record", &file, not_a_record, "the last line is not an audit record ("),
        ("the rotated file continued, its last line cut short", &rotated, cut, cut_short),
    ];
    for (case, path, text, why) in cases {
        let _ = std::fs::remove_file(&file);
        std::fs::write(path, &text).unwrap();
        let (status, stderr) = serve_until_it_exits(&file).await;
        assert_eq!(status.code(), Some(1), "{case}: {stderr}");
        let said = format!("actix-mcp: invalid configuration: audit.file: {}: {why}", path.display());
        assert!(stderr.contains(&said), "{case}: {said:?} in:\n{stderr}");
        assert!(!stderr.contains("listening on"), "{case}: it listened:\n{stderr}");
        assert_eq!(std::fs::read_to_string(path).unwrap(), text, "{case}: the log is left as it was");
        if path != &file {
            assert!(!file.exists(), "{case}: no live file was created");
        }
        std::fs::remove_file(path).unwrap();
    }
}

/// Waits until `file` holds at least `n` whole records and returns them
/// (fails after 10 s).
async fn records_eventually(file: &Path, n: usize) -> Vec<Value> {
    let what = format!("{n} records in {}", file.display());
    wait_for(&what, Duration::from_secs(10), Duration::from_millis(20), async || {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let whole = &text[..text.rfind('\n').map_or(0, |at| at + 1)];
        let all: Vec<Value> = whole.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        if all.len() >= n {
            Ok(all)
        } else {
            Err(format!("{} records", all.len()))
        }
    })
    .await
}

/// The files of the log whose live file is `dir/audit.jsonl`: the rotated
/// ones by their `SEQ`, the live one last.
fn log_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    let seq_of = |p: &PathBuf| p.extension().and_then(|e| e.to_str()?.parse::<u64>().ok());
    files.retain(|p| p.file_name().unwrap().to_string_lossy().starts_with("audit.jsonl"));
    files.sort_by_key(|p| seq_of(p).unwrap_or(u64::MAX));
    files
}

/// One line of the server's log under `--log-format json`.
fn json_line(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"))
}

/// An echo call whose arguments are `{"text":"call I"}`, exactly.
async fn echo(url: &str, i: u64) -> Reply {
    call_raw(url, i, "echo", &echo_args(i)).await
}

fn echo_args(i: u64) -> String {
    format!(r#"{{"text":"call {i}"}}"#)
}

#[actix_rt::test]
async fn a_cancelled_call_is_recorded_as_cancelled() {
    let dir = scratch("audit-test-cancelled");
    let file = dir.join("audit.jsonl");
    let (server, _config) = audited_server(&dir, &file, "[shutdown]\ndrain_ms = 0\n", &[]).await;
    let args = json!({"ms": 60000});
    // Stateless: the caller closes the call's stream while it runs.
    let mut call = request(json!(1), "tools/call", json!({"name": "sleep", "arguments": args}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    let mut stream = SseReader::open(&server.url, &call).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/progress", "the call runs");
    drop(stream);
    let first = records_eventually(&file, 1).await;
    // A legacy session: the call cancelled with `notifications/cancelled`.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "legacy-client", "version": "1.0"}}});
    let r = legacy_post(&server.url, None, &init).await;
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
    legacy_post(&server.url, Some(&sid), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "sleep", "arguments": args, "_meta": {"progressToken": "q"}}});
    let mut running = SseReader::open_with(&server.url, &call, &[("Mcp-Session-Id", &sid)]).await;
    assert_eq!(running.next().await.unwrap()["method"], "notifications/progress", "the call runs");
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "bored"}});
    assert_eq!(legacy_post(&server.url, Some(&sid), &cancel).await.status, 202);
    while let Some(m) = running.next().await {
        assert!(m.get("id").is_none(), "a cancelled call sends no result: {m}");
    }
    let all = records_eventually(&file, 2).await;
    server.terminate().await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(all.len(), 2, "{all:?}");
    let digest = sha256_hex(br#"{"ms":60000}"#);
    for (r, era) in all.iter().zip(["stateless, stream closed", "legacy, notifications/cancelled"]) {
        assert_eq!(
            (r["method"].as_str(), r["name"].as_str(), r["decision"].as_str(), r["outcome"].as_str()),
            (Some("tools/call"), Some("sleep"), Some("allow"), Some("cancelled")),
            "{era}: {r}"
        );
        assert_eq!(r["arguments_sha256"].as_str(), Some(digest.as_str()), "{era}: {r}");
    }
    let (ok, out) = verify(std::slice::from_ref(&file));
    assert!(ok && out.starts_with("2 records intact"), "{out}");
}

/// A disk that takes nothing until the test reads it: `path` made a FIFO
/// the test holds open for reading and writing (so that neither the
/// server's opening it for appending nor ours waits for the other end),
/// with one empty line in it for the server's look at the log's first
/// line (an empty log). Nothing the server writes is taken until
/// [`take_all`]: past the pipe's 64 KiB and the writer's buffer, the audit
/// writer waits, as on a disk that stalled.
fn stalled_disk(path: &Path) -> std::fs::File {
    use std::io::Write;
    let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
    let mut fifo = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    fifo.write_all(b"\n").unwrap();
    fifo
}

/// From now on, everything written to `fifo` is read into the buffer
/// returned (by a thread that never ends: the test holds the writing end
/// too).
fn take_all(fifo: &std::fs::File) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    use std::io::Read;
    let mut reader = fifo.try_clone().unwrap();
    let taken = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = taken.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    taken
}

fn lines_in(taken: &std::sync::Mutex<Vec<u8>>) -> u64 {
    taken.lock().unwrap().iter().filter(|b| **b == b'\n').count() as u64
}

#[actix_rt::test]
async fn when_full_block_a_call_waits_for_the_disk_and_no_record_is_lost() {
    let dir = scratch("audit-test-block");
    let path = dir.join("audit.jsonl");
    let fifo = stalled_disk(&path);
    let extra = "queue = 4\nwhen_full = \"block\"\n[shutdown]\ndrain_ms = 0\n";
    let (server, _config) = audited_server(&dir, &path, extra, &[]).await;
    let url = server.url.clone();
    // One call at a time, until one is not answered: the writer waits for
    // the disk, the queue is full, and the call waits for room in it.
    let mut stalled = None;
    for i in 1..=3000u64 {
        let at = url.clone();
        let mut call = actix_rt::spawn(async move { echo(&at, i).await });
        let answered = tokio::time::timeout(Duration::from_secs(5), &mut call).await;
        match answered {
            Ok(reply) => assert_eq!(reply.unwrap().status, 200, "call {i}"),
            Err(_) => {
                stalled = Some((i, call));
                break;
            }
        }
    }
    let (waiting, call) = stalled.expect("with a disk that takes nothing, a call waits (within 3,000 calls)");
    // The disk takes again: the call that waited is answered, and the ones after it.
    let taken = take_all(&fifo);
    assert_eq!(call.await.unwrap().status, 200, "the call that waited (call {waiting}) is answered");
    let total = waiting + 100;
    for i in waiting + 1..=total {
        assert_eq!(echo(&url, i).await.status, 200, "call {i}");
    }
    wait_for("every call's record on the disk", Duration::from_secs(20), Duration::from_millis(20), async || {
        let n = lines_in(&taken);
        if n >= total {
            Ok(())
        } else {
            Err(format!("{n} of {total} records"))
        }
    })
    .await;
    assert_eq!(counter(&url, "mcp_server_audit_dropped_total").await, 0, "no record lost");
    assert!(counter(&url, "mcp_server_audit_queue_full_total").await >= 1, "the queue was full while the call waited");
    server.terminate().await;
    // Every call's record, once, chained.
    let copy = dir.join("taken.jsonl");
    std::fs::write(&copy, &*taken.lock().unwrap()).unwrap();
    let all = records(&copy);
    assert_eq!(all.len() as u64, total, "one record per call");
    let digests: std::collections::HashSet<&str> =
        all.iter().map(|r| r["arguments_sha256"].as_str().unwrap()).collect();
    for i in 1..=total {
        assert!(digests.contains(sha256_hex(echo_args(i).as_bytes()).as_str()), "no record of call {i}");
    }
    let (ok, out) = verify(std::slice::from_ref(&copy));
    assert!(ok && out.starts_with(&format!("{total} records intact")), "{out}");
}

#[actix_rt::test]
async fn when_full_drop_a_call_never_waits_and_each_record_lost_is_counted() {
    let dir = scratch("audit-test-drop");
    let path = dir.join("audit.jsonl");
    let fifo = stalled_disk(&path);
    let extra = "queue = 4\nwhen_full = \"drop\"\n[shutdown]\ndrain_ms = 0\n";
    let (server, _config) = audited_server(&dir, &path, extra, &[]).await;
    let url = server.url.clone();
    // The disk takes nothing all along (it would hold some 450 records):
    // every call is answered all the same.
    let total = 1200u64;
    for i in 1..=total {
        let reply = tokio::time::timeout(Duration::from_secs(5), echo(&url, i)).await;
        let reply = reply.unwrap_or_else(|_| panic!("call {i} waited for the disk"));
        assert_eq!(reply.status, 200, "call {i}");
    }
    assert!(counter(&url, "mcp_server_audit_dropped_total").await > 0, "records were dropped");
    // The disk takes again: what was not dropped is written, what was is counted.
    let taken = take_all(&fifo);
    let what = "the records written and those counted as dropped make every call";
    let (written, dropped) = wait_for(what, Duration::from_secs(20), Duration::from_millis(50), async || {
        let (written, dropped) = (lines_in(&taken), counter(&url, "mcp_server_audit_dropped_total").await);
        if written + dropped == total {
            Ok((written, dropped))
        } else {
            Err(format!("{written} written + {dropped} dropped != {total} calls"))
        }
    })
    .await;
    assert!(written > 0 && dropped > 0, "{written} written, {dropped} dropped");
    server.terminate().await;
    assert_eq!(lines_in(&taken), written, "nothing written after the calls were all recorded or dropped");
    // What was written is a chain of its own, without gaps.
    let copy = dir.join("taken.jsonl");
    std::fs::write(&copy, &*taken.lock().unwrap()).unwrap();
    let (ok, out) = verify(std::slice::from_ref(&copy));
    assert!(ok && out.starts_with(&format!("{written} records intact")), "{out}");
}

#[actix_rt::test]
async fn max_bytes_0_never_rotates() {
    use std::io::Write;
    let dir = scratch("audit-test-never-rotated");
    let file = dir.join("audit.jsonl");
    // A log already past the default max_bytes (64 MiB): 1,030 records of
    // 64 KiB names, chained.
    let mut head = actix_mcp::audit::Head::default();
    let name = "x".repeat(64 * 1024);
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        for _ in 0..1030 {
            let record = actix_mcp::audit::Record {
                seq: 0,
                time: "2026-12-05T10:00:00.123Z".into(),
                caller: "anonymous".into(),
                method: "tools/call".into(),
                name: name.clone(),
                upstream: String::new(),
                decision: "allow".into(),
                outcome: "ok".into(),
                duration_ms: 0,
                arguments_sha256: sha256_hex(b"{}"),
                prev: String::new(),
            };
            writeln!(out, "{}", head.append(record)).unwrap();
        }
        out.flush().unwrap();
    }
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 64 * 1024 * 1024, "{size} bytes");
    let (server, _config) = audited_server(&dir, &file, "max_bytes = 0\n[shutdown]\ndrain_ms = 0\n", &[]).await;
    for i in 1..=20u64 {
        assert_eq!(echo(&server.url, i).await.status, 200);
    }
    server.terminate().await;
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["audit.jsonl"], "max_bytes = 0: never rotated");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1050, "the calls' records follow in the same file");
    let first_new: Value = serde_json::from_str(lines[1030]).unwrap();
    assert_eq!((first_new["seq"].as_u64(), first_new["prev"].as_str()), (Some(1031), Some(head.hash.as_str())));
    let last: Value = serde_json::from_str(lines[1049]).unwrap();
    assert_eq!(
        (last["seq"].as_u64(), last["prev"].as_str()),
        (Some(1050), Some(sha256_hex(lines[1048].as_bytes()).as_str()))
    );
    // The same log with the default max_bytes is rotated at the next record:
    // what 0 left alone was past the limit.
    let (server, _config2) = audited_server(&dir, &file, "[shutdown]\ndrain_ms = 0\n", &[]).await;
    assert_eq!(echo(&server.url, 21).await.status, 200);
    let rotated = dir.join("audit.jsonl.1");
    wait_for("the rotation at the default max_bytes", Duration::from_secs(10), Duration::from_millis(20), async || {
        if rotated.exists() {
            Ok(())
        } else {
            Err(format!("{:?}", std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>()))
        }
    })
    .await;
    server.terminate().await;
}

#[actix_rt::test]
async fn the_head_is_logged_when_the_log_opens_at_each_rotation_and_when_it_closes() {
    let dir = scratch("audit-test-heads");
    let file = dir.join("audit.jsonl");
    let extra = "max_bytes = 2000\nsync_ms = 0\n[shutdown]\ndrain_ms = 0\n";
    let (mut server, _config) = audited_server(&dir, &file, extra, &["--log-format", "json"]).await;
    let open = json_line(&server.stderr_until(r#""msg":"audit log open""#).await);
    assert_eq!(
        (open["level"].as_str(), open["seq"].as_u64(), open["head_sha256"].as_str()),
        (Some("INFO"), Some(0), Some(actix_mcp::audit::GENESIS)),
        "{open}"
    );
    let calls = 40u64;
    for i in 1..=calls {
        assert_eq!(echo(&server.url, i).await.status, 200);
    }
    let pid = server.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let mut rotations = Vec::new();
    let closed = loop {
        let line = json_line(&server.stderr_until(r#""msg":"audit log "#).await);
        match line["msg"].as_str() {
            Some("audit log rotated") => rotations.push(line),
            Some("audit log closed") => break line,
            _ => {}
        }
    };
    let status = tokio::time::timeout(Duration::from_secs(15), server.child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
    let files = log_files(&dir);
    assert!(files.len() >= 3, "rotated at 2,000 bytes: {files:?}");
    assert_eq!(rotations.len(), files.len() - 1, "one line per rotation: {rotations:#?}");
    // Each rotation's head is the rotated file's last line.
    for (logged, rotated) in rotations.iter().zip(&files) {
        let name = Path::new(logged["rotated"].as_str().expect("the rotated file")).file_name();
        assert_eq!(name, rotated.file_name(), "{logged}");
        let text = std::fs::read_to_string(rotated).unwrap();
        let last = text.lines().last().unwrap();
        let record: Value = serde_json::from_str(last).unwrap();
        assert_eq!(
            (logged["level"].as_str(), logged["seq"].as_u64(), logged["head_sha256"].as_str()),
            (Some("INFO"), record["seq"].as_u64(), Some(sha256_hex(last.as_bytes()).as_str())),
            "{logged}"
        );
    }
    // The closing head is the log's last line, and `verify` prints it too.
    let all: Vec<String> = files
        .iter()
        .flat_map(|f| std::fs::read_to_string(f).unwrap().lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    assert_eq!(all.len() as u64, calls);
    let head = sha256_hex(all.last().unwrap().as_bytes());
    assert_eq!(
        (closed["level"].as_str(), closed["seq"].as_u64(), closed["head_sha256"].as_str()),
        (Some("INFO"), Some(calls), Some(head.as_str())),
        "{closed}"
    );
    let (ok, out) = verify(&files);
    assert!(ok && out.contains(&format!("head: seq {calls} sha256 {head}")), "{out}");
    // A head the server logged at a rotation anchors the files after it
    // (`--after SEQ:SHA256`), and no other head does.
    let (seq, hash) = (rotations[0]["seq"].as_u64().unwrap(), rotations[0]["head_sha256"].as_str().unwrap());
    let (ok, out) = verify_with(&["--after", &format!("{seq}:{hash}")], &files[1..]);
    assert!(ok && out.starts_with(&format!("{} records intact", calls - seq)), "{out}");
    let last_digit = if hash.ends_with('0') { "1" } else { "0" };
    let forged = format!("{seq}:{}{last_digit}", &hash[..63]);
    let (ok, out) = verify_with(&["--after", &forged], &files[1..]);
    assert!(!ok && out.contains(&format!("{} line 1: ", files[1].display())), "{out}");
    // Opened again, the log says where it goes on from: the head it closed at.
    let (mut again, _config2) = audited_server(&dir, &file, extra, &["--log-format", "json"]).await;
    let reopened = json_line(&again.stderr_until(r#""msg":"audit log open""#).await);
    assert_eq!(
        (reopened["seq"].as_u64(), reopened["head_sha256"].as_str()),
        (Some(calls), Some(head.as_str())),
        "{reopened}"
    );
    again.terminate().await;
}

/// The line `audit verify` names in its output (`altered: FILE line N: …`).
fn named_line(out: &str, file: &Path) -> usize {
    let rest = out.trim_end().strip_prefix(&format!("altered: {} line ", file.display()));
    let number = rest.and_then(|r| r.split(':').next()).and_then(|n| n.parse().ok());
    number.unwrap_or_else(|| panic!("a broken chain named by its line: {out}"))
}

/// `file` holds exactly `lines`, each with its newline.
fn write_lines(file: &Path, lines: &[String]) {
    std::fs::write(file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

/// A record's line altered as a forger would: its call made to look failed.
fn tampered(line: &str) -> String {
    assert!(line.contains(r#""outcome":"ok""#), "an ok record: {line}");
    line.replace(r#""outcome":"ok""#, r#""outcome":"error""#)
}

/// The operating guide: `audit verify` names "the line altered … when one
/// was; when several lines in a row were altered, the first break shows
/// only that the line it names or the one before it was". In a log of six
/// records: line 4 alone altered is named; lines 3 and 4 altered (their
/// content; or line 4's `prev` re-linked to the altered line 3 as well)
/// are named at line 3 or 4; lines 3 to 5 (re-linked or not) at a line
/// that was altered or follows one. `actix_mcp::audit::verify` names the
/// same line.
#[actix_rt::test]
async fn several_lines_altered_in_a_row_are_named_at_one_of_them_or_the_line_after_one() {
    let dir = scratch("audit-test-run-altered");
    let (file, lines) = log_of(&dir, 6).await;
    let files = [file.clone()];
    // The lines altered (from 1), and whether each after the first was
    // re-chained to its altered predecessor (its `prev` rewritten).
    let cases: [(&[usize], bool); 5] =
        [(&[4], false), (&[3, 4], false), (&[3, 4], true), (&[3, 4, 5], false), (&[3, 4, 5], true)];
    for (altered, relinked) in cases {
        let mut edited = lines.clone();
        for &n in altered {
            edited[n - 1] = tampered(&lines[n - 1]);
        }
        if relinked {
            for pair in altered.windows(2) {
                let (before, at) = (pair[0] - 1, pair[1] - 1);
                let (was, now) = (sha256_hex(lines[before].as_bytes()), sha256_hex(edited[before].as_bytes()));
                assert!(edited[at].contains(&was), "line {} links to line {}: {}", at + 1, before + 1, edited[at]);
                edited[at] = edited[at].replace(&was, &now);
            }
        }
        write_lines(&file, &edited);
        let what = format!("lines {altered:?} altered{}", if relinked { ", re-chained" } else { "" });
        let (ok, out) = verify(&files);
        assert!(!ok, "{what}: {out}");
        let named = named_line(&out, &file);
        let broken = actix_mcp::audit::verify(&files).expect_err("a broken chain");
        assert_eq!((broken.file.as_path(), broken.line), (file.as_path(), named), "{what}: the library and {out}");
        if let [only] = altered {
            assert_eq!(named, *only, "{what}: the line altered is named: {out}");
        } else {
            assert!(
                altered.contains(&named) || altered.contains(&(named - 1)),
                "{what}: neither line {named} nor the one before it was altered: {out}"
            );
        }
        if altered.len() == 2 {
            assert!(altered.contains(&named), "{what}: named line {named}, not one of the two: {out}");
        }
    }
    write_lines(&file, &lines);
    let (ok, out) = verify(&files);
    assert!(ok && out.starts_with("6 records intact"), "the log as written: {out}");
}
