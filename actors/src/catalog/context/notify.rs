//! What a handler sends on its request's own response stream while it runs:
//! log messages the client opted into, and progress (inside a task, progress
//! becomes the task's status message instead).

use mcp_protocol::jsonrpc::encode_notification;
use mcp_protocol::model::logging::{LogMessage, LoggingLevel, LOG_MESSAGE_METHOD};
use mcp_protocol::model::progress::{ProgressParams, PROGRESS_METHOD};
use serde::Serialize;
use serde_json::Value;

use super::RequestContext;
use crate::channels::outbound::Outbound;

impl RequestContext {
    /// Whether a log message at `level` would be sent (the client opted in
    /// with `io.modelcontextprotocol/logLevel` at or below `level`).
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        self.inner.meta.log_level.is_some_and(|min| level >= min)
    }

    /// Sends `notifications/message` on this request's response stream, if the
    /// client opted into `level`. Returns whether it was sent.
    /// Inside a task nothing is sent (a task carries no log messages).
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.wants_log(level) || self.in_task() {
            return false;
        }
        let params = LogMessage { level, logger: logger.map(str::to_owned), data };
        self.emit(self.traced(LOG_MESSAGE_METHOD, &params)).await
    }

    /// Sends `notifications/progress` if the request carried a progress token.
    /// Returns whether it was sent.
    /// Inside a task, progress becomes the task's `statusMessage` (the
    /// message, or `progress/total`) instead.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        if let Some(link) = self.task_link().filter(|l| l.is_begun()) {
            let text = match (message, total) {
                (Some(m), _) => m.to_owned(),
                (None, Some(t)) => format!("{progress}/{t}"),
                (None, None) => format!("{progress}"),
            };
            link.set_status(text);
            return true;
        }
        let Some(token) = self.inner.meta.progress_token.clone() else {
            return false;
        };
        let params = ProgressParams { progress_token: token, progress, total, message: message.map(str::to_owned) };
        self.emit(self.traced(PROGRESS_METHOD, &params)).await
    }

    /// A notification this request causes, carrying in `_meta` its trace
    /// context when it has one and, in a legacy session, the request it is
    /// part of (which a stdio session otherwise does not say).
    fn traced<P: Serialize>(&self, method: &str, params: &P) -> Vec<u8> {
        let trace = self.trace_context();
        if trace.is_none() && !self.in_session() {
            return encode_notification(method, params);
        }
        let mut meta = trace.map(|t| t.to_meta()).unwrap_or_default();
        if self.in_session() {
            self.name_request_in(&mut meta);
        }
        let mut value = serde_json::to_value(params).unwrap_or_default();
        if let Value::Object(m) = &mut value {
            m.insert("_meta".into(), Value::Object(meta));
        }
        encode_notification(method, &value)
    }

    pub(super) async fn emit(&self, bytes: Vec<u8>) -> bool {
        if self.inner.cancel.is_cancelled() {
            return false;
        }
        tokio::select! {
            biased;
            _ = self.inner.cancel.cancelled() => false,
            sent = self.inner.outbound.send(Box::new(Outbound::Notification(bytes.into()))) => sent.is_ok(),
        }
    }
}
