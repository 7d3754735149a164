//! A gateway's upstreams, in the OpenTelemetry conventions of an MCP
//! *client* (the gateway is its upstreams' client): each request to an
//! upstream timed as `mcp.client.operation.duration`, by upstream, method
//! (`mcp.method.name`) and `error.type`; restarts, whether each is up, and
//! the notifications an upstream sent about what it does not serve.

use std::cell::RefCell;
use std::time::Duration;

use metrics::{counter, gauge, histogram, Histogram};

/// Duration of each request to an upstream (its count is the calls).
pub const UPSTREAM_OPERATION_DURATION: &str = "mcp_client_operation_duration_seconds";
/// Times an upstream was started again after it was lost or failed to start.
pub const UPSTREAM_RESTARTS: &str = "mcp_gateway_upstream_restarts_total";
/// Whether an upstream is up (1) or not (0).
pub const UPSTREAM_UP: &str = "mcp_gateway_upstream_up";
/// Notifications an upstream sent about resources it does not serve
/// (dropped: an upstream announces only its own).
pub const FORGED_NOTIFICATIONS: &str = "mcp_gateway_forged_notifications_total";

/// A request of `method` to `upstream` ended after `elapsed`; `error`: its
/// error type (a JSON-RPC code, `tool_error`, `transport`…), `None` on success.
pub fn upstream_call(upstream: &str, method: &'static str, error: Option<&'static str>, elapsed: Duration) {
    let error = error.unwrap_or("");
    let make = || {
        let labels = [
            ("upstream", upstream.to_owned()),
            ("mcp_method_name", method.to_owned()),
            ("error_type", error.to_owned()),
        ];
        histogram!(UPSTREAM_OPERATION_DURATION, &labels)
    };
    // Before the recorder is in place a handle records nothing: none is kept.
    if super::handles().is_none() {
        return make().record(elapsed.as_secs_f64());
    }
    // `try_with`: a call may end while its thread is being torn down.
    let _ = DURATIONS.try_with(|d| {
        let mut d = d.borrow_mut();
        let made = match d.get_mut(upstream) {
            Some(made) => made,
            None => d.entry(upstream.to_owned()).or_default(),
        };
        // The method and error type are static: compared by address.
        let same = |(m, e, _): &&(&str, &str, Histogram)| std::ptr::eq(*m, method) && std::ptr::eq(*e, error);
        match made.iter().find(same) {
            Some((_, _, h)) => h.record(elapsed.as_secs_f64()),
            None => {
                let h = make();
                h.record(elapsed.as_secs_f64());
                made.push((method, error, h));
            }
        }
    });
}

/// One upstream's duration histograms made so far: by method and error type.
type Made = Vec<(&'static str, &'static str, Histogram)>;

thread_local! {
    /// The duration histograms made on this thread, by upstream (a handful each).
    static DURATIONS: RefCell<foldhash::HashMap<String, Made>> = RefCell::new(foldhash::HashMap::default());
}

/// `upstream` is started again.
pub fn upstream_restarted(upstream: &str) {
    counter!(UPSTREAM_RESTARTS, "upstream" => upstream.to_owned()).increment(1);
}

/// `upstream` is up, or not.
pub fn upstream_up(upstream: &str, up: bool) {
    gauge!(UPSTREAM_UP, "upstream" => upstream.to_owned()).set(if up { 1.0 } else { 0.0 });
}

/// An item of `upstream` was not served: a hidden character in its
/// definition, or a definition changed since it was pinned.
pub fn upstream_refused_item(upstream: &str) {
    counter!(REFUSED_ITEMS, "upstream" => upstream.to_owned()).increment(1);
}

/// Items of upstreams not served (hidden characters, changed since pinned), by `upstream`.
pub const REFUSED_ITEMS: &str = "mcp_gateway_items_refused_total";

/// `upstream` announced a change of a resource it does not serve (dropped).
pub fn upstream_forged(upstream: &str) {
    counter!(FORGED_NOTIFICATIONS, "upstream" => upstream.to_owned()).increment(1);
}
