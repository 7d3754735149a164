//! The client's bounds against servers written to misbehave: messages
//! that never end (a stdio line, an HTTP body, an SSE event), a handshake
//! nobody answers, pagination that never ends, lines that are not UTF-8,
//! a discover answer that is not one, answers that are not UTF-8 (and the
//! stream after one), a server that outlives the shell that started it,
//! credentials refused without end, and messages nobody reads (the bounded
//! queues). Real child processes (`tests/hostile/upstream.py`, and small
//! servers written here) and real loopback TCP.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::auth::{Refusal, TokenProvider};
use actix_mcp::client::{Client, ClientError, ClientOptions, RequestOptions, SubscriptionFilter};
use actix_mcp::protocol::ProtocolVersion;
use common::*;
use futures::future::BoxFuture;
use futures::StreamExt;
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
    /// This content type, this start, then `unit` over and over until the
    /// peer stops reading (bounded at 256 MiB, as `Endless`).
    Flood(&'static str, Vec<u8>, Vec<u8>),
    /// This status (401 or 403) with this `WWW-Authenticate` challenge and
    /// a JSON-RPC error as its body.
    Refused(u16, &'static str),
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
    // The answer's start, and what follows it until the peer hangs up (none: the start is all).
    let (ctype, start, filler) = match answer(body) {
        Answer::Whole(ctype, body) => (ctype, body, None),
        Answer::Endless(ctype, start) => (ctype, start, Some(vec![b'x'; 64 * 1024])),
        Answer::Flood(ctype, start, unit) => {
            let chunk = unit.repeat((64 * 1024 / unit.len().max(1)).max(1));
            (ctype, start, Some(chunk))
        }
        Answer::Refused(status, challenge) => {
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "unauthorized"}});
            let body = body.to_string();
            let head = format!(
                "HTTP/1.1 {status} Refused\r\nwww-authenticate: {challenge}\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
            return;
        }
        Answer::Silence => return tokio::time::sleep(Duration::from_secs(60)).await,
    };
    // Counted before the client can have read a byte of it.
    let _writing = Writing::start(served);
    let length = match &filler {
        Some(_) => String::new(),
        None => format!("content-length: {}\r\n", start.len()),
    };
    let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\n{length}connection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(&start).await.is_err() {
        return;
    }
    let Some(chunk) = filler else { return };
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
    let (_, body) = read_head_and_body(stream).await?;
    serde_json::from_slice(&body).ok()
}

/// One request off `stream`: its head, as sent, up to its blank line, and
/// its body (`content-length` bytes; none without that header).
async fn read_head_and_body(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    let end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut byte).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&byte[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length: usize = header_in(&head, "content-length").map(|v| v.parse().unwrap()).unwrap_or(0);
    while buf.len() < end + length {
        let n = stream.read(&mut byte).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&byte[..n]);
    }
    Some((head, buf[end..end + length].to_vec()))
}

/// The value of the header `name` (any case) in an HTTP head, trimmed.
fn header_in<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then_some(value.trim())
    })
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

/// The client guide: a `server/discover` result must carry
/// `capabilities`, an object, "or the connection fails with a transport
/// error naming the member". A result without it, then one whose
/// `capabilities` is a list: each connection fails naming `capabilities`
/// after that one request (the client neither reads the answer as a
/// discovery nor falls back to `initialize`).
#[actix_rt::test]
async fn a_discover_answer_without_capabilities_is_refused_naming_them() {
    let mut lacking = discover_result();
    lacking.as_object_mut().unwrap().remove("capabilities");
    let mut mistyped = discover_result();
    mistyped["capabilities"] = json!(["tools"]);
    let cases = [(lacking, "has no `capabilities`"), (mistyped, "has a `capabilities` that is not an object")];
    for (result, says) in cases {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let log = seen.clone();
        let (url, _) = raw_server(move |request| {
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result.clone()});
            log.lock().unwrap().push(request);
            Answer::Whole("application/json", answer.to_string().into_bytes())
        })
        .await;
        match Client::connect(&url, options()).await {
            Err(ClientError::Transport(why)) => assert!(why.contains("server/discover") && why.contains(says), "{why}"),
            Err(other) => panic!("a transport error naming capabilities, not {other}"),
            Ok(client) => panic!("negotiated as {:?} without capabilities", client.server().version),
        }
        let methods: Vec<Value> = seen.lock().unwrap().iter().map(|r| r["method"].clone()).collect();
        assert_eq!(methods, [json!("server/discover")], "one request, and nothing after it");
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

/// An SSE event for `message`, as a server frames it.
fn sse_event(message: &Value) -> Vec<u8> {
    format!("data: {message}\n\n").into_bytes()
}

/// A `notifications/tools/list_changed` event: what the floods repeat.
fn list_changed_event() -> Vec<u8> {
    sse_event(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}))
}

/// The client guide: an SSE event that is not UTF-8 fails its request
/// "and the stream is not read further". The server follows the event with
/// valid events without end: the client hangs up at once (the server's
/// writes fail well before its own 256 MiB bound, after no more than the
/// socket buffers take).
#[actix_rt::test]
async fn after_an_sse_event_that_is_not_utf8_the_stream_is_not_read_further() {
    let (url, served) = raw_server(|request| {
        if request["method"] == "server/discover" {
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": discover_result()});
            return Answer::Whole("application/json", answer.to_string().into_bytes());
        }
        let start = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#;
        let bad = [b"id: 7\ndata: ".as_slice(), start, b"\xff\xfe", b"\"}}\n\n"].concat();
        Answer::Flood("text/event-stream", bad, list_changed_event())
    })
    .await;
    let client = Client::connect(&url, options()).await.unwrap();
    match client.list_tools().await {
        Err(ClientError::Transport(why)) => {
            assert!(why.contains("not UTF-8") && why.contains("not read further"), "{why}")
        }
        Err(other) => panic!("a transport error naming the event, not {other}"),
        Ok(tools) => panic!("an event that is not UTF-8 was passed over: {} tools", tools.len()),
    }
    // The writer ends only when the client has hung up (or at its bound).
    served.until_idle().await;
    assert!(!served.bounded.load(Ordering::Relaxed), "the client read the stream on to the server's 256 MiB bound");
    let sent = served.written.load(Ordering::Relaxed);
    assert!(sent < 16 << 20, "the client took {sent} bytes after the event it refused");
}

/// A token provider that always has a token (a new one after each
/// refusal) and always agrees to try again; it counts the refusals it is
/// told of.
#[derive(Clone, Default)]
struct Insistent {
    told: Arc<AtomicUsize>,
}

impl TokenProvider for Insistent {
    fn token(&self) -> BoxFuture<'static, Result<Option<String>, ClientError>> {
        let n = self.told.load(Ordering::SeqCst);
        Box::pin(async move { Ok(Some(format!("token-{n}"))) })
    }

    fn refused(&self, _refusal: Refusal) -> BoxFuture<'static, Result<bool, ClientError>> {
        self.told.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(true) })
    }
}

/// The client guide: after a refusal the provider agreed to retry, the
/// request is sent again "at most three times". A server that refuses
/// every token (401 at the handshake; 403 for a call, after a handshake it
/// took) sees each request exactly four times, the same each time, and the
/// caller gets the refusal, with its challenge.
#[actix_rt::test]
async fn a_provider_that_always_retries_gets_at_most_three_more_tries() {
    const INVALID: &str = r#"Bearer error="invalid_token""#;
    const SCOPE: &str = r#"Bearer error="insufficient_scope", scope="more""#;
    // Every request the server received, by method.
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = seen.clone();
    let (url, _) = raw_server(move |request| {
        log.lock().unwrap().push(request);
        Answer::Refused(401, INVALID)
    })
    .await;
    let provider = Insistent::default();
    match Client::connect(&url, options().token_provider(provider.clone())).await {
        Err(ClientError::Auth { status, challenge, .. }) => {
            assert_eq!((status, challenge.as_deref()), (401, Some(INVALID)))
        }
        Err(other) => panic!("the refusal, not {other}"),
        Ok(_) => panic!("connected through a server that refuses every token"),
    }
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 4, "the first try and three more: {sent:?}");
    assert!(sent.iter().all(|r| *r == sent[0]), "the same request each time: {sent:?}");
    let told = provider.told.load(Ordering::SeqCst);
    assert!((3..=4).contains(&told), "each retry follows a refusal the provider was told of: told {told}");

    // A call refused (403) after a handshake the server took.
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = seen.clone();
    let (url, _) = raw_server(move |request| {
        if request["method"] == "server/discover" {
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": discover_result()});
            return Answer::Whole("application/json", answer.to_string().into_bytes());
        }
        log.lock().unwrap().push(request);
        Answer::Refused(403, SCOPE)
    })
    .await;
    let provider = Insistent::default();
    let client = Client::connect(&url, options().token_provider(provider.clone())).await.unwrap();
    match client.call_tool("echo", json!({"text": "x"})).await {
        Err(ClientError::Auth { status, challenge, .. }) => {
            assert_eq!((status, challenge.as_deref()), (403, Some(SCOPE)))
        }
        Err(other) => panic!("the refusal, not {other}"),
        Ok(_) => panic!("a call through a server that refuses every token was answered"),
    }
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 4, "the first try and three more: {sent:?}");
    assert!(sent.iter().all(|r| r["method"] == "tools/call" && *r == sent[0]), "the same call each time: {sent:?}");
    let told = provider.told.load(Ordering::SeqCst);
    assert!((3..=4).contains(&told), "each retry follows a refusal the provider was told of: told {told}");
}

/// The client guide: the messages of one request's answer waiting to be
/// read are bounded, "an HTTP stream is read no faster than they are". A
/// listen stream nobody reads, whose server sends notifications without
/// end: the client stops taking them (the server's writes stall far below
/// its 256 MiB bound: a queue of 16 and the socket buffers), and takes
/// them again as they are read.
#[actix_rt::test]
async fn an_http_stream_is_read_no_faster_than_its_messages_are() {
    let (url, served) = raw_server(|request| {
        if request["method"] == "server/discover" {
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": discover_result()});
            return Answer::Whole("application/json", answer.to_string().into_bytes());
        }
        let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                         "params": {"notifications": {"toolsListChanged": true}}});
        Answer::Flood("text/event-stream", sse_event(&ack), list_changed_event())
    })
    .await;
    let client = Client::connect(&url, options().max_queued_messages(16)).await.unwrap();
    let filter = SubscriptionFilter { tools_list_changed: true, ..Default::default() };
    let mut listen = client.listen(filter).await.unwrap();
    // Nobody reads the stream: the server's writes stop being taken.
    let stalled = stalled_at(&served, "the server's writes to a listen stream nobody reads stall").await;
    assert!(!served.bounded.load(Ordering::Relaxed), "the client read the unread stream to the server's bound");
    assert!(stalled < 96 << 20, "the client took {stalled} bytes of a stream nobody read");
    // Read: the client takes more again.
    for _ in 0..20_000 {
        let note = tokio::time::timeout(Duration::from_secs(20), listen.next()).await.expect("a notification");
        assert_eq!(note.expect("the stream goes on").method, "notifications/tools/list_changed");
    }
    let what = "the server's writes go on once the stream is read";
    wait_for(what, Duration::from_secs(20), Duration::from_millis(20), async || {
        let now = served.written.load(Ordering::Relaxed);
        if now > stalled {
            Ok(())
        } else {
            Err(format!("{now} bytes written"))
        }
    })
    .await;
    drop(listen);
    served.until_idle().await;
}

/// Waits (at most 60 s) until `served` has written the same number of
/// bytes for 500 ms while an answer is still being written; that number.
async fn stalled_at(served: &Served, what: &str) -> u64 {
    let mut last = u64::MAX;
    wait_for(what, Duration::from_secs(60), Duration::from_millis(500), async || {
        let now = served.written.load(Ordering::Relaxed);
        let writing = *served.writing.borrow();
        if now == last && writing > 0 {
            return Ok(now);
        }
        last = now;
        Err(format!("{now} bytes written, {writing} answers being written"))
    })
    .await
}

/// A legacy stdio server for the tests of the client's queues, run as
/// `python3 SCRIPT MODE ARG`: `flood N` answers `resources/subscribe`, then
/// sends N `notifications/resources/updated` of that URI (numbered in
/// `params.n`) and a log message; `pause FILE` reads nothing after
/// `initialize` until FILE exists. Requests whose params carry `pad` are
/// counted and not answered; `count` answers with that count.
const QUEUES_SERVER: &str = r#"
import json, os, sys, time
mode, arg = sys.argv[1], sys.argv[2]
out = sys.stdout.buffer
def send(m):
    out.write(json.dumps(m).encode() + b"\n")
    out.flush()
padded = 0
for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if "pad" in params:
        padded += 1
        continue
    if id is None:
        continue
    if method == "initialize":
        caps = {"resources": {"subscribe": True}, "logging": {}}
        info = {"name": "queues", "version": "1"}
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": info}})
        if mode == "pause":
            while not os.path.exists(arg):
                time.sleep(0.05)
    elif method == "resources/subscribe":
        send({"jsonrpc": "2.0", "id": id, "result": {}})
        for n in range(int(arg)):
            send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": params["uri"], "n": n}})
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "flooded"}})
    elif method == "count":
        send({"jsonrpc": "2.0", "id": id, "result": {"padded": padded}})
    elif method in ("ping", "logging/setLevel", "resources/unsubscribe"):
        send({"jsonrpc": "2.0", "id": id, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found: " + str(method)}})
"#;

/// [`QUEUES_SERVER`] in `mode` with `arg`, its script written under `dir`.
fn queues_server(dir: &Path, mode: &str, arg: &str) -> tokio::process::Command {
    let script = dir.join("queues.py");
    std::fs::write(&script, QUEUES_SERVER).unwrap();
    let mut command = tokio::process::Command::new("python3");
    command.arg(&script).args([mode, arg]);
    command
}

/// The client guide: "the connection's own messages" are bounded by
/// `max_queued_messages`. A legacy stdio server sends 5,000 updates of a
/// subscribed resource (messages of no request) to a listen stream nobody
/// reads, then a log message: once the log message has reached the
/// client, the stream holds at most 16 of them (the latest; the rest were
/// not kept).
#[actix_rt::test]
async fn the_connections_own_messages_wait_unread_at_most_max_queued_messages() {
    if python_missing("the_connections_own_messages_wait_unread_at_most_max_queued_messages") {
        return;
    }
    const SENT: u64 = 5000;
    let dir = tempfile::tempdir().unwrap();
    let flooded = Arc::new(AtomicBool::new(false));
    let seen_log = flooded.clone();
    let opts = options().max_queued_messages(16).on_log(move |_| seen_log.store(true, Ordering::SeqCst));
    let client = Client::spawn(queues_server(dir.path(), "flood", &SENT.to_string()), opts).await.unwrap();
    let filter = SubscriptionFilter { resource_subscriptions: vec!["queue://doc".into()], ..Default::default() };
    let mut listen = client.listen(filter).await.unwrap();
    eventually("the log message after the flood reached the client", || flooded.load(Ordering::SeqCst)).await;
    let mut kept = Vec::new();
    while kept.last() != Some(&(SENT - 1)) {
        let note = tokio::time::timeout(Duration::from_secs(10), listen.next())
            .await
            .unwrap_or_else(|_| panic!("the last update never came; read so far: {kept:?}"))
            .expect("the stream goes on");
        assert_eq!(note.method, "notifications/resources/updated");
        kept.push(note.params["n"].as_u64().unwrap_or_else(|| panic!("a numbered update: {:?}", note.params)));
    }
    assert!(kept.len() <= 16, "{} of the {SENT} unread messages were kept (max_queued_messages 16)", kept.len());
    assert!(kept.windows(2).all(|w| w[0] < w[1]), "in the order sent: {kept:?}");
    client.close().await;
}

/// The client guide: "the lines waiting for a stdio server's stdin" are
/// bounded by `max_queued_messages`. A server that stops reading its stdin
/// after the handshake; 48 requests of 256 KiB each, each given up after
/// 2 s; then the server reads again: of the 48, only those that got into
/// the queue (8) or the pipe reach it — a request that never got a place
/// never goes out.
#[actix_rt::test]
async fn the_lines_waiting_for_a_stdio_servers_stdin_are_at_most_max_queued_messages() {
    if python_missing("the_lines_waiting_for_a_stdio_servers_stdin_are_at_most_max_queued_messages") {
        return;
    }
    const SENT: usize = 48;
    const BOUND: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let command = queues_server(dir.path(), "pause", &go.display().to_string());
    let client = Client::spawn(command, options().max_queued_messages(BOUND)).await.unwrap();
    let pad = "x".repeat(256 << 10);
    let calls = (0..SENT).map(|i| {
        let quick = RequestOptions::new().timeout(Duration::from_secs(2));
        client.request_with("pad", json!({"pad": &pad, "i": i}), quick)
    });
    let outcomes = futures::future::join_all(calls).await;
    for outcome in &outcomes {
        match outcome {
            Err(ClientError::Timeout(_)) => {}
            Err(other) => panic!("each request given up after its time limit, not {other}"),
            Ok(answer) => panic!("a server that reads nothing answered {answer}"),
        }
    }
    std::fs::write(&go, "").unwrap();
    let count = client.request("count", json!({})).await.unwrap();
    let padded = count["padded"].as_u64().unwrap_or_else(|| panic!("a count: {count}")) as usize;
    // The queue, the line being written and what a 64 KiB pipe holds.
    assert!(padded <= BOUND + 4, "{padded} of {SENT} unsent requests reached the server (max_queued_messages {BOUND})");
    client.close().await;
}

/// Where a held call's stream stands, at [`holding_server`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// No `tools/call` has come yet.
    NotYet,
    /// Its answer's head is written: the stream is open, and nothing more
    /// is ever written to it.
    Open,
    /// The client closed the connection it came on.
    Closed,
}

/// A stateless server that discovers properly, answers every other
/// request with an empty result (a notification with 202), and holds a
/// `tools/call` open as an SSE stream it never writes to, telling `held`
/// when the stream is open and when the client closed its connection (the
/// end of it read); its URL and the methods it received, in order.
async fn holding_server(held: Arc<watch::Sender<Held>>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let methods: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = methods.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (seen, held) = (seen.clone(), held.clone());
            tokio::spawn(async move {
                let Some(request) = read_request(&mut stream).await else { return };
                let method = request["method"].as_str().unwrap_or_default().to_owned();
                seen.lock().unwrap().push(method.clone());
                if method == "tools/call" {
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                    if stream.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    held.send_replace(Held::Open);
                    // Nothing else comes on this connection but its end.
                    let mut buf = [0u8; 1024];
                    while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
                    held.send_replace(Held::Closed);
                    return;
                }
                let (status, body) = match request.get("id") {
                    None => ("202 Accepted", String::new()),
                    Some(id) => {
                        let result = if method == "server/discover" { discover_result() } else { json!({}) };
                        ("200 OK", json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
                    }
                };
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, methods)
}

/// The client guide: "Dropping a call's future gives it up: over
/// stateless HTTP the stream closes". A server that opens a call's SSE
/// stream and never answers on it: while the call's future lives, the
/// stream stays open; once the future is dropped, the client closes the
/// connection it came on (the server reads its end). The closing is the
/// cancellation: no `notifications/cancelled` goes out, only the request
/// made after it.
#[actix_rt::test]
async fn a_call_given_up_over_stateless_http_closes_its_stream() {
    let held = Arc::new(watch::Sender::new(Held::NotYet));
    let mut state = held.subscribe();
    let (url, methods) = holding_server(held).await;
    let client = Client::connect(&url, options()).await.unwrap();
    assert!(client.server().stateless);
    let mut call = Box::pin(client.call_tool("never_answers", json!({})));
    let opened = async {
        tokio::select! {
            outcome = &mut call => Some(outcome.err()),
            _ = state.wait_for(|s| *s == Held::Open) => None,
        }
    };
    let ended =
        tokio::time::timeout(Duration::from_secs(10), opened).await.expect("the call's stream opened within 10 s");
    assert!(ended.is_none(), "a call nobody answers ended: {ended:?}");
    // Waiting on, the call keeps its stream.
    assert!(tokio::time::timeout(Duration::from_millis(300), &mut call).await.is_err(), "the call ended unanswered");
    assert_eq!(*state.borrow(), Held::Open, "the stream closed while the call was waiting on it");
    drop(call);
    let closed = tokio::time::timeout(Duration::from_secs(10), state.wait_for(|s| *s == Held::Closed)).await;
    assert!(closed.is_ok_and(|seen| seen.is_ok()), "the call's stream still open 10 s after the call was given up");
    // Only the next request follows: the closing said it all.
    client.request("ping", json!({})).await.unwrap();
    assert_eq!(*methods.lock().unwrap(), ["server/discover", "tools/call", "ping"]);
}

/// One request a [`legacy_holding_server`] received.
#[derive(Debug, Clone)]
struct Received {
    /// Its HTTP method: `POST`, `GET`, `DELETE`.
    verb: String,
    /// Its `Mcp-Session-Id`, if it had one.
    session: Option<String>,
    /// Its JSON-RPC message (`null` without a body).
    message: Value,
}

/// The session a [`legacy_holding_server`] names at `initialize`.
const LEGACY_SESSION: &str = "session-7d3b";

/// A legacy (2025-11-25) Streamable HTTP server: `initialize` names the
/// session [`LEGACY_SESSION`], a notification is taken with 202, a GET
/// stream is refused (405: the client goes on without one), a `DELETE` is
/// taken; a `tools/call` of `never_answers` opens an SSE stream, sends one
/// `notifications/message` on it and never answers (the stream stays open
/// until the client closes it); a `tools/call` of `holds_silently` gets no
/// answer at all, not even its head, until the client closes the
/// connection; another `tools/call` is answered with the
/// text `answered`, any other request with an empty result. Its URL, and
/// every request it received, in order (a watch, to wait on).
async fn legacy_holding_server() -> (String, Arc<watch::Sender<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let heard = Arc::new(watch::Sender::new(Vec::<Received>::new()));
    let log = heard.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let Some((head, body)) = read_head_and_body(&mut stream).await else { return };
                let verb = head.split_whitespace().next().unwrap_or_default().to_owned();
                let session = header_in(&head, "mcp-session-id").map(str::to_owned);
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let received = Received { verb: verb.clone(), session, message: message.clone() };
                log.send_modify(|seen| seen.push(received));
                let method = message["method"].as_str().unwrap_or_default();
                if verb == "POST" && method == "tools/call" && message["params"]["name"] == "holds_silently" {
                    let mut buf = [0u8; 1024];
                    while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
                    return;
                }
                if verb == "POST" && method == "tools/call" && message["params"]["name"] == "never_answers" {
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                                      "params": {"level": "info", "data": "working on it"}});
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                    let mut start = head.as_bytes().to_vec();
                    start.extend_from_slice(&sse_event(&note));
                    if stream.write_all(&start).await.is_err() {
                        return;
                    }
                    // Nothing else comes on this connection but its end.
                    let mut buf = [0u8; 1024];
                    while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
                    return;
                }
                let mut extra = String::new();
                let (status, body) = match (verb.as_str(), message.get("id")) {
                    ("POST", None) => ("202 Accepted", String::new()),
                    ("POST", Some(id)) => {
                        let result = match method {
                            "initialize" => {
                                extra = format!("mcp-session-id: {LEGACY_SESSION}\r\n");
                                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                       "serverInfo": {"name": "legacy-holding", "version": "1"}})
                            }
                            "tools/call" => json!({"content": [{"type": "text", "text": "answered"}]}),
                            _ => json!({}),
                        };
                        ("200 OK", json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
                    }
                    ("DELETE", _) => ("200 OK", String::new()),
                    _ => ("405 Method Not Allowed", String::new()),
                };
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, heard)
}

/// The first request `heard` that `pick` takes, waiting for it (at most
/// 10 s; the test fails naming `what` and what was heard instead).
async fn first_heard(heard: &watch::Sender<Vec<Received>>, what: &str, pick: impl Fn(&Received) -> bool) -> Received {
    let mut seen = heard.subscribe();
    let waited = tokio::time::timeout(Duration::from_secs(10), seen.wait_for(|all| all.iter().any(&pick))).await;
    let Ok(Ok(all)) = waited else {
        panic!("not within 10 s: {what} (heard: {:?})", heard.borrow().clone());
    };
    let found = all.iter().find(|r| pick(r)).cloned();
    found.expect("the request just seen")
}

/// The client guide: "Dropping a call's future gives it up: … elsewhere
/// `notifications/cancelled` goes out". In a legacy (2025-11-25) HTTP
/// session, a server opens a call's SSE stream, sends one log message on
/// it and never answers. Once the server has the `tools/call` and the
/// client has read that message (the call is out and its answer being
/// read), the call's future is dropped: the server then receives a
/// `notifications/cancelled` in the session (its `Mcp-Session-Id`) whose
/// `params.requestId` is the call's JSON-RPC id, once; and the client goes
/// on (a tool call the server answers, then `ping`).
#[actix_rt::test]
async fn a_call_given_up_in_a_legacy_http_session_sends_notifications_cancelled() {
    let (url, heard) = legacy_holding_server().await;
    let client = Client::connect(&url, options().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    assert!(!client.server().stateless, "a legacy session");
    let (logged, mut reading) = watch::channel(false);
    let on_log = RequestOptions::new().on_log(move |_| {
        logged.send_replace(true);
    });
    let mut call = Box::pin(client.call_tool_with("never_answers", json!({}), on_log));
    let until_read = async {
        tokio::select! {
            outcome = &mut call => Some(outcome.err()),
            seen = reading.wait_for(|logged| *logged) => {
                assert!(seen.is_ok(), "the call's log callback is gone before it was called");
                None
            }
        }
    };
    let ended = tokio::time::timeout(Duration::from_secs(10), until_read)
        .await
        .expect("the log message on the call's stream read within 10 s");
    assert!(ended.is_none(), "a call nobody answers ended: {ended:?}");
    let sent = first_heard(&heard, "the tools/call", |r| r.message["params"]["name"] == "never_answers").await;
    let call_id = sent.message["id"].clone();
    assert!(call_id.is_number(), "the call's JSON-RPC id: {sent:?}");
    assert_eq!(sent.session.as_deref(), Some(LEGACY_SESSION), "the call in the session: {sent:?}");
    drop(call);
    let is_cancel = |r: &Received| r.message["method"] == "notifications/cancelled";
    let cancel = first_heard(&heard, "notifications/cancelled once the call was given up", is_cancel).await;
    assert_eq!(cancel.verb, "POST", "{cancel:?}");
    assert_eq!(cancel.session.as_deref(), Some(LEGACY_SESSION), "the cancellation in the session: {cancel:?}");
    assert!(cancel.message.get("id").is_none(), "a notification: {cancel:?}");
    assert_eq!(cancel.message["params"]["requestId"], call_id, "the call's id: {cancel:?}");
    // The connection goes on.
    let answer = client.call_tool("answers", json!({})).await.unwrap();
    assert!(serde_json::to_string(&answer.content).unwrap().contains("answered"), "{answer:?}");
    client.request("ping", json!({})).await.unwrap();
    let seen = heard.borrow().clone();
    assert_eq!(seen[0].message["method"], "initialize", "the session's first request: {seen:?}");
    assert_eq!(seen.iter().filter(|r| is_cancel(r)).count(), 1, "one cancellation, of the call given up: {seen:?}");
    assert!(seen[1..].iter().all(|r| r.session.as_deref() == Some(LEGACY_SESSION)), "all in the session: {seen:?}");
    client.close().await;
}

/// The same promise before any of the answer came: in a legacy HTTP
/// session, a server takes the `tools/call` and sends nothing back, not
/// even the response's head. Once the server has it, the call's future is
/// dropped: a `notifications/cancelled` of that call's id reaches the
/// server in the session all the same.
#[actix_rt::test]
async fn a_call_given_up_before_its_answer_began_is_cancelled_in_a_legacy_session() {
    let (url, heard) = legacy_holding_server().await;
    let client = Client::connect(&url, options().pin(ProtocolVersion::V2025_11_25)).await.unwrap();
    let mut call = Box::pin(client.call_tool("holds_silently", json!({})));
    let sent = tokio::select! {
        outcome = &mut call => panic!("a call nobody answers ended: {:?}", outcome.err()),
        sent = first_heard(&heard, "the tools/call", |r| r.message["params"]["name"] == "holds_silently") => sent,
    };
    let call_id = sent.message["id"].clone();
    assert!(call_id.is_number(), "the call's JSON-RPC id: {sent:?}");
    drop(call);
    let is_cancel = |r: &Received| r.message["method"] == "notifications/cancelled";
    let cancel = first_heard(&heard, "notifications/cancelled once the call was given up", is_cancel).await;
    assert_eq!(cancel.session.as_deref(), Some(LEGACY_SESSION), "the cancellation in the session: {cancel:?}");
    assert_eq!(cancel.message["params"]["requestId"], call_id, "the call's id: {cancel:?}");
    client.request("ping", json!({})).await.unwrap();
    client.close().await;
}
