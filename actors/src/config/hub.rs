//! `[hub]`: subscriptions, their fan-out and the backend between instances.

use serde::{Deserialize, Serialize};

use super::HubBackend;

/// `[hub]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HubConfig {
    /// Most open subscriptions; more are refused (HTTP 503). Lowered at start
    /// to fit the open-files limit, unless HTTP/2 may carry the streams
    /// (`http.h2c`, or TLS in a build with HTTP/2). Default: 100000.
    pub max_listeners: usize,
    /// Messages buffered per subscription on its way to the client (SSE
    /// channel, or its share of the stdio writer). A client that lets this
    /// fill has fallen behind and is closed. Default: 256.
    pub listener_buffer: usize,
    /// Most distinct URIs one listen stream may name in
    /// `resourceSubscriptions`; more → -32602. Default: 1024.
    pub max_resource_subscriptions: usize,
    /// Longest URI in `resourceSubscriptions`, bytes; longer → -32602.
    /// Default: 4096.
    pub max_uri_bytes: usize,
    /// Events queued for one thread's relay, which hands each to that
    /// thread's listeners. A full relay mailbox means the thread is not
    /// keeping up: the listeners an event was for are closed as fallen
    /// behind. Default: 1024.
    pub relay_mailbox: usize,
    /// Hub mailbox capacity for subscribe requests. Default: 4096.
    pub mailbox: usize,
    /// SSE keep-alive comment interval on listen streams, ms. Default: 15000.
    pub keep_alive_ms: u64,
    /// At shutdown, ms granted to subscriptions to receive their completion
    /// result before the process exits. Default: 2000.
    pub drain_ms: u64,
    /// Where events travel between instances: `memory` (this process only)
    /// or `redis` (pub/sub, for several instances). Default: `memory`.
    pub backend: HubBackend,
    /// Redis URL for `backend = "redis"`. Default: `redis://127.0.0.1:6379/`.
    pub redis_url: String,
    /// Channel prefix; events go on `{prefix}:events`, so several
    /// deployments can share one Redis. Default: `actix-mcp`.
    pub redis_channel_prefix: String,
    /// A change observed in a source shared by several instances (same
    /// file, same modification time and size) seen again within this many ms
    /// is delivered once. Default: 2000.
    pub dedup_ms: u64,
    /// How often (ms) the hub checks whether listeners closed since its last
    /// check and, if so, shrinks its routing maps and returns memory freed in
    /// glibc's heap to the system (glibc keeps it otherwise; this matters when
    /// the server is embedded in a program that uses glibc's allocator, while
    /// the `actix-mcp` binary uses jemalloc, which returns memory itself).
    /// 0 disables it. Default: 5000.
    pub memory_trim_ms: u64,
    /// With `backend = "redis"`: report not ready (`/readyz` 503) while the
    /// link to Redis is down, so that a load balancer sends traffic to
    /// instances whose listen streams hear every instance's changes.
    /// Default: false (local delivery continues through an outage).
    pub require_backend: bool,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            max_listeners: 100_000,
            listener_buffer: 256,
            max_resource_subscriptions: 1024,
            max_uri_bytes: 4096,
            relay_mailbox: 1024,
            mailbox: 4096,
            keep_alive_ms: 15_000,
            drain_ms: 2000,
            backend: HubBackend::Memory,
            redis_url: "redis://127.0.0.1:6379/".into(),
            redis_channel_prefix: "actix-mcp".into(),
            dedup_ms: 2000,
            require_backend: false,
            memory_trim_ms: 5000,
        }
    }
}
