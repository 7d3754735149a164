//! `[otel]`: OpenTelemetry span export (cargo feature `otel`).

use serde::{Deserialize, Serialize};

/// `[otel]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OtelConfig {
    /// The OTLP/HTTP collector's base URL (`http://collector:4318`; spans
    /// go to `/v1/traces` under it). Empty (default): the standard
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// variables, and no export when neither is set. Needs a build with
    /// the `otel` feature.
    pub endpoint: String,
    /// `service.name` of the exported spans. Default: `actix-mcp`.
    pub service_name: String,
}

impl Default for OtelConfig {
    fn default() -> Self {
        OtelConfig { endpoint: String::new(), service_name: "actix-mcp".into() }
    }
}
