//! The pieces of the `mcp-load` harness: HTTP/1.1 keep-alive connections
//! (or HTTP/2 connections that carry many streams each) from chosen loopback
//! source addresses, 2026-07-28 request bodies with the
//! standard headers, verification of every reply, latency histograms, and the
//! resident memory of a server process.

pub mod echo;
pub mod report;
pub mod triggers;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper::Request;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Value};

/// The protocol version the harness speaks.
pub const VERSION: &str = "2026-07-28";

/// A target: `http://host:port/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Server address.
    pub addr: SocketAddr,
    /// Endpoint path.
    pub path: String,
    /// `Host` header value.
    pub host: String,
}

impl Target {
    /// Parses `http://IP:PORT/PATH` (loopback by default; a name other than
    /// `localhost` is refused so that load never leaves the machine by accident).
    pub fn parse(url: &str) -> Result<Self, String> {
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
        let (authority, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
        let (host, port) = authority.rsplit_once(':').ok_or("the URL needs a port")?;
        let port: u16 = port.parse().map_err(|_| "bad port")?;
        let ip: IpAddr = match host {
            "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
            h => h.trim_matches(['[', ']']).parse().map_err(|_| format!("{h:?} is not an IP address"))?,
        };
        Ok(Target { addr: SocketAddr::new(ip, port), path, host: authority.to_string() })
    }
}

enum Sender {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

/// One keep-alive HTTP/1.1 connection, or a handle on an HTTP/2 connection
/// (see [`Conn::share`]).
pub struct Conn {
    sender: Sender,
    target: Target,
}

/// A reply: status, content type and body.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// The whole body.
    pub body: Bytes,
}

impl Conn {
    /// Connects from `source` (a loopback address, so that many connections
    /// do not run out of one address's ephemeral ports).
    pub async fn open(target: &Target, source: Option<IpAddr>) -> Result<Self, String> {
        let io = TokioIo::new(Self::connect(target, source).await?);
        let (sender, conn) = http1::handshake(io).await.map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn { sender: Sender::H1(sender), target: target.clone() })
    }

    /// Connects with HTTP/2 (prior knowledge, no TLS) from `source`. Its
    /// windows are large, so that a stream read a little late does not hold
    /// back the others on the connection.
    pub async fn open_h2(target: &Target, source: Option<IpAddr>) -> Result<Self, String> {
        let io = TokioIo::new(Self::connect(target, source).await?);
        let (sender, conn) = http2::Builder::new(TokioExecutor::new())
            .initial_stream_window_size(1 << 20)
            .initial_connection_window_size(64 << 20)
            .handshake(io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn { sender: Sender::H2(sender), target: target.clone() })
    }

    /// Another handle on the same HTTP/2 connection (a new stream per
    /// request); `None` for HTTP/1.1, which carries one request at a time.
    pub fn share(&self) -> Option<Conn> {
        match &self.sender {
            Sender::H1(_) => None,
            Sender::H2(s) => Some(Conn { sender: Sender::H2(s.clone()), target: self.target.clone() }),
        }
    }

    async fn connect(target: &Target, source: Option<IpAddr>) -> Result<tokio::net::TcpStream, String> {
        let socket = match target.addr {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        }
        .map_err(|e| e.to_string())?;
        if let Some(ip) = source {
            socket.bind(SocketAddr::new(ip, 0)).map_err(|e| format!("bind {ip}: {e}"))?;
        }
        let stream = socket.connect(target.addr).await.map_err(|e| format!("connect {}: {e}", target.addr))?;
        stream.set_nodelay(true).ok();
        Ok(stream)
    }

    async fn send(&mut self, req: Request<Full<Bytes>>) -> Result<hyper::Response<hyper::body::Incoming>, String> {
        match &mut self.sender {
            Sender::H1(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await.map_err(|e| e.to_string())
            }
            Sender::H2(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await.map_err(|e| e.to_string())
            }
        }
    }

    /// A POST to the target with the content type and `Accept` of every
    /// MCP request.
    fn post_to(&self) -> hyper::http::request::Builder {
        match self.sender {
            Sender::H1(_) => Request::post(&self.target.path).header("host", &self.target.host),
            // HTTP/2 carries the authority in the request target (`:authority`).
            Sender::H2(_) => Request::post(format!("http://{}{}", self.target.host, self.target.path))
                .version(hyper::Version::HTTP_2),
        }
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
    }

    fn request(&self, method: &str, name: Option<&str>, body: Bytes) -> Request<Full<Bytes>> {
        let mut b = self.post_to().header("mcp-protocol-version", VERSION).header("mcp-method", method);
        if let Some(n) = name {
            b = b.header("mcp-name", n);
        }
        b.body(Full::new(body)).expect("a valid request")
    }

    /// POSTs one JSON-RPC request and reads the whole reply.
    pub async fn call(&mut self, method: &str, name: Option<&str>, body: Bytes) -> Result<Answer, String> {
        let resp = self.send(self.request(method, name, body)).await?;
        whole(resp).await
    }

    /// POSTs `body` with only `headers` beside the content type and
    /// `Accept` (e.g. a 2025-11-25 session's), and reads the whole reply;
    /// also returns the reply's `Mcp-Session-Id`, if any.
    pub async fn post(&mut self, headers: &[(&str, &str)], body: Bytes) -> Result<(Answer, Option<String>), String> {
        let mut b = self.post_to();
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let resp = self.send(b.body(Full::new(body)).map_err(|e| e.to_string())?).await?;
        let session = header(&resp, "mcp-session-id");
        Ok((whole(resp).await?, session))
    }

    /// POSTs a request whose reply is a stream, returning its body to read.
    pub async fn stream(&mut self, method: &str, body: Bytes) -> Result<(u16, hyper::body::Incoming), String> {
        let resp = self.send(self.request(method, None, body)).await?;
        Ok((resp.status().as_u16(), resp.into_body()))
    }
}

/// A header of `resp` as text, if it has one.
fn header(resp: &hyper::Response<hyper::body::Incoming>, name: &str) -> Option<String> {
    resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// The whole reply: its status, content type and body.
async fn whole(resp: hyper::Response<hyper::body::Incoming>) -> Result<Answer, String> {
    let (status, content_type) = (resp.status().as_u16(), header(&resp, "content-type").unwrap_or_default());
    let body = resp.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok(Answer { status, content_type, body })
}

/// The `_meta` of every request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-load", "version": env!("CARGO_PKG_VERSION")},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A request body.
pub fn body(id: u64, method: &str, mut params: Value) -> Bytes {
    params["_meta"] = meta();
    Bytes::from(serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap())
}

/// The JSON-RPC response in a reply (the last SSE `data:` event, or the JSON body).
pub fn response_of(answer: &Answer) -> Result<Value, String> {
    let text = std::str::from_utf8(&answer.body).map_err(|_| "reply is not UTF-8".to_string())?;
    let json = if answer.content_type.starts_with("text/event-stream") {
        text.lines().rev().find_map(|l| l.strip_prefix("data:")).ok_or("SSE reply without data")?.trim()
    } else {
        text
    };
    serde_json::from_str(json).map_err(|e| format!("reply is not JSON: {e}"))
}

/// Checks a reply to request `id`: HTTP 200, the same id, a result (not an error).
pub fn verify(answer: &Answer, id: u64) -> Result<Value, String> {
    if answer.status != 200 {
        return Err(format!("HTTP {}", answer.status));
    }
    let v = response_of(answer)?;
    if v["id"] != json!(id) {
        return Err(format!("reply id {} for request {id}", v["id"]));
    }
    if let Some(e) = v.get("error") {
        return Err(format!("JSON-RPC error {e}"));
    }
    v.get("result").cloned().ok_or_else(|| "no result".to_string())
}

/// Checks a `tools/call` of an echo tool: the text comes back unchanged.
pub fn verify_echo(answer: &Answer, id: u64, text: &str) -> Result<(), String> {
    let result = verify(answer, id)?;
    match result["content"][0]["text"].as_str() {
        Some(t) if t == text => Ok(()),
        other => Err(format!("echo returned {other:?}, sent {text:?}")),
    }
}

/// A latency histogram in microseconds (1 µs .. 60 s, 3 significant digits).
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds")
}

/// Completed requests per second of a run, counted by every connection.
#[derive(Debug)]
pub struct PerSecond {
    start: std::time::Instant,
    counts: Vec<std::sync::atomic::AtomicU64>,
}

impl PerSecond {
    /// Counters for a run of at most `seconds` (and a little over).
    pub fn new(seconds: u64) -> Self {
        let counts = (0..seconds + 2).map(|_| std::sync::atomic::AtomicU64::new(0)).collect();
        PerSecond { start: std::time::Instant::now(), counts }
    }

    /// One request completed now.
    pub fn tick(&self) {
        let i = (self.start.elapsed().as_secs() as usize).min(self.counts.len() - 1);
        self.counts[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The counts, up to the last second with any.
    pub fn counts(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.counts.iter().map(|c| c.load(std::sync::atomic::Ordering::Relaxed)).collect();
        while v.len() > 1 && v.last() == Some(&0) {
            v.pop();
        }
        v
    }
}

/// `p50 p90 p99 max` of a histogram in milliseconds.
pub fn summary(h: &Histogram<u64>) -> String {
    let ms = |v: u64| v as f64 / 1000.0;
    format!(
        "p50={:.2}ms p90={:.2}ms p99={:.2}ms max={:.2}ms",
        ms(h.value_at_quantile(0.5)),
        ms(h.value_at_quantile(0.9)),
        ms(h.value_at_quantile(0.99)),
        ms(h.max())
    )
}

/// Resident memory of a process in KiB (Linux `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// CPU time (user + system) a process has used so far, in microseconds,
/// counted in 10 ms ticks (Linux `/proc/PID/stat`; `None` for the pid
/// means this process). Time the kernel spends in soft interrupts while
/// the process runs — on loopback, the receiving side of its own writes —
/// is counted in.
pub fn cpu_micros(pid: Option<u32>) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("{}/stat", proc_dir(pid))).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(ticks * 10_000)
}

/// The scheduler's run time of every thread of a process so far, in
/// microseconds (Linux `/proc/PID/task/*/schedstat`, nanoseconds): finer
/// than [`cpu_micros`], for costs of a few milliseconds; soft interrupts
/// are left out where the kernel accounts them apart.
pub fn run_time_micros(pid: Option<u32>) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("{}/task", proc_dir(pid))).ok()?;
    let ns = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum::<u64>();
    Some(ns / 1000)
}

fn proc_dir(pid: Option<u32>) -> String {
    match pid {
        Some(p) => format!("/proc/{p}"),
        None => "/proc/self".to_owned(),
    }
}

/// Source addresses `127.0.0.1 ..= 127.0.0.N` for connection `i`.
pub fn source(i: usize, sources: usize) -> Option<IpAddr> {
    (sources > 1).then(|| IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + (i % sources) as u8)))
}

/// Bounded waiting used by the scenarios.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, ct: &str, body: &str) -> Answer {
        Answer { status, content_type: ct.into(), body: Bytes::from(body.to_string()) }
    }

    #[test]
    fn verification_catches_wrong_replies() {
        let ok =
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}"#;
        assert!(verify_echo(&answer(200, "application/json", ok), 7, "hi").is_ok());
        assert!(verify_echo(&answer(200, "application/json", ok), 8, "hi").is_err(), "wrong id");
        assert!(verify_echo(&answer(200, "application/json", ok), 7, "ho").is_err(), "wrong text");
        assert!(verify_echo(&answer(500, "application/json", ok), 7, "hi").is_err(), "bad status");
        let err = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}"#;
        assert!(verify_echo(&answer(200, "application/json", err), 7, "hi").is_err(), "an error is not a result");
        assert!(verify_echo(&answer(200, "application/json", "{truncated"), 7, "hi").is_err());
        let sse = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{}}}}\n\ndata: {ok}\n\n"
        );
        assert!(verify_echo(&answer(200, "text/event-stream", &sse), 7, "hi").is_ok());
    }

    #[test]
    fn targets_stay_on_loopback_names() {
        let t = Target::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (8080, "/mcp"));
        assert!(Target::parse("http://localhost:1/").is_ok());
        assert!(Target::parse("http://example.com:80/mcp").is_err());
        assert_eq!(source(5, 4), Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))));
        assert_eq!(source(5, 1), None);
    }
}
