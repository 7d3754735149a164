//! The client's bounds against servers written to misbehave: messages
//! that never end (a stdio line, an HTTP body, an SSE event), a handshake
//! nobody answers, pagination that never ends, lines that are not UTF-8,
//! a discover answer that is not one, answers that are not UTF-8, and a
//! server that outlives the shell that started it. Real child processes
//! (`tests/hostile/upstream.py`) and real loopback TCP.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_mcp::client::{Client, ClientError, ClientOptions};
use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the raw HTTP server answers a POST with.
enum Answer {
    /// This content type and this whole body.
    Whole(&'static str, Vec<u8>),
    /// This content type, this start, then `x` until the peer stops reading
    /// (bounded at 256 MiB).
    Endless(&'static str, Vec<u8>),
    /// Nothing, ever.
    Silence,
}

/// What a raw server has done: the body bytes it has written, how many
/// answers it is still writing, and whether an endless one reached its
/// bound (256 MiB) instead of the client hanging up.
#[derive(Default)]
struct Served {
    written: AtomicU64,
    writing: watch::Sender<usize>,
    bounded: AtomicBool,
}

impl Served {
    /// Waits (at most 30 s) until no answer is being written: each has
    /// been written whole or its client hung up.
    async fn until_idle(&self) {
        let mut writing = self.writing.subscribe();
        let idle = tokio::time::timeout(Duration::from_secs(30), writing.wait_for(|n| *n == 0));
        idle.await.expect("every answer ends within 30 s").unwrap();
    }
}

/// One answer being written, counted in [`Served::writing`] until dropped.
struct Writing<'a>(&'a Served);

impl<'a> Writing<'a> {
    fn start(served: &'a Served) -> Self {
        served.writing.send_modify(|n| *n += 1);
        Writing(served)
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.writing.send_modify(|n| *n -= 1);
    }
}

/// A loopback HTTP/1.1 server answering every request by `answer(body)`;
/// its URL and what it has done.
async fn raw_server(answer: impl Fn(Value) -> Answer + Send + Sync + 'static) -> (String, Arc<Served>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let served = Arc::new(Served::default());
    let (answer, count) = (Arc::new(answer), served.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (answer, count) = (answer.clone(), count.clone());
            tokio::spawn(async move { serve_one(stream, &*answer, &count).await });
        }
    });
    (url, served)
}

async fn serve_one(mut stream: TcpStream, answer: &(dyn Fn(Value) -> Answer + Send + Sync), served: &Served) {
    let Some(body) = read_request(&mut stream).await else { return };
    let (ctype, start, endless) = match answer(body) {
        Answer::Whole(ctype, body) => (ctype, body, false),
        Answer::Endless(ctype, start) => (ctype, start, true),
        Answer::Silence => return tokio::time::sleep(Duration::from_secs(60)).await,
    };
    // Counted before the client can have read a byte of it.
    let _writing = Writing::start(served);
    let length = if endless { String::new() } else { format!("content-length: {}\r\n", start.len()) };
    let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\n{length}connection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(&start).await.is_err() {
        return;
    }
    if !endless {
        return;
    }
    let chunk = vec![b'x'; 64 * 1024];
    loop {
        if served.written.load(Ordering::Relaxed) >= 256 << 20 {
            served.bounded.store(true, Ordering::Relaxed);
            return;
        }
        if stream.write_all(&chunk).await.is_err() {
            return;
        }
        served.written.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
}

/// The JSON body of one request (head read up to its blank line, then
/// `content-length` bytes).
async fn read_request(stream: &mut TcpStream) -> Option<Value> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    let end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut byte).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&byte[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).map(|v| v.trim().parse().unwrap()).unwrap_or(0);
    while buf.len() < end + length {
        let n = stream.read(&mut byte).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&byte[..n]);
    }
    serde_json::from_slice(&buf[end..end + length]).ok()
}

fn options() -> ClientOptions {
    ClientOptions::new("limits-test", "1").timeout(Duration::from_secs(20))
}

fn hostile_line(flags: &str) -> String {
    format!("python3 {:?} {flags}", hostile_script().display().to_string())
}

fn python_missing(test: &str) -> bool {
    external(test, &["python3"]).is_none()
}

/// Whether process `pid` is gone (or a zombie nobody waits for) within 10 s.
async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if state.is_empty() || state.split_whitespace().nth(2) == Some("Z") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn pid_in(file: &Path) -> i32 {
    for _ in 0..100 {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|s| s.trim().parse().ok()) {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{} was never written", file.display());
}

#[actix_rt::test]
async fn a_stdio_line_that_never_ends_fails_naming_the_limit() {
    if python_missing("a_stdio_line_that_never_ends_fails_naming_the_limit") {
        return;
    }
    let client =
        Client::spawn_shell(&hostile_line("--endless-line"), options().max_message_bytes(1 << 20)).await.unwrap();
    let err = client.list_tools().await.expect_err("an endless line is no answer");
    assert!(err.to_string().contains("max_message_bytes"), "{err}");
    assert!(client.closed().await.contains("1048576 bytes"), "the connection ends saying why");
}

/// A server whose answer of `content_type` starts with `start` and never
/// ends: the handshake fails naming the limit, and the client hangs up near
/// it (every endless answer's writer fails on the closed connection, none
/// reaches the server's own bound).
async fn an_endless_answer_fails_naming_the_limit(content_type: &'static str, start: &[u8]) {
    let start = start.to_vec();
    let (url, served) = raw_server(move |_| Answer::Endless(content_type, start.clone())).await;
    let err = Client::connect(&url, options().max_message_bytes(1 << 20)).await.err().expect("no answer");
    assert!(err.to_string().contains("max_message_bytes"), "{err}");
    served.until_idle().await;
    assert!(!served.bounded.load(Ordering::Relaxed), "the client read an endless answer to the server's bound");
    let sent = served.written.load(Ordering::Relaxed);
    assert!(sent < 64 << 20, "the client hung up near its limit, not after {sent} bytes");
}

#[actix_rt::test]
async fn an_http_body_that_never_ends_fails_naming_the_limit() {
    an_endless_answer_fails_naming_the_limit(
        "application/json",
        br#"{"jsonrpc":"2.0","id":0,"result":{"instructions":""#,
    )
    .await;
}

#[actix_rt::test]
async fn an_sse_event_that_never_ends_fails_naming_the_limit() {
    let start = br#"data: {"jsonrpc":"2.0","id":0,"result":{"instructions":""#;
    an_endless_answer_fails_naming_the_limit("text/event-stream", start).await;
}

#[actix_rt::test]
async fn a_large_sse_event_is_read_whole() {
    let instructions = "i".repeat(8 << 20);
    let (url, _) = raw_server(move |request| {
        let mut result = discover_result();
        result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": {"name": "big", "version": "1"}});
        result["instructions"] = json!(instructions);
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        // Split over lines as a server may: data lines join with "\n".
        Answer::Whole("text/event-stream", format!("id: 1\ndata: {answer}\n\n").into_bytes())
    })
    .await;
    let client = Client::connect(&url, options()).await.unwrap();
    assert_eq!(client.server().instructions.map(|i| i.len()), Some(8 << 20));
    assert_eq!(client.server().name(), Some("big"));
}

/// A whole `server/discover` result, as the specification requires one.
fn discover_result() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
           "ttlMs": 0, "cacheScope": "public"})
}

#[actix_rt::test]
async fn a_discover_answer_that_is_not_one_is_refused_naming_what_it_lacks() {
    let (url, _) = raw_server(|request| {
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"x": "ok"}});
        Answer::Whole("application/json", answer.to_string().into_bytes())
    })
    .await;
    match Client::connect(&url, options()).await {
        Err(ClientError::Transport(why)) => {
            assert!(why.contains("server/discover") && why.contains("`resultType`"), "{why}")
        }
        Err(other) => panic!("a transport error naming resultType, not {other}"),
        Ok(client) => panic!("{{\"x\":\"ok\"}} negotiated as {:?}", client.server().version),
    }
}

/// A server that discovers properly and answers `tools/list` with a tool
/// whose name is not UTF-8, as an SSE event (id 7) or a JSON body.
async fn listing_server(sse: bool) -> String {
    let (url, _) = raw_server(move |request| {
        if request["method"] == "server/discover" {
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": discover_result()});
            return Answer::Whole("application/json", answer.to_string().into_bytes());
        }
        let start = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{{"name":""#, request["id"]);
        let message = [start.as_bytes(), b"\xff\xfe", br#"","inputSchema":{"type":"object"}}]}}"#].concat();
        match sse {
            true => Answer::Whole("text/event-stream", [b"id: 7\ndata: ".as_slice(), &message, b"\n\n"].concat()),
            false => Answer::Whole("application/json", message),
        }
    })
    .await;
    url
}

#[actix_rt::test]
async fn an_answer_that_is_not_utf8_fails_over_sse_as_over_json() {
    let sse = (listing_server(true).await, "event 1 (id \"7\") of the SSE stream answering tools/list");
    for (url, what) in [sse, (listing_server(false).await, "tools/list")] {
        let client = Client::connect(&url, options()).await.unwrap();
        match client.list_tools().await {
            Err(ClientError::Transport(why)) => {
                assert!(why.contains(what) && why.contains("not UTF-8"), "{why}")
            }
            Err(other) => panic!("a transport error naming {what}, not {other}"),
            Ok(tools) => panic!("invalid UTF-8 read as {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>()),
        }
    }
}

#[actix_rt::test]
async fn a_handshake_nobody_answers_times_out() {
    let quick = ClientOptions::new("limits-test", "1").timeout(Duration::from_millis(800));
    match Client::spawn_shell("sleep 100", quick.clone()).await {
        Err(ClientError::Timeout(d)) => assert_eq!(d, Duration::from_millis(800)),
        other => panic!("a timeout over stdio, not {:?}", other.err()),
    }
    let (url, _) = raw_server(|_| Answer::Silence).await;
    match Client::connect(&url, quick).await {
        Err(ClientError::Timeout(_)) => {}
        other => panic!("a timeout over HTTP, not {:?}", other.err()),
    }
}

#[actix_rt::test]
async fn pagination_is_bounded_in_pages_and_items() {
    if python_missing("pagination_is_bounded_in_pages_and_items") {
        return;
    }
    let line = hostile_line("--endless-pages");
    let client = Client::spawn_shell(&line, options().max_list(50, 100_000)).await.unwrap();
    let err = client.list_tools().await.expect_err("an endless listing");
    assert!(err.to_string().contains("50 pages (max_list_pages)"), "{err}");
    let client = Client::spawn_shell(&line, options().max_list(1000, 30)).await.unwrap();
    let err = client.list_tools().await.expect_err("an endless listing");
    assert!(err.to_string().contains("(max_list_items)"), "{err}");
}

#[actix_rt::test]
async fn lines_that_are_not_utf8_are_skipped() {
    if python_missing("lines_that_are_not_utf8_are_skipped") {
        return;
    }
    let client = Client::spawn_shell(&hostile_line("--invalid-utf8"), options()).await.unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo"]);
    let answer = client.call_tool("echo", json!({"text": "still here"})).await.unwrap();
    assert!(serde_json::to_string(&answer.content).unwrap().contains("echo: still here"));
}

#[actix_rt::test]
async fn closing_or_dropping_kills_the_server_not_only_its_shell() {
    if python_missing("closing_or_dropping_kills_the_server_not_only_its_shell") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, how) in ["close", "drop"].into_iter().enumerate() {
        let pidfile = dir.path().join(format!("pid{i}"));
        // `; true` keeps the shell from exec'ing the server (as dash does anyway).
        let line =
            format!("{} ; true", hostile_line(&format!("--linger --pidfile {:?}", pidfile.display().to_string())));
        let client = Client::spawn_shell(&line, options()).await.unwrap();
        let pid = pid_in(&pidfile).await;
        match how {
            "close" => client.close().await,
            _ => drop(client),
        }
        assert!(gone(pid).await, "after {how}, the server {pid} still runs");
    }
}

#[actix_rt::test]
async fn the_command_line_client_times_out_and_leaves_nothing_running() {
    if python_missing("the_command_line_client_times_out_and_leaves_nothing_running") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |line: String, timeout: &str| {
        let mut cmd = tokio::process::Command::new(binary());
        cmd.args(["client", "--stdio", &line, "--timeout-ms", timeout, "tools"]);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        cmd
    };
    // A server that never answers: the handshake times out.
    let pidfile = dir.path().join("silent");
    let flags = format!("--silent --linger --pidfile {:?}", pidfile.display().to_string());
    let out =
        tokio::time::timeout(Duration::from_secs(30), run(format!("{} ; true", hostile_line(&flags)), "1000").output())
            .await
            .expect("the client exits")
            .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("1000 ms"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(gone(pid_in(&pidfile).await).await, "the silent server outlived the client");
    // A server that answers and then lingers: killed when the client is done.
    let pidfile = dir.path().join("linger");
    let flags = format!("--linger --pidfile {:?}", pidfile.display().to_string());
    let out =
        tokio::time::timeout(Duration::from_secs(30), run(format!("{} ; true", hostile_line(&flags)), "5000").output())
            .await
            .expect("the client exits")
            .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("echo"));
    assert!(gone(pid_in(&pidfile).await).await, "the lingering server outlived the client");
}
