//! `[shutdown]`: how an HTTP server leaves a load balancer's rotation.

use serde::{Deserialize, Serialize};

/// `[shutdown]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShutdownConfig {
    /// At SIGTERM, ms during which the server drains before it stops
    /// accepting: `/readyz` answers 503 so that the balancer takes the
    /// instance out of rotation, while every request that still arrives
    /// is served (each response with `Connection: close`, which retires
    /// the balancer's kept-alive connections). Then the server stops
    /// accepting, listen streams get their completion result and running
    /// requests get `http.shutdown_timeout_secs`. Set it above the
    /// balancer's readiness period. A second signal, or SIGINT (Ctrl-C),
    /// skips it. Default: 5000.
    pub drain_ms: u64,
}

impl Default for ShutdownConfig {
    fn default() -> Self {
        ShutdownConfig { drain_ms: 5000 }
    }
}
