//! [`Watch`]: the one observer of a request's life. The request actor
//! tells it when the request begins and how it ended; it records the rest —
//! the operation's metrics, its span, a slow request's log line, and the
//! audit record of a call — so that nothing else on a call's path counts,
//! times or traces it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_protocol::request::ClientRequest;
use mcp_protocol::RequestId;
use slog::{info, Logger};

use crate::audit::{sha256_hex, AuditLog, Call, Decision};
use crate::pipeline::intake::Admitted;
use crate::pipeline::service::McpService;
use crate::telemetry::span::{NetworkTransport, RequestSpan};
use crate::telemetry::{self, Outcome};

/// What is recorded of one request when it ends.
pub(crate) struct Watch {
    method: &'static str,
    /// The protocol version, for metrics.
    version: &'static str,
    /// How it arrived (`network.transport`).
    transport: NetworkTransport,
    /// The tool's name as a metrics label (`metrics.tool_labels`).
    tool_label: Option<Arc<str>>,
    /// Its span (with the `otel` feature and a collector).
    span: RequestSpan,
    /// Longer than this is a slow request.
    slow: Duration,
    started_at: Instant,
    /// The audit log and this call's record, for an audited call.
    audit: Option<(Arc<AuditLog>, Call)>,
    /// Whether the ending was recorded (it is, once).
    done: bool,
}

impl Watch {
    /// Starts watching `work`: its span starts (and what the handler sends
    /// on names that span as its parent, through `_meta`).
    pub(crate) fn new(service: &McpService, work: &mut Admitted, slow: Duration) -> Watch {
        let version = work.meta.version.as_str();
        let transport = NetworkTransport::with_headers(work.facts.headers.is_some());
        let parent = work.meta.trace.as_ref().or(work.facts.trace.as_ref());
        let span = RequestSpan::start(&work.request, &work.id, version, transport, parent);
        if let Some(downstream) = span.downstream(parent) {
            work.meta.trace = Some(downstream);
        }
        let tool_label = match &work.request {
            ClientRequest::CallTool(p) => service.tool_label(&p.name),
            _ => None,
        };
        let audit = service.audit().and_then(|log| Some((log.clone(), audited(service, work)?)));
        Watch {
            method: work.request.method(),
            version,
            transport,
            tool_label,
            span,
            slow,
            started_at: Instant::now(),
            audit,
            done: false,
        }
    }

    /// The request's method.
    pub(crate) fn method(&self) -> &'static str {
        self.method
    }

    /// When the request started.
    pub(crate) fn started_at(&self) -> Instant {
        self.started_at
    }

    /// The request's handler starts.
    pub(crate) fn begin(&self) {
        telemetry::request_started();
    }

    /// Nothing is recorded of this request (it never ran).
    pub(crate) fn dismiss(&mut self) {
        self.done = true;
    }

    /// Records how request `id` ended (the first call only).
    pub(crate) fn finish(&mut self, outcome: Outcome, id: &RequestId, log: &Logger) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let elapsed = self.started_at.elapsed();
        let op = telemetry::Operation {
            method: self.method,
            version: self.version,
            transport: self.transport,
            tool: self.tool_label.as_ref(),
        };
        telemetry::request_finished(op, outcome, elapsed);
        self.span.end(outcome);
        if let Some((audit, call)) = self.audit.take() {
            audit.record(call, Decision::Allow, audit_outcome(outcome), elapsed);
        }
        // A cancelled request is logged as such (at DEBUG, or at INFO when
        // the shutdown ended it), not as slow.
        if elapsed > self.slow && outcome != Outcome::Cancelled {
            info!(log, "slow request"; "request" => %id, "method" => self.method,
                "duration_ms" => elapsed.as_millis() as u64, "outcome" => outcome.label());
        }
    }
}

/// The audit record of `work`, when it is a call the log keeps
/// (`tools/call`, `resources/read`, `prompts/get`).
fn audited(service: &McpService, work: &Admitted) -> Option<Call> {
    let catalog = service.catalog();
    let upstream = |u: Option<&str>| u.unwrap_or_default().to_owned();
    let digest = |raw: Option<&mcp_protocol::RawObject>| sha256_hex(raw.map_or("{}", |a| a.as_str()).as_bytes());
    let (method, name, upstream, arguments_sha256) = match &work.request {
        ClientRequest::CallTool(p) => {
            let tool = work.tool.clone().or_else(|| catalog.tool(&p.name));
            (
                "tools/call",
                p.name.clone(),
                upstream(tool.as_deref().and_then(|t| t.upstream())),
                digest(p.arguments.as_ref()),
            )
        }
        ClientRequest::GetPrompt(p) => {
            let prompt = catalog.prompt(&p.name);
            (
                "prompts/get",
                p.name.clone(),
                upstream(prompt.as_deref().and_then(|t| t.upstream())),
                digest(p.arguments.as_ref()),
            )
        }
        ClientRequest::ReadResource(p) => {
            let served_by = match catalog.resource(&p.uri) {
                Some(r) => r.upstream().map(str::to_owned),
                None => catalog.match_template(&p.uri).and_then(|(t, _)| t.upstream().map(str::to_owned)),
            };
            ("resources/read", p.uri.clone(), upstream(served_by.as_deref()), digest(None))
        }
        _ => return None,
    };
    let caller = work.facts.identity().map_or_else(|| "anonymous".to_owned(), |id| id.key());
    Some(Call { caller, method, name, upstream, arguments_sha256 })
}

/// A request's outcome as the audit log words it.
fn audit_outcome(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "ok",
        Outcome::ToolError => "tool_error",
        Outcome::Cancelled => "cancelled",
        _ => "error",
    }
}
