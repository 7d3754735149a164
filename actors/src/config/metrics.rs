//! `[metrics]`: Prometheus metrics.

use serde::{Deserialize, Serialize};

/// `[metrics]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Record metrics and serve them. Default: true.
    pub enabled: bool,
    /// Empty (default): serve `path` on the main port. `ADDR:PORT`: on a
    /// listener of its own (recommended when the main port is reachable
    /// from outside: metrics then need no exposure beyond the scraper's
    /// network, and no authorization).
    pub bind: String,
    /// The path of the text exposition. Default: `/metrics`.
    pub path: String,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig { enabled: true, bind: String::new(), path: "/metrics".into() }
    }
}
