//! [`Watch`]: the one observer of a request's life. The request actor
//! tells it when the request begins and how it ended; it records the rest —
//! the operation's metrics, its span, a slow request's log line, the
//! policy's decision (counted, and logged in shadow mode), the quotas the
//! call is counted against and the audit record of a call — so that
//! nothing else on a call's path counts, times or traces it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_protocol::request::ClientRequest;
use mcp_protocol::RequestId;
use slog::{info, warn, Logger};

use mcp_protocol::digest::sha256_hex;

use crate::audit::{AuditLog, Call, Decision};
use crate::facts::identity::Identity;
use crate::pipeline::intake::Admitted;
use crate::pipeline::service::McpService;
use crate::pipeline::subject::{Subject, Verdict};
use crate::policy::Action;
use crate::quota::Charge;
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
    /// The audit log and this call's record, for an audited call (boxed:
    /// most requests have none, and the watch moves with its actor).
    audit: Option<Box<(Arc<AuditLog>, Call)>>,
    /// What the policy said of the call.
    verdict: Verdict,
    /// The item of a call the policy would deny in shadow mode (logged).
    shadowed: Option<String>,
    /// The quotas' counters of the call, until the actor counts it (boxed:
    /// most requests have none).
    charge: Option<Box<Charge>>,
    /// A quota refused the call.
    over_quota: bool,
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
        // The call's item and the policy's verdict, found once (only when
        // a policy or the audit log needs them).
        let (policy, quotas) = (service.policy(), service.quotas());
        let needs = policy.is_some() || service.audit().is_some() || quotas.is_some();
        let subject = needs.then(|| Subject::of(service.catalog(), &work.request, work.tool.as_ref())).flatten();
        // The caller matters only to what reads a subject.
        let caller = subject.as_ref().and_then(|_| work.facts.identity());
        let verdict = match (policy, &subject) {
            (Some(policy), Some(s)) => {
                let verdict = s.verdict(&policy, caller);
                telemetry::policy_decision(verdict.label());
                verdict
            }
            _ => Verdict::Allow,
        };
        let shadowed = subject.as_ref().filter(|_| verdict == Verdict::ShadowDeny).map(|s| s.name.clone());
        // The caller's key, made once for the quotas and the audit record.
        let keyed = subject.is_some() && (quotas.is_some() || service.audit().is_some());
        let caller_key = keyed.then(|| Identity::key_of(caller));
        let charge = match (quotas, &subject, &caller_key) {
            (Some(quotas), Some(s), Some(key))
                if s.known && s.action == Action::CallTool && verdict != Verdict::Deny =>
            {
                quotas.charge(key, &s.name, &s.upstream).map(Box::new)
            }
            _ => None,
        };
        let audit = match (service.audit(), subject, caller_key) {
            (Some(log), Some(s), Some(key)) => Some(Box::new((log.clone(), audit_call(s, key, &work.request)))),
            _ => None,
        };
        Watch {
            method: work.request.method(),
            version,
            transport,
            tool_label,
            span,
            slow,
            started_at: Instant::now(),
            audit,
            verdict,
            shadowed,
            charge,
            over_quota: false,
            done: false,
        }
    }

    /// Whether the policy denied the call (the service refuses it).
    pub(crate) fn denied(&self) -> bool {
        self.verdict == Verdict::Deny
    }

    /// The quotas' counters of the call, to count before its handler runs.
    pub(crate) fn take_charge(&mut self) -> Option<Box<Charge>> {
        self.charge.take()
    }

    /// A quota refused the call (the audit record says so).
    pub(crate) fn refused_by_quota(&mut self) {
        self.over_quota = true;
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
        if let Some(name) = self.shadowed.take() {
            warn!(log, "the policy would deny this call"; "policy" => "shadow", "request" => %id,
                "action" => self.method, "name" => name);
        }
        if let Some((audit, call)) = self.audit.take().map(|b| *b) {
            let decision = match self.verdict {
                Verdict::Deny => Decision::Deny,
                _ if self.over_quota => Decision::Quota,
                _ => Decision::Allow,
            };
            audit.record(call, decision, audit_outcome(outcome), elapsed);
        }
        // A cancelled request is logged as such (at DEBUG, or at INFO when
        // the shutdown ended it), not as slow.
        if elapsed > self.slow && outcome != Outcome::Cancelled {
            info!(log, "slow request"; "request" => %id, "method" => self.method,
                "duration_ms" => elapsed.as_millis() as u64, "outcome" => outcome.label());
        }
    }
}

/// The audit record of a call of `subject` by the caller of key `caller`.
fn audit_call(subject: Subject, caller: String, request: &ClientRequest) -> Call {
    let arguments = match request {
        ClientRequest::CallTool(p) => p.arguments.as_ref(),
        ClientRequest::GetPrompt(p) => p.arguments.as_ref(),
        _ => None,
    };
    Call {
        caller,
        method: request.method(),
        name: subject.name,
        upstream: subject.upstream,
        arguments_sha256: sha256_hex(arguments.map_or("{}", |a| a.as_str()).as_bytes()),
    }
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
