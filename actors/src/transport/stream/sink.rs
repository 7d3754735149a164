//! [`StreamSink`]: a listener's messages into its connection's one writer.

use std::cell::RefCell;

use mcp_protocol::jsonrpc::encode_notification;
use mcp_protocol::RequestId;
use serde_json::json;
use tokio::sync::mpsc::error::TrySendError;

use crate::channels::outbound::{Outbound, OutboundTx};
use crate::channels::sink::{ListenerSink, SinkError};

/// The connection's writer, for one listener. Ending sends
/// `notifications/cancelled` for the listen id, so the client learns why
/// its subscription stopped.
pub struct StreamSink {
    writer: OutboundTx,
    id: RequestId,
    /// Waits for the writer to close; stopped with the sink, so that it
    /// does not keep the writer's queue open.
    watch: RefCell<Option<tokio::task::JoinHandle<()>>>,
}

impl StreamSink {
    /// A sink into the writer's queue for the listen request `id`.
    pub fn new(writer: OutboundTx, id: RequestId) -> Self {
        StreamSink { writer, id, watch: RefCell::default() }
    }
}

impl Drop for StreamSink {
    fn drop(&mut self) {
        if let Some(watch) = self.watch.get_mut().take() {
            watch.abort();
        }
    }
}

impl ListenerSink for StreamSink {
    fn push(&self, msg: Outbound) -> Result<(), SinkError> {
        self.writer.try_send(Box::new(msg)).map_err(|e| match e {
            TrySendError::Full(_) => SinkError::Full,
            TrySendError::Closed(_) => SinkError::Closed,
        })
    }

    fn on_closed(&self, notify: Box<dyn FnOnce()>) {
        let tx = self.writer.clone();
        let watch = actix_rt::spawn(async move {
            tx.closed().await;
            notify();
        });
        *self.watch.borrow_mut() = Some(watch);
    }

    fn end(&self, reason: &str) {
        let params = json!({"requestId": self.id.to_value(), "reason": reason});
        let bytes = encode_notification("notifications/cancelled", &params);
        // The queue may be full (that is often why we end): then the writer
        // is backed up and the client will see the stream stop regardless.
        let _ = self.writer.try_send(Box::new(Outbound::Notification(bytes.into())));
    }
}
