//! [`RequestContext`]: what a handler sees of its request besides its
//! arguments — the client's declared capabilities, emitters for progress and
//! log notifications on this request's own response stream, and cancellation.

use std::sync::Arc;

use mcp_protocol::jsonrpc::encode_notification;
use mcp_protocol::model::capabilities::ClientCapabilities;
use mcp_protocol::model::logging::{LogMessage, LoggingLevel, LOG_MESSAGE_METHOD};
use mcp_protocol::model::progress::{ProgressParams, PROGRESS_METHOD};
use mcp_protocol::{ProtocolError, ProtocolVersion, RequestId, RequestMeta};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::error::HandlerError;
use crate::outbound::Outbound;

/// The per-request context handed to every handler. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: RequestId,
    meta: RequestMeta,
    cancel: CancellationToken,
    outlet: mpsc::Sender<Outbound>,
    log: slog::Logger,
    catalog: Arc<Catalog>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext").field("id", &self.inner.id).field("meta", &self.inner.meta).finish()
    }
}

impl RequestContext {
    /// Builds a context (the request actor does this; tests may too).
    pub fn new(
        id: RequestId,
        meta: RequestMeta,
        cancel: CancellationToken,
        outlet: mpsc::Sender<Outbound>,
        log: slog::Logger,
        catalog: Arc<Catalog>,
    ) -> Self {
        RequestContext { inner: Arc::new(Inner { id, meta, cancel, outlet, log, catalog }) }
    }

    /// The catalog this request is served from: handlers may change it
    /// (subscribers are told) or publish resource updates through it.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.inner.catalog
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The validated `_meta` of the request.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The protocol version of the request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.meta.version
    }

    /// What the client declared it can do, for this request only.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// Fails with MissingRequiredClientCapability (-32021; draft -32003) unless
    /// the client declared every capability in `required`.
    pub fn require_capabilities(&self, required: &ClientCapabilities) -> Result<(), HandlerError> {
        match self.client_capabilities().missing(required) {
            None => Ok(()),
            Some(missing) => {
                let names: Vec<String> = serde_json::to_value(&missing)
                    .ok()
                    .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect()))
                    .unwrap_or_default();
                Err(ProtocolError::MissingCapability {
                    required: Box::new(missing),
                    message: format!("Server requires the {} capability for this request", names.join(", ")),
                }
                .into())
            }
        }
    }

    /// The request's cancellation token: it fires when the client cancels
    /// (closes the HTTP stream, or sends `notifications/cancelled` on stdio),
    /// on timeout and at shutdown. Handlers that do blocking or long work
    /// should watch it; async handlers are also dropped at cancellation.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// The request's logger (carries `method` and `request`).
    pub fn logger(&self) -> &slog::Logger {
        &self.inner.log
    }

    /// Whether a log message at `level` would be sent (the client opted in
    /// with `io.modelcontextprotocol/logLevel` at or below `level`).
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        self.inner.meta.log_level.is_some_and(|min| level >= min)
    }

    /// Sends `notifications/message` on this request's response stream, if the
    /// client opted into `level`. Returns whether it was sent.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.wants_log(level) {
            return false;
        }
        let params = LogMessage { level, logger: logger.map(str::to_owned), data };
        self.emit(encode_notification(LOG_MESSAGE_METHOD, &params)).await
    }

    /// Sends `notifications/progress` if the request carried a progress token.
    /// Returns whether it was sent.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = self.inner.meta.progress_token.clone() else {
            return false;
        };
        let params = ProgressParams { progress_token: token, progress, total, message: message.map(str::to_owned) };
        self.emit(encode_notification(PROGRESS_METHOD, &params)).await
    }

    async fn emit(&self, bytes: Vec<u8>) -> bool {
        if self.inner.cancel.is_cancelled() {
            return false;
        }
        tokio::select! {
            biased;
            _ = self.inner.cancel.cancelled() => false,
            sent = self.inner.outlet.send(Outbound::Notification(bytes.into())) => sent.is_ok(),
        }
    }
}
