//! Helpers shared by the integration tests: an in-process server on a real
//! loopback port, the `actix-mcp` binary as a child process, and request
//! builders for the 2026-07-28 wire.
#![allow(dead_code, unreachable_pub, unused_imports)]

pub mod auth_server;
mod client_options;
mod external;
mod hostile;
pub mod issuer;
pub mod logs;
pub mod nginx;
pub mod receiver;
pub mod redis;
mod scratch;
mod tasks;
mod wait;
pub use client_options::*;
pub use external::*;
pub use hostile::*;
pub use scratch::{scratch, Scratch};
pub use tasks::*;
pub use wait::*;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use actix_mcp::catalog::Catalog;
use actix_mcp::config::Config;
use actix_mcp::{telemetry::logging, McpServer};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

pub const VERSION: &str = "2026-07-28";

/// `_meta` with the given capabilities.
pub fn meta_with(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// `_meta` with empty capabilities.
pub fn meta() -> Value {
    meta_with(json!({}))
}

/// A request with `params` plus `_meta`.
pub fn request(id: Value, method: &str, mut params: Value) -> Value {
    params.as_object_mut().expect("params object").entry("_meta").or_insert_with(meta);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A config for tests: loopback, any port, short SSE keep-alive.
pub fn test_config() -> Config {
    let mut c = Config::default();
    c.http.bind = "127.0.0.1:0".into();
    c.http.workers = 1;
    c.http.sse_keep_alive_ms = 100;
    c.http.shutdown_timeout_secs = 1;
    c
}

/// A server running in this process on a real loopback port.
pub struct TestServer {
    pub url: String,
    pub server: McpServer,
    handle: actix_web::dev::ServerHandle,
}

impl TestServer {
    /// Starts `catalog` with `config` (must be called inside an actix system).
    pub fn start(catalog: Arc<Catalog>, config: Config) -> Self {
        Self::serve(McpServer::new(catalog, config, logging::discard()).expect("a valid test server"))
    }

    /// A server whose `requestState` expiry reads `clock`.
    pub fn start_with_clock(
        catalog: Arc<Catalog>,
        config: Config,
        clock: Arc<dyn actix_mcp::facts::clock::Clock>,
    ) -> Self {
        let backend = Box::new(actix_mcp::hub::MemoryBackend);
        Self::serve(
            McpServer::assemble(catalog, config, logging::discard(), backend, clock).expect("a valid test server"),
        )
    }

    /// Serves `server` on its configured (test) address.
    pub fn serve(server: McpServer) -> Self {
        let path = server.config().http.path.clone();
        let (http, addrs) = actix_mcp::transport::http::bind(server.clone()).expect("bind");
        let handle = http.handle();
        actix_rt::spawn(http);
        TestServer { url: format!("http://{}{}", addrs[0], path), server, handle }
    }

    /// The everything catalog with the test config.
    pub fn everything() -> Self {
        Self::everything_with(|_| {})
    }

    /// The everything catalog with the test config as `edit` changes it.
    pub fn everything_with(edit: impl FnOnce(&mut Config)) -> Self {
        let mut config = test_config();
        edit(&mut config);
        Self::start(Arc::new(actix_mcp::catalogs::everything::catalog()), config)
    }

    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// What came back from a POST.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub headers: reqwest::header::HeaderMap,
    /// Every JSON message in the body (one for JSON, each `data:` for SSE).
    pub messages: Vec<Value>,
    pub raw: String,
}

impl Reply {
    /// The last message (the response).
    pub fn response(&self) -> &Value {
        self.messages.last().expect("a message")
    }
    pub fn error_code(&self) -> Option<i64> {
        self.response()["error"]["code"].as_i64()
    }
}

pub fn parse_body(content_type: &str, raw: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        raw.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| serde_json::from_str(d.trim()).expect("SSE data is one JSON message per line"))
            .collect()
    } else if raw.is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(raw).unwrap_or_else(|e| panic!("not JSON ({e}): {raw}"))]
    }
}

/// The standard headers for a body, as a compliant client sends them.
pub fn standard_headers(body: &Value) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("Accept".to_string(), "application/json, text/event-stream".to_string()),
    ];
    if let Some(v) = body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str() {
        h.push(("MCP-Protocol-Version".into(), v.into()));
    }
    if let Some(m) = body["method"].as_str() {
        h.push(("Mcp-Method".into(), m.into()));
        let name = match m {
            "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
            "resources/read" => body["params"]["uri"].as_str(),
            "tasks/get" | "tasks/update" | "tasks/cancel" => body["params"]["taskId"].as_str(),
            _ => None,
        };
        if let Some(n) = name {
            h.push(("Mcp-Name".into(), mcp_protocol::header::encode_value(n)));
        }
    }
    h
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap()
}

/// The counter `name` of the server at `url` (its `/metrics`; 0 before it
/// counted anything), summed over its labels.
pub async fn counter(url: &str, name: &str) -> u64 {
    let text = client().get(url.replace("/mcp", "/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with([' ', '{'])))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// POSTs raw bytes with explicit headers.
pub async fn post_raw(url: &str, headers: &[(String, String)], body: Vec<u8>) -> Reply {
    let mut req = client().post(url).body(body);
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let resp = req.send().await.expect("request sent");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let raw = resp.text().await.expect("body");
    let messages = parse_body(&content_type, &raw);
    Reply { status, content_type, headers, messages, raw }
}

/// POSTs a JSON body with the standard headers, with `edit` applied to them.
pub async fn post_with(url: &str, body: &Value, edit: impl FnOnce(&mut Vec<(String, String)>)) -> Reply {
    let mut headers = standard_headers(body);
    edit(&mut headers);
    post_raw(url, &headers, serde_json::to_vec(body).unwrap()).await
}

/// POSTs a JSON body with the standard headers.
pub async fn post(url: &str, body: &Value) -> Reply {
    post_with(url, body, |_| {}).await
}

/// A legacy-era POST: `Content-Type`, `Accept` and, inside a session, its
/// `Mcp-Session-Id` (none of the stateless `Mcp-*` headers).
pub async fn legacy_post(url: &str, session: Option<&str>, body: &Value) -> Reply {
    let mut headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("Accept".to_string(), "application/json, text/event-stream".to_string()),
    ];
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id".into(), s.into()));
    }
    post_raw(url, &headers, serde_json::to_vec(body).unwrap()).await
}

/// Removes a header by name (case-insensitive).
pub fn without(headers: &mut Vec<(String, String)>, name: &str) {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
}

/// Sets a header (replacing any of the same name).
pub fn set(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    without(headers, name);
    headers.push((name.to_string(), value.to_string()));
}

/// The `actix-mcp` binary, built by cargo with the tests (and their
/// features: every one) before any of them runs.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_actix-mcp"))
}

/// The example program `name` of the `actix-mcp` package, as `cargo test`
/// builds it beside the tests (with every feature). A run filtered to one
/// test target does not build the examples as programs: `cargo build -p
/// actix-mcp --examples` does.
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test> → target/<profile>/examples/<name>
    let program = exe.parent().unwrap().parent().unwrap().join("examples").join(name);
    assert!(
        program.is_file(),
        "{} is not built: `cargo test --workspace` builds every example, `cargo build -p actix-mcp --examples` too",
        program.display()
    );
    program
}

/// The binary serving stdio, with line-oriented access to its pipes.
pub struct StdioChild {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: Lines<BufReader<ChildStdout>>,
    pub stderr: Lines<BufReader<ChildStderr>>,
}

impl StdioChild {
    /// `actix-mcp stdio --catalog everything EXTRA…`.
    pub fn spawn(extra: &[&str]) -> Self {
        Self::spawn_args(&[&["--catalog", "everything"], extra].concat())
    }

    /// `actix-mcp stdio ARGS…`.
    pub fn spawn_args(args: &[&str]) -> Self {
        let mut child = tokio::process::Command::new(binary())
            .arg("stdio")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn actix-mcp stdio");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        StdioChild { child, stdin, stdout, stderr }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    pub async fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// The next stdout line as JSON (fails the test after 10 s).
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.stdout.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("stdout open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"))
    }

    /// Reads messages until the response with `id`, returning all read.
    pub async fn recv_until_id(&mut self, id: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let m = self.recv().await;
            let done = m.get("id") == Some(id) && m.get("method").is_none();
            out.push(m);
            if done {
                return out;
            }
        }
    }

    /// Reads until `answers` responses and `notes` notifications have come,
    /// in any order; returns the notifications.
    pub async fn recv_answers_and_notes(&mut self, answers: usize, notes: usize) -> Vec<Value> {
        let (mut got_answers, mut got_notes) = (0, Vec::new());
        while got_answers < answers || got_notes.len() < notes {
            let m = self.recv().await;
            if m.get("method").is_some() {
                got_notes.push(m);
            } else {
                got_answers += 1;
            }
        }
        got_notes
    }

    /// Reads stderr until a line contains `needle` (fails after 10 s).
    pub async fn stderr_until(&mut self, needle: &str) -> String {
        line_with(&mut self.stderr, needle).await
    }

    /// Closes stdin and waits for the exit status (fails after 10 s).
    pub async fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await.expect("exit within 10 s").unwrap()
    }
}

/// Reads lines until one contains `needle` (fails after 10 s).
pub async fn line_with<R: tokio::io::AsyncBufRead + Unpin>(lines: &mut Lines<R>, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let line = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line with {needle:?} within 10 s"))
            .unwrap()
            .expect("stream open");
        if line.contains(needle) {
            return line;
        }
    }
}

/// Waits until `cond` holds, checking every 10 ms, failing after 10 s.
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The binary serving HTTP: started with `serve --bind 127.0.0.1:0 ARGS…`,
/// its URL read from the `listening on` line, stderr kept for log checks.
pub struct HttpChild {
    pub child: Child,
    pub url: String,
    pub stderr: Lines<BufReader<ChildStderr>>,
    early: Vec<String>,
    /// The line that named the address, as printed.
    pub address_line: String,
}

impl HttpChild {
    pub async fn spawn(args: &[&str]) -> Self {
        Self::spawn_at("127.0.0.1:0", args).await
    }

    /// `actix-mcp serve --bind BIND ARGS…` (a fixed port, for an instance
    /// that is restarted on it).
    pub async fn spawn_at(bind: &str, args: &[&str]) -> Self {
        let mut cmd = tokio::process::Command::new(binary());
        cmd.args(["serve", "--bind", bind]).args(args);
        Self::spawn_command(cmd).await
    }

    /// `actix-mcp serve ARGS…` with the environment variables `env` set in
    /// its process only.
    pub async fn spawn_env(env: &[(&str, &str)], args: &[&str]) -> Self {
        let mut cmd = tokio::process::Command::new(binary());
        cmd.args(["serve", "--bind", "127.0.0.1:0"]).args(args).envs(env.iter().copied());
        Self::spawn_command(cmd).await
    }

    /// `actix-mcp serve ARGS…` with its open-files limit lowered to `files`
    /// (through the shell's `ulimit`).
    pub async fn spawn_with_files_limit(files: u32, args: &[&str]) -> Self {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(format!("ulimit -n {files} && exec \"$0\" serve --bind 127.0.0.1:0 \"$@\""))
            .arg(binary())
            .args(args);
        Self::spawn_command(cmd).await
    }

    async fn spawn_command(mut cmd: tokio::process::Command) -> Self {
        let mut child =
            cmd.stdout(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true).spawn().expect("spawn actix-mcp serve");
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        // The address line is printed on its own; log lines may come around
        // it, and are kept for `stderr_until` (the hub's backend may log
        // before the server listens).
        let mut early = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let (url, address_line) = loop {
            let line = tokio::time::timeout_at(deadline, stderr.next_line())
                .await
                .expect("the address line within 10 s")
                .unwrap()
                .expect("stderr open");
            // Plain, or a JSON record under `--log-format json`.
            let json_url = || {
                let record: Value = serde_json::from_str(&line).ok()?;
                let listening = record["msg"].as_str()?.starts_with("listening on ");
                listening.then(|| record["url"].as_str().map(str::to_owned)).flatten()
            };
            match line.strip_prefix("listening on ").map(str::to_owned).or_else(json_url) {
                Some(url) => break (url, line),
                None => early.push(line),
            }
        };
        HttpChild { child, url, stderr, early, address_line }
    }

    /// The stderr lines read before the address line.
    pub fn early_lines(&self) -> &[String] {
        &self.early
    }

    /// Sends it SIGHUP: it reads its configuration again.
    pub fn hangup(&self) {
        let pid = self.child.id().unwrap().to_string();
        assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    }

    /// Ends it with SIGTERM, as a service manager does, and checks that it
    /// exits with status 0 within 15 s.
    pub async fn terminate(mut self) {
        let pid = self.child.id().unwrap().to_string();
        assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let status = tokio::time::timeout(Duration::from_secs(15), self.child.wait()).await.expect("exits").unwrap();
        assert!(status.success(), "{status:?}");
    }

    /// Reads stderr until a line contains `needle` (fails after 10 s),
    /// starting with the lines logged before the address line.
    pub async fn stderr_until(&mut self, needle: &str) -> String {
        if let Some(i) = self.early.iter().position(|l| l.contains(needle)) {
            return self.early.drain(..=i).next_back().unwrap();
        }
        self.early.clear();
        line_with(&mut self.stderr, needle).await
    }

    /// Reads stderr until every one of `needles` was in some line, in any
    /// order (fails after 10 s), starting with the lines before the address line.
    pub async fn stderr_until_all(&mut self, needles: &[&str]) {
        let mut left: Vec<&str> = needles.to_vec();
        for line in std::mem::take(&mut self.early) {
            left.retain(|n| !line.contains(n));
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !left.is_empty() {
            let line = tokio::time::timeout_at(deadline, self.stderr.next_line())
                .await
                .unwrap_or_else(|_| panic!("no lines with {left:?} within 10 s"))
                .unwrap()
                .expect("stderr open");
            left.retain(|n| !line.contains(n));
        }
    }
}

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A free loopback port below the ephemeral range, for a server that is
/// restarted on the same port: while it is down, clients retrying a connect
/// must not be handed that port as their own (a TCP self-connect).
pub fn free_fixed_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 400) as u16 * 20;
    loop {
        let port = base + NEXT.fetch_add(1, Ordering::Relaxed) % 4000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// An SSE stream read message by message.
pub struct SseReader {
    stream: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>>>>,
    buf: String,
}

impl SseReader {
    /// POSTs `body` with the standard headers and expects an SSE stream.
    pub async fn open(url: &str, body: &Value) -> Self {
        Self::open_with(url, body, &[]).await
    }

    /// POSTs `body` with the standard headers plus `extra` and expects an SSE stream.
    pub async fn open_with(url: &str, body: &Value, extra: &[(&str, &str)]) -> Self {
        let mut req = reqwest::Client::new().post(url).json(body);
        for (k, v) in standard_headers(body) {
            req = req.header(k, v);
        }
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        Self::from_response(req.send().await.expect("request sent"))
    }

    /// Reads an already-received response, which must be a 200 SSE stream.
    pub fn from_response(resp: reqwest::Response) -> Self {
        assert_eq!(resp.status(), 200);
        let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert!(ct.starts_with("text/event-stream"), "{ct}");
        SseReader { stream: Box::pin(resp.bytes_stream()), buf: String::new() }
    }

    /// Reads until the raw stream holds `needle` (a comment line, say) and
    /// returns what was read; fails after 10 s without it.
    pub async fn raw_until(&mut self, needle: &str) -> String {
        use futures::StreamExt;
        while !self.buf.contains(needle) {
            match tokio::time::timeout(Duration::from_secs(10), self.stream.next()).await.expect("data within 10 s") {
                Some(Ok(bytes)) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                other => panic!("the stream ended before {needle:?}: {other:?}"),
            }
        }
        std::mem::take(&mut self.buf)
    }

    /// The next JSON message; `None` when the stream ended (fails after 10 s).
    pub async fn next(&mut self) -> Option<Value> {
        self.next_within(Duration::from_secs(10)).await.expect("an event within 10 s")
    }

    /// The next JSON message if one (or the stream's end, `Some(None)`)
    /// comes within `wait`; `None` when the stream stayed quiet that long.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Option<Value>> {
        use futures::StreamExt;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                    return Some(Some(serde_json::from_str(data.trim()).expect("one JSON message per event")));
                }
            }
            match tokio::time::timeout_at(deadline, self.stream.next()).await {
                Err(_) => return None,
                Ok(Some(Ok(bytes))) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(_) => return Some(None),
            }
        }
    }
}

/// A configuration file in a temporary folder of its own, removed when
/// dropped; pass `path()` to `--config`.
pub struct ConfigFile {
    dir: PathBuf,
    file: String,
}

impl ConfigFile {
    /// Writes `toml` into `<temp>/actix-mcp-<name>-<pid>-<n>/config.toml`
    /// (`n` counts the files of this process: two tests may pick one name).
    pub fn new(name: &str, toml: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("actix-mcp-{name}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.toml");
        std::fs::write(&file, toml).unwrap();
        ConfigFile { file: file.to_string_lossy().into_owned(), dir }
    }

    /// The file's path, for `--config`.
    pub fn path(&self) -> &str {
        &self.file
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
