//! `[http]`, `[stdio]` and `[request]`: the transports and the per-request actors.

use serde::{Deserialize, Serialize};

/// `[http]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Listen address. Default: `127.0.0.1:8080` (loopback: a local server
    /// must not be reachable from the network unless asked).
    pub bind: String,
    /// The MCP endpoint path. Default: `/mcp`.
    pub path: String,
    /// Accepted `Host` names (port ignored); `"*"` accepts any. Default: the
    /// loopback names, against DNS rebinding.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` hosts (scheme and port ignored) when the header is
    /// present; `"*"` accepts any. Default: the loopback names.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body in bytes; larger → 413. Default: 4 MiB.
    pub max_body_bytes: usize,
    /// A request body still incomplete this many ms after the handler began
    /// reading it is refused (408): a client trickling its body cannot hold
    /// a connection for long. Default: 10000.
    pub body_timeout_ms: u64,
    /// A reply still pending after this many ms switches to an SSE stream, so
    /// that a client closing the connection cancels the request. Default: 200.
    pub stream_after_ms: u64,
    /// SSE keep-alive comment interval in ms. Default: 15000.
    pub sse_keep_alive_ms: u64,
    /// HTTP worker threads; 0 = one per core. Default: 0.
    pub workers: usize,
    /// Seconds to wait for in-flight requests at shutdown. Default: 5.
    pub shutdown_timeout_secs: u64,
    /// Also accept HTTP/2 without TLS (prior knowledge, "h2c") on the same
    /// port, for a load balancer that multiplexes many streams, such as
    /// thousands of listen streams, over a few connections. Needs the `h2c`
    /// cargo feature, which is off by default: HTTP/2 support makes every
    /// HTTP/1.1 connection's state larger (about 1.8 KiB). Default: false.
    pub h2c: bool,
    /// Open connections per worker; more wait to be accepted. Default: 25000.
    pub max_connections: usize,
    /// The URL clients use to reach the MCP endpoint (behind a proxy or
    /// load balancer), e.g. `https://mcp.example.com/mcp`. Used for the
    /// canonical resource URI and the metadata URL of authorization.
    /// Empty (default): derived from `bind` and `path`.
    pub public_url: String,
    /// TLS: serve HTTPS with this certificate and key.
    pub tls: TlsConfig,
    /// A proxy in front terminates TLS: with authorization on, the server
    /// then starts on a non-loopback address without `http.tls`. Default: false.
    pub behind_tls_proxy: bool,
}

/// `[http.tls]`: both or neither.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM file with the certificate chain, leaf first. Empty (default): plain HTTP.
    pub cert: String,
    /// PEM file with the private key (PKCS#8, PKCS#1 or SEC1).
    pub key: String,
}

impl TlsConfig {
    /// Whether TLS is configured.
    pub fn enabled(&self) -> bool {
        !self.cert.is_empty()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        let loopback = vec!["localhost".to_string(), "127.0.0.1".to_string(), "[::1]".to_string()];
        HttpConfig {
            bind: "127.0.0.1:8080".into(),
            path: "/mcp".into(),
            allowed_hosts: loopback.clone(),
            allowed_origins: loopback,
            max_body_bytes: 4 * 1024 * 1024,
            body_timeout_ms: 10_000,
            stream_after_ms: 200,
            sse_keep_alive_ms: 15_000,
            workers: 0,
            shutdown_timeout_secs: 5,
            h2c: false,
            max_connections: 25_000,
            public_url: String::new(),
            tls: TlsConfig::default(),
            behind_tls_proxy: false,
        }
    }
}

/// `[stdio]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StdioConfig {
    /// Longest accepted line in bytes; longer → an error, and the line is skipped. Default: 4 MiB.
    pub max_line_bytes: usize,
    /// Messages buffered for the stdout writer. Default: 1024.
    pub writer_buffer: usize,
    /// At EOF on stdin (or shutdown), ms granted to in-flight requests before
    /// those still running answer -32603 and the process exits. Default: 1000.
    pub drain_ms: u64,
    /// Most requests running at once on the connection. At the cap the
    /// server reads no further input until one ends (back-pressure: nothing
    /// the client sent is dropped, and a client that stops reading stdout
    /// stops the server's reading too). Default: 1024.
    pub max_in_flight: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig { max_line_bytes: 4 * 1024 * 1024, writer_buffer: 1024, drain_ms: 1000, max_in_flight: 1024 }
    }
}

/// `[request]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RequestConfig {
    /// A request still running after this many ms is cancelled and answered
    /// with an internal error. Default: 60000.
    pub timeout_ms: u64,
    /// Outbound messages (notifications + result) buffered per request before
    /// the handler waits. Default: 64.
    pub outbound_buffer: usize,
    /// Mailbox capacity of each request actor. Default: 16 (it only receives
    /// cancellation).
    pub mailbox: usize,
}

impl Default for RequestConfig {
    fn default() -> Self {
        RequestConfig { timeout_ms: 60_000, outbound_buffer: 64, mailbox: 16 }
    }
}
