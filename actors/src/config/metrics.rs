//! `[metrics]`: Prometheus metrics.

use serde::{Deserialize, Serialize};

/// `[metrics]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Record metrics and serve them. Default: true in a build with the
    /// `metrics` feature (the default features), false without it (where
    /// `true` is refused at start).
    pub enabled: bool,
    /// Empty (default): serve `path` on the main port (an embedding
    /// application's too, where `transport::http::configure` mounts it).
    /// `ADDR:PORT`: on a listener of its own instead (recommended when the
    /// main port is reachable from outside: metrics then need no exposure
    /// beyond the scraper's network, and no authorization). The server
    /// starts that listener when it is built, whether it then serves HTTP
    /// itself or is mounted in an application's actix-web server; an
    /// address it cannot listen on fails the build, naming this key.
    pub bind: String,
    /// The path of the text exposition. Default: `/metrics`.
    pub path: String,
    /// With authorization on, the exposition on the main port is served
    /// only to a caller whose credentials grant this scope (401 without
    /// credentials, 403 without the scope). Default: `metrics`.
    pub scope: String,
    /// Serve the exposition on the main port to anyone, authorization on
    /// or not. Default: false.
    pub public: bool,
    /// Label `tools/call` durations with the tool's name
    /// (`gen_ai_tool_name`). Default: false: tool names are chosen by
    /// whoever registers tools, so they are left out unless asked for; when
    /// on, only names in the catalog are used (others read `_other`).
    pub tool_labels: bool,
}

impl MetricsConfig {
    /// Checks the values the types cannot.
    pub fn validate(&self) -> Result<(), super::ConfigError> {
        if !self.bind.is_empty() {
            self.bind
                .parse::<std::net::SocketAddr>()
                .map_err(|e| super::ConfigError(format!("metrics.bind {:?}: {e}", self.bind)))?;
        }
        if self.scope.trim().is_empty() {
            return Err(super::ConfigError("metrics.scope must name a scope".into()));
        }
        Ok(())
    }
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: cfg!(feature = "metrics"),
            bind: String::new(),
            path: "/metrics".into(),
            scope: "metrics".into(),
            public: false,
            tool_labels: false,
        }
    }
}
