#![allow(missing_docs)]
//! Allocations per `tools/call`: how many heap allocations (and bytes) a
//! server makes to answer one call of `echo`, for actix-mcp (stateless, and
//! in a 2025-11-25 session) beside the raw actix-web handler (the handler of
//! `echo-baseline`: parse the body, echo the text, no MCP), each served in
//! this process on one worker with the same counting allocator over the
//! system's. The calls come from a child process (this binary, `client`),
//! one keep-alive connection, one call at a time, every reply checked; the
//! counters are read before and after CALLS calls (after WARMUP), so
//! start-up and the client cost nothing. A reallocation counts as an
//! allocation of its new size.
//!
//! ```sh
//! cargo bench --bench allocs              # CALLS=20000 WARMUP=2000
//! ```
//! Bounded by CALLS; loopback only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

static COUNT: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The system's allocator, counting.
struct Counting;

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        COUNT.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        COUNT.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        COUNT.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"allocs","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const LEGACY_BODY: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;

/// One request's bytes: the stateless call, or (with a session) the legacy one.
fn request(port: u16, session: Option<&str>) -> Vec<u8> {
    let (body, extra) = match session {
        None => (BODY, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n".to_owned()),
        Some(s) => (LEGACY_BODY, format!("MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {s}\r\n")),
    };
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one response: its status, headers (lower-cased) and body.
fn read_response(r: &mut BufReader<std::net::TcpStream>) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut line = String::new();
    r.read_line(&mut line).expect("a status line");
    let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("a status");
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).expect("a header");
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len: usize = headers.iter().find(|(k, _)| k == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; len];
    r.read_exact(&mut body).expect("the body");
    (status, headers, body)
}

/// `allocs client PORT CALLS [SESSION]`: the calls, each reply checked.
fn client(args: &[String]) {
    let port: u16 = args[0].parse().unwrap();
    let calls: u64 = args[1].parse().unwrap();
    let session = args.get(2).map(String::as_str);
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    let req = request(port, session);
    for _ in 0..calls {
        w.write_all(&req).unwrap();
        let (status, _, body) = read_response(&mut r);
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        assert!(body.windows(7).any(|w| w == b"\"hello\""), "{}", String::from_utf8_lossy(&body));
    }
}

/// Opens a 2025-11-25 session on the server at `port`; its id.
fn open_session(port: u16) -> String {
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"allocs","version":"1"}}}"#;
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    w.write_all(req.as_bytes()).unwrap();
    let (status, headers, _) = read_response(&mut r);
    assert_eq!(status, 200);
    headers.into_iter().find(|(k, _)| k == "mcp-session-id").expect("a session id").1
}

/// Runs `calls` calls from a child process; allocations and bytes in this
/// process meanwhile.
fn measure(port: u16, calls: u64, session: Option<&str>) -> (u64, u64) {
    let me = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(me);
    cmd.args(["client", &port.to_string(), &calls.to_string()]);
    if let Some(s) = session {
        cmd.arg(s);
    }
    let (c0, b0) = (COUNT.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed));
    let status = cmd.status().expect("the client runs");
    let (c1, b1) = (COUNT.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed));
    assert!(status.success(), "the client failed");
    (c1 - c0, b1 - b0)
}

async fn raw_echo(body: web::Bytes) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let text = v["params"]["arguments"]["text"].as_str().unwrap_or_default();
    let reply = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"content": [{"type": "text", "text": text}], "resultType": "complete"}});
    HttpResponse::Ok().content_type("application/json").body(serde_json::to_vec(&reply).unwrap_or_default())
}

/// Starts `which` on a thread of its own (its own actix system); its port
/// and what stops it.
fn start(which: &'static str) -> (u16, actix_web::dev::ServerHandle) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_rt::System::new().block_on(async move {
            let (server, port) = match which {
                "raw" => {
                    let s = HttpServer::new(|| App::new().route("/mcp", web::post().to(raw_echo)))
                        .workers(1)
                        .bind("127.0.0.1:0")
                        .unwrap();
                    let port = s.addrs()[0].port();
                    (s.run(), port)
                }
                _ => {
                    let mut config = actix_mcp::config::Config::default();
                    config.http.bind = "127.0.0.1:0".into();
                    config.http.workers = 1;
                    let catalog = Arc::new(actix_mcp::catalogs::everything::catalog());
                    let log = slog::Logger::root(slog::Discard, slog::o!());
                    let mcp = actix_mcp::server::McpServer::new(catalog, config, log).expect("a server");
                    let (http, addrs) = actix_mcp::transport::http::bind(mcp).expect("bind");
                    (http, addrs[0].port())
                }
            };
            tx.send((port, server.handle())).unwrap();
            let _ = server.await;
        });
    });
    rx.recv().unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("client") {
        return client(&args[1..]);
    }
    let (calls, warmup) = (env_u64("CALLS", 20_000), env_u64("WARMUP", 2_000));
    println!("allocations per tools/call of echo ({calls} calls after {warmup}, one connection, one worker)");
    // ONLY=raw|mcp|legacy measures one (under a heap profiler, say).
    let only = std::env::var("ONLY").unwrap_or_default();
    let mut rows = Vec::new();
    let all =
        [("raw actix-web handler", "raw"), ("actix-mcp stateless", "mcp"), ("actix-mcp legacy session", "legacy")];
    for (name, server) in all.into_iter().filter(|(_, s)| only.is_empty() || only == *s) {
        let (port, handle) = start(if server == "raw" { "raw" } else { "mcp" });
        let session = (server == "legacy").then(|| open_session(port));
        measure(port, warmup, session.as_deref());
        let (count, bytes) = measure(port, calls, session.as_deref());
        let (per, per_bytes) = (count as f64 / calls as f64, bytes as f64 / calls as f64);
        println!("{name:<26} {per:>7.1} allocations  {per_bytes:>8.0} bytes per call");
        rows.push((name, per, per_bytes));
        actix_rt::System::new().block_on(handle.stop(false));
    }
    if let Some(&(_, raw, _)) = rows.iter().find(|r| r.0.starts_with("raw")) {
        for (name, per, _) in rows.iter().filter(|r| !r.0.starts_with("raw")) {
            println!("{name}: {:.2}x the raw handler's allocations", per / raw);
        }
    }
}
