//! The OTLP/HTTP span exporter (cargo feature `otel`): installed once per
//! process when `otel.endpoint` or the standard `OTEL_EXPORTER_OTLP_*`
//! variables name a collector; spans are batched on a thread of their own
//! and flushed at shutdown.

use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

use crate::config::OtelConfig;

static PROVIDER: OnceLock<Option<(SdkTracerProvider, SdkTracer)>> = OnceLock::new();

/// Where spans go: `otel.endpoint` (the collector's base URL; spans are
/// posted to `/v1/traces` under it), else the standard variables; `None`
/// when neither names one.
fn endpoint(config: &OtelConfig) -> Option<Option<String>> {
    if !config.endpoint.is_empty() {
        return Some(Some(format!("{}/v1/traces", config.endpoint.trim_end_matches('/'))));
    }
    let set = |v: &str| std::env::var(v).is_ok_and(|v| !v.is_empty());
    (set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || set("OTEL_EXPORTER_OTLP_ENDPOINT")).then_some(None)
}

/// Installs the exporter (once per process). `Ok(false)`: no collector is
/// configured; `Err`: the exporter could not be built (the message says why).
pub fn install(config: &OtelConfig, version: &str) -> Result<bool, String> {
    let mut failure = None;
    let installed = PROVIDER.get_or_init(|| {
        let url = endpoint(config)?;
        let mut builder = opentelemetry_otlp::SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
        if let Some(url) = url {
            builder = builder.with_endpoint(url);
        }
        let exporter = builder.build().map_err(|e| failure = Some(e.to_string())).ok()?;
        let resource = Resource::builder()
            .with_service_name(config.service_name.clone())
            .with_attribute(opentelemetry::KeyValue::new("service.version", version.to_owned()))
            .build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        let tracer = provider.tracer("actix-mcp");
        Some((provider, tracer))
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(installed.is_some()),
    }
}

/// The tracer, once installed.
pub(crate) fn tracer() -> Option<&'static SdkTracer> {
    PROVIDER.get().and_then(|p| p.as_ref()).map(|(_, t)| t)
}

/// Exports the spans still batched (at shutdown).
pub fn flush() {
    if let Some(Some((provider, _))) = PROVIDER.get() {
        let _ = provider.force_flush();
    }
}
