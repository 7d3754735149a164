//! The server's observer of what the intake decided: the one place a
//! refusal made before any handler ran is reported to the operator (an
//! authorization refusal, once, in the log and its counter) and counted as
//! an operation (`mcp.server.operation.duration` with its error code). The
//! intake returns refusals; every driver hands them here, timed from when
//! it had the message.

use std::time::Instant;

use mcp_protocol::ProtocolVersion;

use crate::auth::AuthError;
use crate::facts::identity::Identity;
use crate::pipeline::intake::{Cause, Refusal};
use crate::telemetry::span::NetworkTransport;
use crate::telemetry::Operation;

use super::McpServer;

impl McpServer {
    /// A message refused before any handler ran, on `transport`, by
    /// `caller` (when known), `started` when the driver had it.
    pub(crate) fn refused(
        &self,
        r: &Refusal,
        caller: Option<&Identity>,
        transport: NetworkTransport,
        started: Instant,
    ) {
        if let Cause::Auth(e) = &r.cause {
            self.auth_refused(e, None, caller);
        }
        self.count_refusal(r, transport, started);
    }

    /// Counts a refusal as an operation that ended in its error code.
    pub(crate) fn count_refusal(&self, r: &Refusal, transport: NetworkTransport, started: Instant) {
        let version = r.version.map_or("", ProtocolVersion::as_str);
        let op = Operation { method: r.method, version, transport, tool: None };
        crate::telemetry::refused(op, r.error.code.0, started.elapsed());
    }

    /// Reports an authorization refusal to the operator: the presented
    /// `token` or the known `caller` who was refused (an unreachable
    /// issuer's detail stays in the log).
    pub(crate) fn auth_refused(&self, e: &AuthError, token: Option<&str>, caller: Option<&Identity>) {
        if let Some(auth) = self.authorizer() {
            auth.report(self.logger(), e, token, caller);
        }
    }
}
