//! The process-wide Prometheus recorder: installed once (the first server
//! with metrics on installs it; an embedder's own global recorder is kept),
//! with histogram buckets and descriptions, and kept tidy by a background
//! upkeep.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use super::*;

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the recorder (once per process). `false` when another global
/// recorder was installed first (the embedder's own): then `/metrics` has
/// nothing of this crate to show.
pub fn install() -> bool {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new().set_buckets(&DURATION_BUCKETS).ok()?;
            let handle = builder.install_recorder().ok()?;
            describe();
            register_handles();
            let upkeep = handle.clone();
            let _ = std::thread::Builder::new().name("actix-mcp-metrics".into()).spawn(move || loop {
                std::thread::sleep(Duration::from_secs(5));
                upkeep.run_upkeep();
            });
            Some(handle)
        })
        .is_some()
}

/// The Prometheus text exposition of every series, if installed.
pub fn rendered() -> Option<String> {
    HANDLE.get().and_then(|h| h.as_ref()).map(PrometheusHandle::render)
}

fn describe() {
    describe_histogram!(
        OPERATION_DURATION,
        Unit::Seconds,
        "Duration of MCP operations, with the OpenTelemetry MCP conventions' attributes"
    );
    describe_gauge!(REQUESTS_IN_FLIGHT, "Requests whose actor is running");
    describe_counter!(REQUEST_ACTORS_STARTED, "Request actors started");
    describe_counter!(CANCELLATIONS, "Requests cancelled before they answered");
    describe_counter!(TIMEOUTS, "Requests that ran past request.timeout_ms");
    describe_counter!(MRTR_ROUNDS, "Multi round-trip events: issued, completed, refused");
    describe_gauge!(LISTEN_STREAMS_OPEN, "Listen streams open now");
    describe_counter!(LISTEN_STREAMS_OPENED, "Listen streams opened");
    describe_counter!(LISTEN_STREAMS_CLOSED, "Listen streams closed, by reason");
    describe_counter!(LAGGED, "Subscribers closed because they fell behind");
    describe_counter!(AUTH_FAILURES, "Requests refused by authorization, by reason");
    describe_counter!(HTTP_RESPONSES, "HTTP responses of the MCP endpoint, by status");
    describe_counter!(HTTP_BYTES_IN, Unit::Bytes, "Request body bytes read by the MCP endpoint");
    describe_counter!(HTTP_BYTES_OUT, Unit::Bytes, "Response body bytes written by the MCP endpoint (JSON and SSE)");
    describe_gauge!(LEGACY_SESSIONS_OPEN, "Legacy (initialize) sessions open now");
    describe_gauge!(REDIS_CONNECTED, "Redis hub backend: subscription up (1) or down (0)");
    describe_counter!(REDIS_RECONNECTS, "Redis hub backend: subscription losses");
    describe_counter!(REDIS_RESYNCS, "Redis hub backend: resyncs after an outage");
    describe_counter!(REDIS_PUBLISHED, "Redis hub backend: events published");
    describe_counter!(REDIS_RECEIVED, "Redis hub backend: events received from other instances");
    describe_counter!(REDIS_DEDUPLICATED, "Redis hub backend: second copies of one observation delivered once");
    describe_counter!(NOTIFICATIONS_DELIVERED, "Notifications written to listen streams and bridges");
    describe_counter!(NOTIFICATIONS_DROPPED, "Notifications a listener could not take (it then closes)");
    describe_histogram!(EVENT_TO_OUTLET, Unit::Seconds, "Time from the hub routing an event to its relay writing it");
    describe_counter!(RELAY_MAILBOX_FULL, "Listeners closed because their relay's mailbox was full");
}
