//! Prometheus metrics (`[metrics]`): the names, labels and buckets of every
//! series the server exports, the process-wide recorder, and the calls the
//! actors make to record. Label values are bounded: methods, protocol
//! versions, outcomes and reasons are fixed sets; never arguments, ids or
//! URIs.
//!
//! Names follow the OpenTelemetry MCP semantic conventions where they exist:
//! `mcp.server.operation.duration`, exported as
//! `mcp_server_operation_duration_seconds`, with the conventions' attributes
//! ([`Operation`], [`Outcome`]). Every series of a fixed set of labels
//! exists from the start, at 0, so that an alert on it never misfires.

pub mod logging;
mod operation;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(feature = "metrics")]
mod recorder;
pub mod span;
pub mod status;
mod text_log;
pub mod trace_scope;
mod upstream;

pub use operation::{refused, request_finished, Operation, Outcome};
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use recorder::{install, rendered};
pub use upstream::{
    upstream_call, upstream_forged, upstream_refused_item, upstream_restarted, upstream_up, FORGED_NOTIFICATIONS,
    REFUSED_ITEMS, UPSTREAM_OPERATION_DURATION, UPSTREAM_RESTARTS, UPSTREAM_UP,
};

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{counter, gauge, Counter, Gauge, Histogram};

/// Duration of each request, by method, outcome and protocol version.
pub const OPERATION_DURATION: &str = "mcp_server_operation_duration_seconds";
/// Requests whose actor is running.
pub const REQUESTS_IN_FLIGHT: &str = "mcp_server_requests_in_flight";
/// Request actors started.
pub const REQUEST_ACTORS_STARTED: &str = "mcp_server_request_actors_started_total";
/// Requests cancelled (by the client, its leaving, or shutdown).
pub const CANCELLATIONS: &str = "mcp_server_cancellations_total";
/// Requests that ran past `request.timeout_ms`.
pub const TIMEOUTS: &str = "mcp_server_timeouts_total";
/// Multi round-trip events: `issued` (an `InputRequiredResult`),
/// `completed` (a retry with a valid `requestState` that ended the flow),
/// `refused` (a `requestState` that failed verification).
pub const MRTR_ROUNDS: &str = "mcp_server_mrtr_rounds_total";
/// Listen streams open now.
pub const LISTEN_STREAMS_OPEN: &str = "mcp_server_listen_streams_open";
/// Listen streams opened.
pub const LISTEN_STREAMS_OPENED: &str = "mcp_server_listen_streams_opened_total";
/// Listen streams closed, by reason (`client`, `lag`, `shutdown`, `token_expiry`).
pub const LISTEN_STREAMS_CLOSED: &str = "mcp_server_listen_streams_closed_total";
/// HTTP responses of the MCP endpoint, by status.
pub const HTTP_RESPONSES: &str = "mcp_server_http_responses_total";
/// Request body bytes read by the MCP endpoint.
pub const HTTP_BYTES_IN: &str = "mcp_server_http_request_bytes_total";
/// Response body bytes written by the MCP endpoint (JSON and SSE).
pub const HTTP_BYTES_OUT: &str = "mcp_server_http_response_bytes_total";
/// Legacy sessions open now.
pub const LEGACY_SESSIONS_OPEN: &str = "mcp_server_legacy_sessions_open";
/// Redis backend: the subscription is up (1) or down (0).
pub const REDIS_CONNECTED: &str = "mcp_server_redis_connected";
/// Redis backend: subscription losses (each followed by a reconnect attempt).
pub const REDIS_RECONNECTS: &str = "mcp_server_redis_reconnects_total";
/// Redis backend: resyncs of local listeners after an outage.
pub const REDIS_RESYNCS: &str = "mcp_server_redis_resyncs_total";
/// Redis backend: events published.
pub const REDIS_PUBLISHED: &str = "mcp_server_redis_events_published_total";
/// Redis backend: events received from other instances.
pub const REDIS_RECEIVED: &str = "mcp_server_redis_events_received_total";
/// Listeners closed because they fell behind (their buffer, or their
/// thread's relay mailbox was full).
pub const LAGGED: &str = "mcp_server_lagged_subscribers_total";

/// Notifications written to a stream (or a bridged recipient).
pub const NOTIFICATIONS_DELIVERED: &str = "mcp_server_notifications_delivered_total";
/// Notifications a listener could not take (its buffer full, its client
/// gone); the listener closes.
pub const NOTIFICATIONS_DROPPED: &str = "mcp_server_notifications_dropped_total";
/// Time from the hub routing an event to its relay writing it out.
pub const EVENT_TO_OUTLET: &str = "mcp_server_notification_delivery_seconds";
/// Listeners closed because their thread's relay mailbox was full.
pub const RELAY_MAILBOX_FULL: &str = "mcp_server_relay_mailbox_full_total";
/// Requests refused by authorization, by reason (`missing`,
/// `invalid_token`, `invalid_request`, `insufficient_scope`, `unavailable`).
pub const AUTH_FAILURES: &str = "mcp_server_auth_failures_total";
/// The label values of [`AUTH_FAILURES`]; each series exists (at 0) from the start.
pub const AUTH_FAILURE_REASONS: [&str; 5] =
    ["missing", "invalid_token", "invalid_request", "insufficient_scope", "unavailable"];
/// Redis backend: second copies of one observation delivered once.
pub const REDIS_DEDUPLICATED: &str = "mcp_server_redis_events_deduplicated_total";

/// Audit log: records written.
pub const AUDIT_RECORDS: &str = "mcp_server_audit_records_total";
/// Audit log: records lost (the queue full with `audit.when_full = "drop"`,
/// or a write that failed).
pub const AUDIT_DROPPED: &str = "mcp_server_audit_dropped_total";
/// Audit log: records that found the queue full (the writer behind).
pub const AUDIT_QUEUE_FULL: &str = "mcp_server_audit_queue_full_total";

/// Policy decisions on calls, by `decision` (`allow`, `deny`,
/// `shadow_deny`); lists are not counted.
pub const POLICY_DECISIONS: &str = "mcp_server_policy_decisions_total";
/// The label values of [`POLICY_DECISIONS`].
pub const POLICY_DECISION_LABELS: [&str; 3] = ["allow", "deny", "shadow_deny"];

/// The handles of [`POLICY_DECISIONS`], by label, registered (at 0) when a
/// policy is loaded: counting a decision is then an atomic add.
static POLICY_COUNTERS: OnceLock<Vec<Counter>> = OnceLock::new();

/// Registers the policy decisions' series, each at 0.
pub fn register_policy_decisions() {
    POLICY_COUNTERS.get_or_init(|| {
        POLICY_DECISION_LABELS
            .iter()
            .map(|d| {
                let c = counter!(POLICY_DECISIONS, "decision" => *d);
                c.absolute(0);
                c
            })
            .collect()
    });
}

/// A policy decision on a call, `label` one of [`POLICY_DECISION_LABELS`].
pub fn policy_decision(label: &str) {
    let Some(counters) = POLICY_COUNTERS.get() else { return };
    if let Some(i) = POLICY_DECISION_LABELS.iter().position(|l| *l == label) {
        counters[i].increment(1);
    }
}

/// Buckets of the duration histogram, in seconds: 50 µs to 60 s.
pub const DURATION_BUCKETS: [f64; 18] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0,
    60.0,
];

/// Handles of the series recorded on every request, registered once when
/// the recorder is installed: recording is then an atomic add, with no
/// registry lookup or label allocation per request. Without a recorder
/// (metrics off) nothing is recorded at all.
struct Handles {
    started: Counter,
    in_flight: Gauge,
    cancellations: Counter,
    timeouts: Counter,
    bytes_in: Counter,
    bytes_out: Counter,
    /// By [`STATUSES`] index.
    responses: Vec<Counter>,
    delivered: Counter,
    dropped: Counter,
    to_outlet: Histogram,
    /// By [`AUTH_FAILURE_REASONS`] index.
    auth_failures: Vec<Counter>,
}

static HANDLES: OnceLock<Handles> = OnceLock::new();

/// The statuses the endpoint answers with, whose series exist from the start.
const STATUSES: [u16; 13] = [200, 202, 400, 401, 403, 404, 405, 408, 413, 415, 429, 500, 503];

/// The label values of the series that exist from the start.
#[cfg(feature = "metrics")]
const MRTR_EVENTS: [&str; 3] = ["issued", "completed", "refused"];
#[cfg(feature = "metrics")]
const CLOSE_REASONS: [&str; 4] = ["client", "lag", "shutdown", "token_expiry"];

fn handles() -> Option<&'static Handles> {
    HANDLES.get()
}

/// Registers the per-request handles (called once the recorder is in place).
#[cfg(feature = "metrics")]
pub(crate) fn register_handles() {
    HANDLES.get_or_init(|| Handles {
        started: counter!(REQUEST_ACTORS_STARTED),
        in_flight: gauge!(REQUESTS_IN_FLIGHT),
        cancellations: counter!(CANCELLATIONS),
        timeouts: counter!(TIMEOUTS),
        bytes_in: counter!(HTTP_BYTES_IN),
        bytes_out: counter!(HTTP_BYTES_OUT),
        responses: STATUSES.iter().map(|s| counter!(HTTP_RESPONSES, "status" => s.to_string())).collect(),
        delivered: counter!(NOTIFICATIONS_DELIVERED),
        dropped: counter!(NOTIFICATIONS_DROPPED),
        to_outlet: metrics::histogram!(EVENT_TO_OUTLET),
        auth_failures: AUTH_FAILURE_REASONS.iter().map(|r| counter!(AUTH_FAILURES, "reason" => *r)).collect(),
    });
    // Series recorded where they happen, registered now so that they exist
    // at 0 before their first event.
    for event in MRTR_EVENTS {
        counter!(MRTR_ROUNDS, "event" => event).absolute(0);
    }
    for reason in CLOSE_REASONS {
        counter!(LISTEN_STREAMS_CLOSED, "reason" => reason).absolute(0);
    }
    counter!(LISTEN_STREAMS_OPENED).absolute(0);
    gauge!(LISTEN_STREAMS_OPEN).increment(0.0);
    counter!(LAGGED).absolute(0);
    counter!(RELAY_MAILBOX_FULL).absolute(0);
}

/// A request refused by authorization, for `reason` (one of
/// [`AUTH_FAILURE_REASONS`]).
pub fn auth_failure(reason: &'static str) {
    let Some(h) = handles() else { return };
    if let Some(i) = AUTH_FAILURE_REASONS.iter().position(|r| *r == reason) {
        h.auth_failures[i].increment(1);
    }
}

/// Sets up span export (`[otel]`) once per process: with the `otel`
/// feature when a collector is configured; without it, a configured
/// endpoint is reported as unused.
pub fn install_spans(config: &crate::config::Config, log: &slog::Logger) {
    #[cfg(feature = "otel")]
    match otel::install(&config.otel, &config.server.version) {
        Ok(_) => {}
        Err(e) => slog::error!(log, "OpenTelemetry export not started"; "error" => e),
    }
    #[cfg(not(feature = "otel"))]
    if !config.otel.endpoint.is_empty() {
        slog::warn!(log, "otel.endpoint is set but this build lacks the `otel` feature: no spans are exported");
    }
}

/// Whether spans are exported (the `otel` feature and a collector).
pub fn spans_exported() -> bool {
    #[cfg(feature = "otel")]
    return otel::tracer().is_some();
    #[cfg(not(feature = "otel"))]
    false
}

/// Exports the spans still batched (at shutdown; nothing without `otel`).
pub fn flush_spans() {
    #[cfg(feature = "otel")]
    otel::flush();
}

/// A request actor started.
pub fn request_started() {
    if let Some(h) = handles() {
        h.started.increment(1);
        h.in_flight.increment(1.0);
    }
}

/// A multi round-trip event (`issued`, `completed`, `refused`).
pub fn mrtr(event: &'static str) {
    if handles().is_some() {
        counter!(MRTR_ROUNDS, "event" => event).increment(1);
    }
}

/// A listen stream opened.
pub fn listen_opened() {
    if let Some(s) = status::get() {
        s.listen_open.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    if handles().is_some() {
        counter!(LISTEN_STREAMS_OPENED).increment(1);
        gauge!(LISTEN_STREAMS_OPEN).increment(1.0);
    }
}

/// A listen stream closed (`client`, `lag`, `shutdown`, `token_expiry`).
pub fn listen_closed(reason: &'static str) {
    if let Some(s) = status::get() {
        s.listen_open.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        if reason == "lag" {
            s.lagged.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    if handles().is_none() {
        return;
    }
    counter!(LISTEN_STREAMS_CLOSED, "reason" => reason).increment(1);
    gauge!(LISTEN_STREAMS_OPEN).decrement(1.0);
    if reason == "lag" {
        counter!(LAGGED).increment(1);
    }
}

/// An HTTP response of the MCP endpoint, by its exact status.
pub fn http_response(status: u16) {
    let Some(h) = handles() else { return };
    match STATUSES.iter().position(|s| *s == status) {
        Some(i) => h.responses[i].increment(1),
        // Another status: its own series (the statuses are a bounded set).
        None => counter!(HTTP_RESPONSES, "status" => status.to_string()).increment(1),
    }
}

/// A notification written to a listener (`true`) or refused by it.
pub fn notification(delivered: bool) {
    if let Some(h) = handles() {
        if delivered {
            h.delivered.increment(1)
        } else {
            h.dropped.increment(1)
        }
    }
}

/// An event reached a relay `elapsed` after the hub routed it.
pub fn event_to_outlet(elapsed: Duration) {
    if let Some(h) = handles() {
        h.to_outlet.record(elapsed.as_secs_f64());
    }
}

/// `n` listeners closed because their relay's mailbox was full.
pub fn relay_mailbox_full(n: u64) {
    if handles().is_some() {
        counter!(RELAY_MAILBOX_FULL).increment(n);
    }
}

/// Request body bytes read.
pub fn bytes_in(n: usize) {
    if let Some(h) = handles() {
        h.bytes_in.increment(n as u64);
    }
}

/// Response body bytes written.
pub fn bytes_out(n: usize) {
    if let Some(h) = handles() {
        h.bytes_out.increment(n as u64);
    }
}

/// Scrape-time gauges: legacy sessions open now.
pub fn legacy_sessions(open: usize) {
    gauge!(LEGACY_SESSIONS_OPEN).set(open as f64);
}

/// Scrape-time series of a hub backend that links instances (Redis).
pub fn backend_link(link: &BackendLink) {
    gauge!(REDIS_CONNECTED).set(if link.connected { 1.0 } else { 0.0 });
    counter!(REDIS_RECONNECTS).absolute(link.outages);
    counter!(REDIS_RESYNCS).absolute(link.resyncs);
    counter!(REDIS_PUBLISHED).absolute(link.published);
    counter!(REDIS_RECEIVED).absolute(link.received);
    counter!(REDIS_DEDUPLICATED).absolute(link.deduplicated);
}

/// A reading of a hub backend's link counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct BackendLink {
    /// The link is up.
    pub connected: bool,
    /// Times it was lost.
    pub outages: u64,
    /// Resyncs after an outage.
    pub resyncs: u64,
    /// Events published.
    pub published: u64,
    /// Events received.
    pub received: u64,
    /// Second copies delivered once.
    pub deduplicated: u64,
}
