//! `[health]`: liveness and readiness endpoints for load balancers and
//! orchestrators.

use serde::{Deserialize, Serialize};

/// `[health]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HealthConfig {
    /// Serve the two endpoints on the main port (no Origin check, no
    /// authorization). Default: true.
    pub enabled: bool,
    /// Liveness: 200 while the process answers. Default: `/healthz`.
    pub liveness_path: String,
    /// Readiness: 200 when the instance should get traffic, 503 while it
    /// drains at shutdown, while the hub is at capacity, or (with
    /// `hub.require_backend`) while Redis is unreachable. Default: `/readyz`.
    pub readiness_path: String,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig { enabled: true, liveness_path: "/healthz".into(), readiness_path: "/readyz".into() }
    }
}
