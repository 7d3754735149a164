//! Typed configuration. `config/default.toml` mirrors [`Config::default`]
//! key for key (a test checks they agree); every field documents its default
//! and why. Precedence: defaults < file (`--config`) < `ACTIX_MCP_*` env < CLI flags.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

mod audit;
mod auth;
mod choices;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod error;
mod features;
mod fs;
mod gateway;
mod health;
mod hub;
mod log;
mod metrics;
mod otel;
mod policy;
mod server;
mod session;
mod shutdown;
mod status;
mod tasks;
mod transport;

pub use audit::AuditConfig;
pub use auth::{ApiKeyConfig, AuthConfig, IntrospectionConfig, ItemScopesConfig, ASYMMETRIC_ALGORITHMS};
pub use choices::{AuditWhenFull, AuthMode, HubBackend, LogFormat, PolicyMode, TasksStore};
pub use error::ConfigError;
pub use features::{built_with, needs_feature, FEATURES};
pub use fs::FsConfig;
pub use gateway::{GatewayConfig, UpstreamConfig};
pub use health::HealthConfig;
pub use hub::HubConfig;
pub use log::{parse_level, LogConfig};
pub use metrics::MetricsConfig;
pub use otel::OtelConfig;
pub use policy::PolicyConfig;
pub use server::{CacheConfig, CatalogConfig, ServerConfig};
pub use session::{LegacyConfig, MrtrConfig};
pub use shutdown::ShutdownConfig;
pub use status::StatusConfig;
pub use tasks::TasksConfig;
pub use transport::{HttpConfig, RequestConfig, StdioConfig, TlsConfig};

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
    /// What applies to every upstream server.
    pub gateway: GatewayConfig,
    /// Other MCP servers served through this one (`[[upstreams]]`).
    pub upstreams: Vec<UpstreamConfig>,
    /// The audit log of calls (`[audit]`).
    pub audit: AuditConfig,
    /// Which calls a caller may make (`[policy]`, Cedar).
    pub policy: PolicyConfig,
}

impl Config {
    /// Reads a TOML file over the defaults.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        Self::from_toml(&text).map_err(|e| ConfigError(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses TOML over the defaults.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
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
                "ACTIX_MCP_HUB_BACKEND" => self.hub.backend = value.parse()?,
                "ACTIX_MCP_REDIS_URL" => self.hub.redis_url = value,
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
                "ACTIX_MCP_REQUIRE_BACKEND" => self.hub.require_backend = value.parse().map_err(|e| bad(&e))?,
                "ACTIX_MCP_AUDIT_FILE" => self.audit.file = value,
                "ACTIX_MCP_POLICY_FILE" => self.policy.file = value,
                "ACTIX_MCP_POLICY_MODE" => self.policy.mode = value.parse()?,
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
        self.mrtr.decoded_key()?;
        #[cfg(feature = "redis")]
        if self.hub.backend == HubBackend::Redis {
            redis::Client::open(self.hub.redis_url.as_str())
                .map_err(|e| ConfigError(format!("hub.redis_url {:?}: {e}", self.hub.redis_url)))?;
        }
        self.metrics.validate()?;
        self.audit.validate()?;
        self.auth.validate()?;
        self.validate_transport_security()?;
        self.validate_resource()?;
        gateway::validate(&self.gateway, &self.upstreams)?;
        self.validate_limits()
    }

    /// The `[tasks]` values.
    fn validate_tasks(&self) -> Result<(), ConfigError> {
        #[cfg(feature = "redis")]
        if self.tasks.in_redis(self.hub.backend) {
            redis::Client::open(self.hub.redis_url.as_str())
                .map_err(|e| ConfigError(format!("hub.redis_url {:?} (for tasks.store): {e}", self.hub.redis_url)))?;
        }
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

#[cfg(all(test, feature = "cli"))]
mod tests {
    use super::*;

    #[test]
    fn default_toml_equals_default() {
        let text = include_str!("../../../config/default.toml");
        assert_eq!(Config::from_toml(text).unwrap(), Config::default());
    }

    #[test]
    fn the_cluster_example_loads() {
        let c = Config::from_toml(include_str!("../../../config/cluster.toml")).unwrap();
        assert_eq!(c.hub.backend, HubBackend::Redis);
    }

    #[test]
    fn the_auth_example_loads() {
        let c = Config::from_toml(include_str!("../../../config/auth.toml")).unwrap();
        assert_eq!(c.auth.mode, AuthMode::Oauth);
        assert_eq!(c.canonical_resource(), "https://mcp.example.com/mcp");
    }

    #[test]
    fn rejects_unknown_keys_and_bad_values() {
        assert!(Config::from_toml("[http]\nbindd = \"x\"").is_err());
        assert!(Config::from_toml("[log]\nformat = \"xml\"").is_err());
        assert!(Config::from_toml("[server]\nversions = [\"1999-01-01\"]").is_err());
        // An initialize-era server only (what old clients and a client's fallback are tested with).
        assert!(Config::from_toml("[server]\nversions = [\"2025-11-25\"]").is_ok());
        assert!(Config::from_toml("[http]\nmax_body_bytes = 0").is_err());
    }

    #[test]
    fn a_wrong_word_is_refused_with_the_valid_ones() {
        for (toml, words) in [
            ("[hub]\nbackend = \"redsi\"", &["memory", "redis"][..]),
            ("[auth]\nmode = \"oath\"", &["none", "oauth", "api_key"]),
            ("[log]\nformat = \"xml\"", &["term", "json"]),
            ("[cache]\nscope = \"shared\"", &["public", "private"]),
            ("[tasks]\nstore = \"disk\"", &["", "memory", "redis"]),
        ] {
            let e = Config::from_toml(toml).unwrap_err().0;
            assert!(e.contains("unknown variant"), "{toml}: {e}");
            for word in words {
                assert!(e.contains(&format!("`{word}`")), "{toml} lists {word:?}: {e}");
            }
        }
        let e = Config::default().apply_env([("ACTIX_MCP_HUB_BACKEND".to_string(), "redsi".to_string())]);
        assert_eq!(e.unwrap_err().0, r#"hub.backend must be one of "memory", "redis", not "redsi""#);
    }

    #[test]
    fn env_overrides() {
        let mut c = Config::default();
        c.apply_env([("ACTIX_MCP_BIND".to_string(), "127.0.0.1:0".to_string())]).unwrap();
        assert_eq!(c.http.bind, "127.0.0.1:0");
        assert!(c.apply_env([("ACTIX_MCP_WORKERS".to_string(), "many".to_string())]).is_err());
        let vars = [
            ("ACTIX_MCP_AUTH_MODE", "oauth"),
            ("ACTIX_MCP_AUTH_ISSUERS", "http://127.0.0.1:1, https://id.example"),
            ("ACTIX_MCP_PUBLIC_URL", "http://127.0.0.1:8080/mcp"),
        ];
        c.apply_env(vars.map(|(k, v)| (k.to_string(), v.to_string()))).unwrap();
        assert_eq!(c.auth.issuers, ["http://127.0.0.1:1", "https://id.example"]);
        let mut g = Config::default();
        let governance = [
            ("ACTIX_MCP_AUDIT_FILE", "/var/log/a.jsonl"),
            ("ACTIX_MCP_POLICY_FILE", "p.cedar"),
            ("ACTIX_MCP_POLICY_MODE", "shadow"),
        ];
        if cfg!(feature = "policy") {
            g.apply_env(governance.map(|(k, v)| (k.to_string(), v.to_string()))).unwrap();
            assert_eq!(
                (g.audit.file.as_str(), g.policy.file.as_str(), g.policy.mode),
                ("/var/log/a.jsonl", "p.cedar", PolicyMode::Shadow)
            );
        }
        assert!(g.apply_env([("ACTIX_MCP_POLICY_MODE".to_string(), "lax".to_string())]).is_err());
    }

    #[test]
    fn auth_off_loopback_needs_tls_or_a_proxy() {
        let oauth = "[auth]\nmode = \"oauth\"\nissuers = [\"https://id.example.com\"]\n";
        // OAuth needs the URL clients reach the server at.
        assert!(Config::from_toml(oauth).unwrap_err().0.contains("http.public_url"));
        let on = format!("{oauth}resource = \"https://mcp.example.com/mcp\"\n");
        assert!(Config::from_toml(&on).is_ok());
        let public = format!("{on}[http]\nbind = \"0.0.0.0:8080\"\n");
        assert!(Config::from_toml(&public).unwrap_err().0.contains("http.tls"));
        assert!(Config::from_toml(&format!("{public}behind_tls_proxy = true\n")).is_ok());
        let tls = format!("{public}[http.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n");
        assert_eq!(Config::from_toml(&tls).unwrap().canonical_resource(), "https://mcp.example.com/mcp");
        let mut derived = Config::default();
        derived.http.bind = "0.0.0.0:8080".into();
        derived.http.tls.cert = "c.pem".into();
        derived.http.tls.key = "k.pem".into();
        assert_eq!(derived.canonical_resource(), "https://0.0.0.0:8080/mcp");
        assert!(Config::from_toml("[http.tls]\ncert = \"c.pem\"\nkey = \"\"\n").is_err());
    }
}
