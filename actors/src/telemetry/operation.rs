//! `mcp.server.operation.duration` (exported as
//! `mcp_server_operation_duration_seconds`), with the attributes of the
//! OpenTelemetry MCP semantic conventions, as Prometheus labels:
//!
//! | label | when |
//! |---|---|
//! | `mcp_method_name` | always (`_OTHER` for a method this server does not know) |
//! | `mcp_protocol_version` | when the request named a valid one |
//! | `network_transport` | always: `tcp` (HTTP) or `pipe` (stdio) |
//! | `error_type` | when it failed: the JSON-RPC code (`-32602`…), `tool_error` (a result with `isError: true`), `timeout` or `cancelled` |
//! | `rpc_response_status_code` | when the response carries a JSON-RPC error code |
//! | `gen_ai_operation_name` | `execute_tool` on `tools/call` |
//! | `gen_ai_tool_name` | on `tools/call` with `metrics.tool_labels` (opt-in) |
//!
//! Requests refused before any handler ran (an unknown method, a missing
//! `_meta`, a scope the caller lacks) are recorded too ([`refused`]).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use metrics::{histogram, Histogram};

use super::span::NetworkTransport;
use super::{handles, status, OPERATION_DURATION};

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A result.
    Ok,
    /// A JSON-RPC error with this code.
    Error(i32),
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// Cancelled before it answered.
    Cancelled,
    /// Past its timeout (answered -32603).
    TimedOut,
}

/// A JSON-RPC code as a bounded label value: the codes the protocol names,
/// `_OTHER` for any other.
fn code_text(code: i32) -> &'static str {
    mcp_protocol::ErrorCode(code).label().unwrap_or("_OTHER")
}

impl Outcome {
    /// `error.type`: `None` for a success.
    pub fn error_type(self) -> Option<&'static str> {
        match self {
            Outcome::Ok => None,
            Outcome::Error(code) => Some(code_text(code)),
            Outcome::ToolError => Some("tool_error"),
            Outcome::Cancelled => Some("cancelled"),
            Outcome::TimedOut => Some("timeout"),
        }
    }

    /// `rpc.response.status_code`: the error code the response carries.
    pub fn status_code(self) -> Option<&'static str> {
        match self {
            Outcome::Error(code) => Some(code_text(code)),
            Outcome::TimedOut => Some("-32603"),
            _ => None,
        }
    }

    /// For logs: `ok`, or the error type.
    pub fn label(self) -> &'static str {
        self.error_type().unwrap_or("ok")
    }
}

/// What one operation is labelled with besides its outcome.
#[derive(Debug, Clone, Copy)]
pub struct Operation<'a> {
    /// The method (`_OTHER` when unknown).
    pub method: &'static str,
    /// The protocol version, or `""` when the request named no valid one.
    pub version: &'static str,
    /// How it arrived.
    pub transport: NetworkTransport,
    /// The tool of a `tools/call`, with `metrics.tool_labels`.
    pub tool: Option<&'a Arc<str>>,
}

/// One series' labels: method, version, error type and status code (by the
/// address of their `'static` text: hashing words is cheaper than hashing
/// strings, and a label spelled at two addresses only costs a second entry
/// for the same series), the transport and the tool.
type Key = (usize, usize, usize, usize, bool, Option<Arc<str>>);

thread_local! {
    /// Duration histograms by their labels, per thread: label values are
    /// `'static` and few, so each combination is looked up in the registry
    /// once per thread.
    static DURATIONS: RefCell<foldhash::HashMap<Key, Histogram>> = RefCell::new(foldhash::HashMap::default());
}

/// A request actor's request ended after `elapsed` with `outcome`.
pub fn request_finished(op: Operation<'_>, outcome: Outcome, elapsed: Duration) {
    if let Some(s) = status::get() {
        s.record(op.method, outcome != Outcome::Ok, elapsed);
        if matches!(outcome, Outcome::Cancelled | Outcome::TimedOut) {
            s.ended_early(outcome == Outcome::Cancelled);
        }
    }
    let Some(h) = handles() else { return };
    h.in_flight.decrement(1.0);
    match outcome {
        Outcome::Cancelled => h.cancellations.increment(1),
        Outcome::TimedOut => h.timeouts.increment(1),
        _ => {}
    }
    record(op, outcome, elapsed);
}

/// A request refused before any handler ran, with `code`, `elapsed` after
/// the transport handed it over.
pub fn refused(op: Operation<'_>, code: i32, elapsed: Duration) {
    if let Some(s) = status::get() {
        s.refused(op.method, elapsed);
    }
    if handles().is_some() {
        record(op, Outcome::Error(code), elapsed);
    }
}

fn record(op: Operation<'_>, outcome: Outcome, elapsed: Duration) {
    let error = outcome.error_type().unwrap_or("");
    let code = outcome.status_code().unwrap_or("");
    let addr = |s: &'static str| s.as_ptr() as usize;
    let tcp = op.transport == NetworkTransport::Tcp;
    let key = (addr(op.method), addr(op.version), addr(error), addr(code), tcp, op.tool.cloned());
    // `try_with`: an actor may stop while its thread is being torn down.
    let _ = DURATIONS.try_with(|d| {
        let mut d = d.borrow_mut();
        if let Some(h) = d.get(&key) {
            return h.record(elapsed.as_secs_f64());
        }
        let mut labels = vec![
            ("mcp_method_name", op.method.to_owned()),
            ("network_transport", if tcp { "tcp" } else { "pipe" }.to_owned()),
        ];
        let optional =
            [("mcp_protocol_version", op.version), ("error_type", error), ("rpc_response_status_code", code)];
        labels.extend(optional.into_iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k, v.to_owned())));
        if op.method == mcp_protocol::request::method::TOOLS_CALL {
            labels.push(("gen_ai_operation_name", "execute_tool".to_owned()));
        }
        if let Some(tool) = &key.5 {
            labels.push(("gen_ai_tool_name", tool.to_string()));
        }
        let h = histogram!(OPERATION_DURATION, &labels);
        h.record(elapsed.as_secs_f64());
        d.insert(key, h);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_as_the_conventions_name_them() {
        assert_eq!((Outcome::Ok.error_type(), Outcome::Ok.status_code()), (None, None));
        assert_eq!(Outcome::Error(-32602).error_type(), Some("-32602"));
        assert_eq!(Outcome::Error(-32602).status_code(), Some("-32602"));
        assert_eq!(Outcome::Error(12345).error_type(), Some("_OTHER"));
        assert_eq!((Outcome::ToolError.error_type(), Outcome::ToolError.status_code()), (Some("tool_error"), None));
        assert_eq!(Outcome::TimedOut.status_code(), Some("-32603"));
        assert_eq!(Outcome::Cancelled.label(), "cancelled");
        assert_eq!(Outcome::Ok.label(), "ok");
    }
}
