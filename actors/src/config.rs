//! Typed configuration. `config/default.toml` mirrors [`Config::default`]
//! key for key (a test checks they agree); every field documents its default
//! and why. Precedence: defaults < file (`--config`) < `ACTIX_MCP_*` env < CLI flags.

use std::net::SocketAddr;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Identity and guidance sent in `server/discover`.
    pub server: ServerConfig,
    /// Streamable HTTP transport.
    pub http: HttpConfig,
    /// stdio transport.
    pub stdio: StdioConfig,
    /// Per-request actors.
    pub request: RequestConfig,
    /// Caching hints on cacheable results.
    pub cache: CacheConfig,
    /// Logging (slog, always to stderr).
    pub log: LogConfig,
    /// Which built-in catalog to serve.
    pub catalog: CatalogConfig,
    /// Subscriptions (`subscriptions/listen`) and their fan-out.
    pub hub: HubConfig,
    /// The filesystem catalog (`catalog.name = "fs"`).
    pub fs: FsConfig,
    /// Multi round-trip requests (`InputRequiredResult`, `requestState`).
    pub mrtr: MrtrConfig,
    /// Legacy (`initialize`) sessions.
    pub legacy: LegacyConfig,
}

/// `[server]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Name in `serverInfo`. Default: `actix-mcp`.
    pub name: String,
    /// Version in `serverInfo`. Default: this crate's version.
    pub version: String,
    /// `instructions` of `server/discover`. Default: a one-line description.
    pub instructions: String,
    /// Protocol versions served, newest first. Stateless versions
    /// (`2026-07-28`, `DRAFT-2026-v1`) are served per request; legacy versions
    /// (`2025-11-25`, `2025-06-18`, `2025-03-26`) after an `initialize`
    /// handshake, in a session. Default: all five (dual-era). Drop the legacy
    /// ones for a modern-only server (then `initialize` is answered with an
    /// error naming the supported versions).
    pub versions: Vec<String>,
    /// Items per page of the list methods. Default: 100 (large enough for
    /// most catalogs in one page; bounded so a huge catalog cannot make one
    /// response unbounded).
    pub page_size: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            name: "actix-mcp".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: "An MCP server built on actix-mcp.".into(),
            versions: ["2026-07-28", "DRAFT-2026-v1", "2025-11-25", "2025-06-18", "2025-03-26"]
                .into_iter()
                .map(String::from)
                .collect(),
            page_size: 100,
        }
    }
}

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
            stream_after_ms: 200,
            sse_keep_alive_ms: 15_000,
            workers: 0,
            shutdown_timeout_secs: 5,
            h2c: false,
            max_connections: 25_000,
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
    /// At EOF on stdin, ms granted to in-flight requests before they are
    /// cancelled and the process exits. Default: 1000.
    pub drain_ms: u64,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig { max_line_bytes: 4 * 1024 * 1024, writer_buffer: 1024, drain_ms: 1000 }
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

/// `[cache]`: defaults for items without their own hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// `ttlMs` of list results. Default: 0 (catalogs may change at runtime).
    pub list_ttl_ms: u64,
    /// `ttlMs` of `resources/read` and `server/discover`. Default: 0.
    pub read_ttl_ms: u64,
    /// `cacheScope`: `public` or `private`. Default: `public`.
    pub scope: String,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { list_ttl_ms: 0, read_ttl_ms: 0, scope: "public".into() }
    }
}

/// `[log]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// `term` (human) or `json`. Default: `term`.
    pub format: String,
    /// `trace`, `debug`, `info`, `warning`, `error` or `critical`. Default: `info`.
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { format: "term".into(), level: "info".into() }
    }
}

/// `[fs]`: a read-only catalog of one directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsConfig {
    /// The directory served; nothing outside it is ever read. Default: `.`.
    pub root: String,
    /// Glob patterns (relative to `root`) of files served. Default: `["**"]`.
    pub include: Vec<String>,
    /// Glob patterns never served, even when included. Default: VCS,
    /// build and dependency folders at any depth (`**/.git/**`,
    /// `**/target/**`, `**/node_modules/**`) and `.conformance/**`.
    pub exclude: Vec<String>,
    /// Larger files are neither listed nor read. Default: 1 MiB.
    pub max_file_bytes: u64,
    /// Most files listed; the walk stops there (bounded memory). Default: 10000.
    pub max_files: usize,
    /// Most matches one `search` call returns. Default: 100.
    pub search_max_results: usize,
    /// Watch the directory and publish `resources/updated` and
    /// `resources/list_changed`. Default: true.
    pub watch: bool,
    /// A changed path is reported once it has been quiet this long, in ms
    /// (a save made of several writes is one change). Default: 100.
    pub debounce_ms: u64,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            root: ".".into(),
            include: vec!["**".into()],
            exclude: vec![
                "**/.git/**".into(),
                "**/target/**".into(),
                "**/node_modules/**".into(),
                ".conformance/**".into(),
            ],
            max_file_bytes: 1024 * 1024,
            max_files: 10_000,
            search_max_results: 100,
            watch: true,
            debounce_ms: 100,
        }
    }
}

/// `[mrtr]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MrtrConfig {
    /// Base64 of the secret (at least 32 bytes) that authenticates
    /// `requestState`. Every instance behind one load balancer needs the same
    /// key. Empty (the default): a random key per process, which only works
    /// for a single instance and does not survive a restart.
    pub key: String,
    /// How long a `requestState` stays valid, in ms. Default: 600000 (10 min).
    pub state_ttl_ms: u64,
}

impl Default for MrtrConfig {
    fn default() -> Self {
        MrtrConfig { key: String::new(), state_ttl_ms: 600_000 }
    }
}

impl MrtrConfig {
    /// The configured key, decoded; `None` when none is configured.
    pub fn decoded_key(&self) -> Result<Option<Vec<u8>>, ConfigError> {
        use base64::Engine;
        if self.key.is_empty() {
            return Ok(None);
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(self.key.trim())
            .map_err(|e| ConfigError(format!("mrtr.key is not base64: {e}")))?;
        if bytes.len() < 32 {
            return Err(ConfigError(format!("mrtr.key must decode to at least 32 bytes, got {}", bytes.len())));
        }
        Ok(Some(bytes))
    }
}

/// `[legacy]`: sessions of clients that open with `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LegacyConfig {
    /// Most open sessions; more `initialize` requests are refused (HTTP 503).
    /// Default: 10000.
    pub max_sessions: usize,
    /// A session unused this long (ms) expires; its id then answers 404.
    /// Default: 1800000 (30 min).
    pub idle_timeout_ms: u64,
    /// How long a handler waits for the client to answer a server-to-client
    /// request (sampling, elicitation, roots), ms. Default: 300000 (5 min).
    pub input_timeout_ms: u64,
    /// Most input rounds one request may take. Default: 10.
    pub max_input_rounds: u32,
}

impl Default for LegacyConfig {
    fn default() -> Self {
        LegacyConfig {
            max_sessions: 10_000,
            idle_timeout_ms: 1_800_000,
            input_timeout_ms: 300_000,
            max_input_rounds: 10,
        }
    }
}

/// `[catalog]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogConfig {
    /// Built-in catalog: `fs` (a read-only, live catalog of `fs.root`) or
    /// `everything` (the conformance fixture). Default: `fs`.
    pub name: String,
}

impl Default for CatalogConfig {
    fn default() -> Self {
        CatalogConfig { name: "fs".into() }
    }
}

/// `[hub]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HubConfig {
    /// Most open subscriptions; more are refused (HTTP 503). Default: 100000.
    pub max_listeners: usize,
    /// Messages buffered per subscription on its way to the client (SSE
    /// channel, or its share of the stdio writer). A client that lets this
    /// fill has fallen behind and is closed. Default: 256.
    pub listener_buffer: usize,
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
    pub backend: String,
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
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            max_listeners: 100_000,
            listener_buffer: 256,
            relay_mailbox: 1024,
            mailbox: 4096,
            keep_alive_ms: 15_000,
            drain_ms: 2000,
            backend: "memory".into(),
            redis_url: "redis://127.0.0.1:6379/".into(),
            redis_channel_prefix: "actix-mcp".into(),
            dedup_ms: 2000,
            memory_trim_ms: 5000,
        }
    }
}

/// A configuration that could not be loaded.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "configuration: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads a TOML file over the defaults.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        Self::from_toml(&text).map_err(|e| ConfigError(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses TOML over the defaults.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Applies `ACTIX_MCP_*` environment overrides from `vars`.
    pub fn apply_env(&mut self, vars: impl IntoIterator<Item = (String, String)>) -> Result<(), ConfigError> {
        for (key, value) in vars {
            let bad = |e: &dyn std::fmt::Display| ConfigError(format!("{key}={value}: {e}"));
            match key.as_str() {
                "ACTIX_MCP_BIND" => self.http.bind = value,
                "ACTIX_MCP_PATH" => self.http.path = value,
                "ACTIX_MCP_CATALOG" => self.catalog.name = value,
                "ACTIX_MCP_ROOT" => self.fs.root = value,
                "ACTIX_MCP_MRTR_KEY" => self.mrtr.key = value,
                "ACTIX_MCP_HUB_BACKEND" => self.hub.backend = value,
                "ACTIX_MCP_REDIS_URL" => self.hub.redis_url = value,
                "ACTIX_MCP_LOG_LEVEL" => self.log.level = value,
                "ACTIX_MCP_LOG_FORMAT" => self.log.format = value,
                "ACTIX_MCP_MAX_BODY_BYTES" => self.http.max_body_bytes = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_REQUEST_TIMEOUT_MS" => self.request.timeout_ms = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_WORKERS" => self.http.workers = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_H2C" => self.http.h2c = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_MAX_CONNECTIONS" => self.http.max_connections = value.parse().map_err(|e| bad(&e))?,
                _ => {}
            }
        }
        self.validate()
    }

    /// Checks values the types cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !["term", "json"].contains(&self.log.format.as_str()) {
            return Err(ConfigError(format!("log.format must be term or json, not {:?}", self.log.format)));
        }
        crate::logging::parse_level(&self.log.level)?;
        if !["public", "private"].contains(&self.cache.scope.as_str()) {
            return Err(ConfigError(format!("cache.scope must be public or private, not {:?}", self.cache.scope)));
        }
        if !self.http.path.starts_with('/') {
            return Err(ConfigError(format!("http.path must start with '/', not {:?}", self.http.path)));
        }
        if self.http.h2c && !cfg!(feature = "h2c") {
            return Err(ConfigError(
                "http.h2c needs a build with HTTP/2 (cargo build --release -p actix-mcp --features h2c)".into(),
            ));
        }
        self.http
            .bind
            .parse::<SocketAddr>()
            .map_err(|e| ConfigError(format!("http.bind {:?}: {e}", self.http.bind)))?;
        if self.server.versions.is_empty() {
            return Err(ConfigError("server.versions must name at least one version".into()));
        }
        if !self.protocol_versions().iter().any(|v| v.is_stateless()) {
            return Err(ConfigError("server.versions must include a stateless version (2026-07-28)".into()));
        }
        for v in &self.server.versions {
            if mcp_protocol::ProtocolVersion::parse(v).is_none() {
                return Err(ConfigError(format!("server.versions: unknown protocol version {v:?}")));
            }
        }
        self.mrtr.decoded_key()?;
        if !["memory", "redis"].contains(&self.hub.backend.as_str()) {
            return Err(ConfigError(format!("hub.backend must be memory or redis, not {:?}", self.hub.backend)));
        }
        if self.hub.backend == "redis" {
            redis::Client::open(self.hub.redis_url.as_str())
                .map_err(|e| ConfigError(format!("hub.redis_url {:?}: {e}", self.hub.redis_url)))?;
        }
        for (name, value) in [
            ("server.page_size", self.server.page_size),
            ("http.max_body_bytes", self.http.max_body_bytes),
            ("stdio.max_line_bytes", self.stdio.max_line_bytes),
            ("stdio.writer_buffer", self.stdio.writer_buffer),
            ("request.outbound_buffer", self.request.outbound_buffer),
            ("request.mailbox", self.request.mailbox),
            ("hub.max_listeners", self.hub.max_listeners),
            ("hub.listener_buffer", self.hub.listener_buffer),
            ("hub.relay_mailbox", self.hub.relay_mailbox),
            ("hub.mailbox", self.hub.mailbox),
            ("fs.max_files", self.fs.max_files),
            ("legacy.max_sessions", self.legacy.max_sessions),
            ("fs.search_max_results", self.fs.search_max_results),
        ] {
            if value == 0 {
                return Err(ConfigError(format!("{name} must be at least 1")));
            }
        }
        Ok(())
    }

    /// The served protocol versions, parsed.
    pub fn protocol_versions(&self) -> Vec<mcp_protocol::ProtocolVersion> {
        self.server.versions.iter().filter_map(|v| mcp_protocol::ProtocolVersion::parse(v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_toml_equals_default() {
        let text = include_str!("../../config/default.toml");
        assert_eq!(Config::from_toml(text).unwrap(), Config::default());
    }

    #[test]
    fn the_cluster_example_loads() {
        let c = Config::from_toml(include_str!("../../config/cluster.toml")).unwrap();
        assert_eq!(c.hub.backend, "redis");
    }

    #[test]
    fn rejects_unknown_keys_and_bad_values() {
        assert!(Config::from_toml("[http]\nbindd = \"x\"").is_err());
        assert!(Config::from_toml("[log]\nformat = \"xml\"").is_err());
        assert!(Config::from_toml("[server]\nversions = [\"1999-01-01\"]").is_err());
        assert!(Config::from_toml("[server]\nversions = [\"2025-11-25\"]").is_err());
        assert!(Config::from_toml("[http]\nmax_body_bytes = 0").is_err());
    }

    #[test]
    fn env_overrides() {
        let mut c = Config::default();
        c.apply_env([("ACTIX_MCP_BIND".to_string(), "127.0.0.1:0".to_string())]).unwrap();
        assert_eq!(c.http.bind, "127.0.0.1:0");
        assert!(c.apply_env([("ACTIX_MCP_WORKERS".to_string(), "many".to_string())]).is_err());
    }
}
