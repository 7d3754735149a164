//! Typed configuration. `config/default.toml` mirrors [`Config::default`]
//! key for key (a test checks they agree); every field documents its default
//! and why. Precedence: defaults < file (`--config`) < `ACTIX_MCP_*` env < CLI flags.
//! Reading a file needs the `config-file` feature (part of `cli`).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

mod audit;
mod auth;
mod choices;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod error;
mod events;
mod features;
mod fs;
mod gateway;
mod globs;
mod health;
mod hub;
mod log;
mod metrics;
mod otel;
mod policy;
mod quotas;
mod redis;
mod server;
mod session;
mod shutdown;
mod status;
mod tasks;
mod transport;
mod webhooks;

pub use audit::AuditConfig;
pub use auth::{ApiKeyConfig, AuthConfig, IntrospectionConfig, ItemScopesConfig, ASYMMETRIC_ALGORITHMS};
pub use choices::{
    AuditWhenFull, AuthMode, HubBackend, LegacyStore, LogFormat, PolicyMode, QuotaBy, QuotasFail, TasksStore,
};
pub use error::ConfigError;
pub use events::{EventsConfig, EventsHistory};
pub use features::{built_with, needs_feature, FEATURES};
pub use fs::FsConfig;
pub use gateway::{GatewayConfig, UpstreamConfig};
pub(crate) use globs::glob_set;
pub use health::HealthConfig;
pub use hub::HubConfig;
pub use log::{parse_level, LogConfig};
pub use metrics::MetricsConfig;
pub use otel::OtelConfig;
pub use policy::PolicyConfig;
pub use quotas::QuotaConfig;
pub use redis::{RedisConfig, RedisTarget};
pub use server::{CacheConfig, CatalogConfig, ServerConfig};
pub use session::{LegacyConfig, MrtrConfig};
pub use shutdown::ShutdownConfig;
pub use status::StatusConfig;
pub use tasks::TasksConfig;
pub use transport::{HttpConfig, RequestConfig, StdioConfig, TlsConfig};
#[cfg(feature = "webhooks")]
pub(crate) use webhooks::origin_of;
pub use webhooks::WebhooksConfig;

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Authorization of HTTP requests.
    pub auth: AuthConfig,
    /// Liveness and readiness endpoints.
    pub health: HealthConfig,
    /// Leaving a load balancer's rotation at SIGTERM.
    pub shutdown: ShutdownConfig,
    /// Prometheus metrics.
    pub metrics: MetricsConfig,
    /// The live status page.
    pub status: StatusConfig,
    /// OpenTelemetry span export (cargo feature `otel`).
    pub otel: OtelConfig,
    /// The Tasks extension.
    pub tasks: TasksConfig,
    /// The Events extension's long polls and streams.
    pub events: EventsConfig,
    /// What applies to every upstream server.
    pub gateway: GatewayConfig,
    /// Other MCP servers served through this one (`[[upstreams]]`).
    pub upstreams: Vec<UpstreamConfig>,
    /// The audit log of calls (`[audit]`).
    pub audit: AuditConfig,
    /// Which calls a caller may make (`[policy]`, Cedar).
    pub policy: PolicyConfig,
    /// Where Redis is (`[redis]`: a URL or Redis Sentinel), for the hub,
    /// the task store and the quotas.
    pub redis: RedisConfig,
    /// How many calls each caller, tool or upstream may make (`[[quotas]]`):
    /// counted in Redis across instances when `hub.backend = "redis"`, else
    /// in this process.
    pub quotas: Vec<QuotaConfig>,
    /// A call a quota applies to while its counters cannot be reached:
    /// `open` lets it through, `closed` refuses it. Default: `open`.
    pub quotas_fail: QuotasFail,
    /// In memory: at most this many counters (quota × caller, tool or
    /// upstream) at once; a new one past it, once the ended windows are
    /// swept, is `quotas_fail`'s. Default: 100000.
    pub quotas_max_keys: usize,
    /// In Redis: a count not answered within this many ms is
    /// `quotas_fail`'s (below `http.stream_after_ms`, so that a refusal
    /// keeps its status). Default: 100.
    pub quotas_timeout_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            server: Default::default(),
            http: Default::default(),
            stdio: Default::default(),
            request: Default::default(),
            cache: Default::default(),
            log: Default::default(),
            catalog: Default::default(),
            hub: Default::default(),
            fs: Default::default(),
            mrtr: Default::default(),
            legacy: Default::default(),
            auth: Default::default(),
            health: Default::default(),
            shutdown: Default::default(),
            metrics: Default::default(),
            status: Default::default(),
            otel: Default::default(),
            tasks: Default::default(),
            events: Default::default(),
            gateway: Default::default(),
            upstreams: Default::default(),
            audit: Default::default(),
            policy: Default::default(),
            redis: Default::default(),
            quotas: Default::default(),
            quotas_fail: Default::default(),
            quotas_max_keys: 100_000,
            quotas_timeout_ms: 100,
        }
    }
}

impl Config {
    /// Reads a TOML file over the defaults. The relative paths it gives
    /// of the files the server keeps beside its configuration
    /// (`policy.file`, `policy.schema`, `audit.file`, `gateway.pins`) are
    /// relative to the file's directory, wherever the program runs from;
    /// every other path (`fs.root`, `http.tls`, an upstream's `command`,
    /// `cwd` and `bearer_file`), and a path given by a variable or a flag,
    /// to the working directory.
    #[cfg(feature = "config-file")]
    #[cfg_attr(docsrs, doc(cfg(feature = "config-file")))]
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        let mut config = Self::from_toml(&text).map_err(|e| ConfigError(format!("{}: {}", path.display(), e.0)))?;
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        config.resolve_beside(path.parent().unwrap_or(std::path::Path::new("")));
        Ok(config)
    }

    /// Makes the relative paths of the files kept beside the configuration
    /// (`policy.file`, `policy.schema`, `audit.file`, `gateway.pins`)
    /// relative to `dir` instead, as `Config::from_file` does with the
    /// file's directory.
    pub fn resolve_beside(&mut self, dir: &std::path::Path) {
        for file in [&mut self.policy.file, &mut self.policy.schema, &mut self.audit.file, &mut self.gateway.pins] {
            if file.is_empty() || std::path::Path::new(file.as_str()).is_absolute() {
                continue;
            }
            // A directory that is not UTF-8 leaves the path as it was.
            if let Some(beside) = dir.join(file.as_str()).to_str() {
                *file = beside.to_owned();
            }
        }
    }

    /// Parses TOML over the defaults (no file: relative paths stay relative
    /// to the working directory).
    #[cfg(feature = "config-file")]
    #[cfg_attr(docsrs, doc(cfg(feature = "config-file")))]
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The process's `ACTIX_MCP_*` environment variables, for [`Config::apply_env`].
    pub fn env_overrides() -> Vec<(String, String)> {
        std::env::vars().filter(|(k, _)| k.starts_with("ACTIX_MCP_")).collect()
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
                "ACTIX_MCP_SKILLS" => self.fs.skills = value,
                "ACTIX_MCP_MRTR_KEY" => self.mrtr.key = value,
                "ACTIX_MCP_MRTR_KEYS" => self.mrtr.keys = list(&value),
                "ACTIX_MCP_HUB_BACKEND" => self.hub.backend = value.parse()?,
                "ACTIX_MCP_REDIS_URL" => self.hub.redis_url = value,
                "ACTIX_MCP_REDIS_SENTINELS" => self.redis.sentinels = list(&value),
                "ACTIX_MCP_REDIS_MASTER" => self.redis.master = value,
                "ACTIX_MCP_LOG_LEVEL" => self.log.level = value,
                "ACTIX_MCP_LOG_FORMAT" => self.log.format = value.parse()?,
                "ACTIX_MCP_MAX_BODY_BYTES" => self.http.max_body_bytes = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_REQUEST_TIMEOUT_MS" => self.request.timeout_ms = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_WORKERS" => self.http.workers = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_H2C" => self.http.h2c = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_MAX_CONNECTIONS" => self.http.max_connections = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_PUBLIC_URL" => self.http.public_url = value,
                "ACTIX_MCP_DRAIN_MS" => self.shutdown.drain_ms = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_TLS_CERT" => self.http.tls.cert = value,
                "ACTIX_MCP_TLS_KEY" => self.http.tls.key = value,
                "ACTIX_MCP_BEHIND_TLS_PROXY" => self.http.behind_tls_proxy = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_STATUS" => self.status.enabled = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_METRICS" => self.metrics.enabled = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_METRICS_BIND" => self.metrics.bind = value,
                "ACTIX_MCP_OTEL_ENDPOINT" => self.otel.endpoint = value,
                "ACTIX_MCP_TASK_ID_PREFIX" => self.tasks.id_prefix = value,
                "ACTIX_MCP_TASKS_STORE" => self.tasks.store = value.parse()?,
                "ACTIX_MCP_LEGACY_STORE" => self.legacy.store = value.parse()?,
                "ACTIX_MCP_REQUIRE_BACKEND" => self.hub.require_backend = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_AUDIT_FILE" => self.audit.file = value,
                "ACTIX_MCP_POLICY_FILE" => self.policy.file = value,
                "ACTIX_MCP_POLICY_MODE" => self.policy.mode = value.parse()?,
                "ACTIX_MCP_QUOTAS_FAIL" => self.quotas_fail = value.parse()?,
                "ACTIX_MCP_AUTH_MODE" => self.auth.mode = value.parse()?,
                "ACTIX_MCP_AUTH_RESOURCE" => self.auth.resource = value,
                "ACTIX_MCP_AUTH_ISSUERS" => self.auth.issuers = list(&value),
                "ACTIX_MCP_AUTH_JWKS_URI" => self.auth.jwks_uri = value,
                "ACTIX_MCP_AUTH_REQUIRED_SCOPES" => self.auth.required_scopes = list(&value),
                "ACTIX_MCP_AUTH_INTROSPECTION_ENDPOINT" => self.auth.introspection.endpoint = value,
                "ACTIX_MCP_AUTH_INTROSPECTION_CLIENT_ID" => self.auth.introspection.client_id = value,
                "ACTIX_MCP_AUTH_INTROSPECTION_SECRET" => self.auth.introspection.client_secret = value,
                _ => {}
            }
        }
        self.validate()
    }

    /// Checks values the types cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        parse_level(&self.log.level)?;
        for (key, path) in [
            ("health.liveness_path", &self.health.liveness_path),
            ("health.readiness_path", &self.health.readiness_path),
        ] {
            if !path.starts_with('/') || *path == self.http.path {
                return Err(ConfigError(format!("{key} must start with '/' and differ from http.path, not {path:?}")));
            }
        }
        self.validate_tasks()?;
        if !self.http.path.starts_with('/') {
            return Err(ConfigError(format!("http.path must start with '/', not {:?}", self.http.path)));
        }
        features::validate(self)?;
        self.http
            .bind
            .parse::<SocketAddr>()
            .map_err(|e| ConfigError(format!("http.bind {:?}: {e}", self.http.bind)))?;
        self.validate_versions()?;
        self.mrtr.decoded_keys()?;
        redis::validate(&self.redis, &self.hub.redis_url, &HubConfig::default().redis_url)?;
        #[cfg(feature = "redis")]
        if (self.hub.backend == HubBackend::Redis
            || self.tasks.in_redis(self.hub.backend)
            || self.legacy.in_redis(self.hub.backend))
            && let RedisTarget::Url(url) = self.redis_target()
        {
            // The key it came from: redis.url, else hub.redis_url.
            let key = if self.redis.url.is_empty() { "hub.redis_url" } else { "redis.url" };
            ::redis::Client::open(url.as_str()).map_err(|e| ConfigError(format!("{key} {url:?}: {e}")))?;
        }
        self.metrics.validate()?;
        self.audit.validate()?;
        quotas::validate(&self.quotas, self.quotas_max_keys, self.quotas_timeout_ms)?;
        self.auth.validate()?;
        self.validate_transport_security()?;
        self.validate_resource()?;
        gateway::validate(&self.gateway, &self.upstreams)?;
        self.validate_limits()
    }

    /// The `[tasks]` values.
    fn validate_tasks(&self) -> Result<(), ConfigError> {
        if self.tasks.lease_ms < 300 {
            return Err(ConfigError("tasks.lease_ms must be at least 300".into()));
        }
        if !self.tasks.id_prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(ConfigError(format!(
                "tasks.id_prefix may hold letters, digits and '-' only, not {:?}",
                self.tasks.id_prefix
            )));
        }
        if self.tasks.max_tasks == 0 || self.tasks.ttl_ms == 0 {
            return Err(ConfigError("tasks.max_tasks and tasks.ttl_ms must be above 0".into()));
        }
        Ok(())
    }

    /// `server.versions`: at least one, each known. A legacy-only list is
    /// allowed: such a server answers `initialize` and refuses stateless requests.
    fn validate_versions(&self) -> Result<(), ConfigError> {
        if self.server.versions.is_empty() {
            return Err(ConfigError("server.versions must name at least one version".into()));
        }
        for v in &self.server.versions {
            if mcp_protocol::ProtocolVersion::parse(v).is_none() {
                return Err(ConfigError(format!("server.versions: unknown protocol version {v:?}")));
            }
        }
        Ok(())
    }

    /// OAuth needs the URL clients reach the server at: tokens name it and
    /// the metadata advertises it, and behind a proxy or with several
    /// instances the bind address is not it.
    fn validate_resource(&self) -> Result<(), ConfigError> {
        if self.auth.mode == AuthMode::Oauth && self.auth.resource.is_empty() && self.http.public_url.is_empty() {
            Err(ConfigError(format!(
                "auth.mode = \"oauth\" needs http.public_url: the URL clients reach this server at, which tokens \
                 must name and the metadata advertises (the bind address, {}, is not it behind a proxy or with \
                 several instances); e.g. http.public_url = \"https://mcp.example.com{}\"",
                self.http.bind, self.http.path
            )))
        } else {
            Ok(())
        }
    }

    /// With authorization on, tokens must not cross a network in the clear:
    /// a non-loopback address needs `http.tls` or `http.behind_tls_proxy`.
    fn validate_transport_security(&self) -> Result<(), ConfigError> {
        let tls = &self.http.tls;
        if tls.cert.is_empty() != tls.key.is_empty() {
            return Err(ConfigError("http.tls needs both cert and key".into()));
        }
        if !self.http.public_url.is_empty() {
            url::Url::parse(&self.http.public_url)
                .map_err(|e| ConfigError(format!("http.public_url {:?}: {e}", self.http.public_url)))?;
        }
        let loopback = self.http.bind.parse::<SocketAddr>().map(|a| a.ip().is_loopback()).unwrap_or(false);
        if self.auth.enabled() && !loopback && !tls.enabled() && !self.http.behind_tls_proxy {
            return Err(ConfigError(format!(
                "auth is on and http.bind {} is not loopback: set http.tls.cert and http.tls.key, \
                 or http.behind_tls_proxy = true when a proxy terminates TLS (tokens must not travel in the clear)",
                self.http.bind
            )));
        }
        Ok(())
    }

    /// The canonical URI of the MCP endpoint: `auth.resource`, else
    /// `http.public_url`, else derived from `http.bind` and `http.path`.
    pub fn canonical_resource(&self) -> String {
        if !self.auth.resource.is_empty() {
            return self.auth.resource.trim_end_matches('/').to_owned();
        }
        if !self.http.public_url.is_empty() {
            return self.http.public_url.trim_end_matches('/').to_owned();
        }
        let scheme = if self.http.tls.enabled() || self.http.behind_tls_proxy { "https" } else { "http" };
        format!("{scheme}://{}{}", self.http.bind, self.http.path)
    }

    /// Every size, count and time limit is at least 1.
    fn validate_limits(&self) -> Result<(), ConfigError> {
        for (name, value) in [
            ("server.page_size", self.server.page_size),
            ("http.max_body_bytes", self.http.max_body_bytes),
            ("http.body_timeout_ms", self.http.body_timeout_ms as usize),
            ("stdio.max_line_bytes", self.stdio.max_line_bytes),
            ("stdio.writer_buffer", self.stdio.writer_buffer),
            ("stdio.max_in_flight", self.stdio.max_in_flight),
            ("request.outbound_buffer", self.request.outbound_buffer),
            ("request.mailbox", self.request.mailbox),
            ("hub.max_listeners", self.hub.max_listeners),
            ("hub.listener_buffer", self.hub.listener_buffer),
            ("hub.max_resource_subscriptions", self.hub.max_resource_subscriptions),
            ("hub.max_uri_bytes", self.hub.max_uri_bytes),
            ("hub.relay_mailbox", self.hub.relay_mailbox),
            ("hub.mailbox", self.hub.mailbox),
            ("fs.max_files", self.fs.max_files),
            ("legacy.max_sessions", self.legacy.max_sessions),
            ("fs.search_max_results", self.fs.search_max_results),
            ("fs.max_frontmatter_depth", self.fs.max_frontmatter_depth),
        ] {
            if value == 0 {
                return Err(ConfigError(format!("{name} must be at least 1")));
            }
        }
        self.events.validate()?;
        let skills = std::path::Path::new(&self.fs.skills);
        if skills.is_absolute() || skills.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            return Err(ConfigError(format!(
                "fs.skills = {:?}: a directory relative to fs.root, without ..",
                self.fs.skills
            )));
        }
        Ok(())
    }

    /// The served protocol versions, parsed.
    pub fn protocol_versions(&self) -> Vec<mcp_protocol::ProtocolVersion> {
        self.server.versions.iter().filter_map(|v| mcp_protocol::ProtocolVersion::parse(v)).collect()
    }
}

/// A comma-separated list, items trimmed, empty items dropped.
fn list(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

#[cfg(all(test, feature = "config-file"))]
mod tests;
