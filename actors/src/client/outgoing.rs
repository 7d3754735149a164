//! One message on its way to the server, and the channel its answer's
//! messages come back on: what every transport takes and gives.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::ClientError;

/// One message to send.
pub(crate) struct Outgoing {
    /// The encoded message.
    pub(crate) body: Bytes,
    /// HTTP headers for it (ignored over stdio).
    pub(crate) headers: Vec<(String, String)>,
    /// The id, for a request.
    pub(crate) id: Option<Value>,
}

/// Why an answer's messages stopped before its response, when the
/// transport knows (a message over the size limit, a broken stream), shared
/// by the two ends of an answer (over stdio, by every answer of a connection).
pub(crate) type Broken = Arc<OnceLock<ClientError>>;

/// The messages of one request's answer: its notifications (progress,
/// log, listen deliveries), any server requests made inside it, and last
/// the response. Dropping it gives the answer up.
pub(crate) struct Inbound {
    rx: mpsc::UnboundedReceiver<Value>,
    broken: Broken,
}

/// The transport's end of an [`Inbound`].
#[derive(Clone)]
pub(crate) struct InboundTx {
    tx: mpsc::UnboundedSender<Value>,
    broken: Broken,
}

/// A new answer's two ends.
pub(crate) fn inbound() -> (InboundTx, Inbound) {
    inbound_sharing(Broken::default())
}

/// A new answer's two ends, stopped for the reason `broken` holds (over
/// stdio, one per connection).
pub(crate) fn inbound_sharing(broken: Broken) -> (InboundTx, Inbound) {
    let (tx, rx) = mpsc::unbounded_channel();
    (InboundTx { tx, broken: broken.clone() }, Inbound { rx, broken })
}

impl Inbound {
    /// The next message; `None` once the transport has stopped (see
    /// [`Inbound::broken`] for why, if it stopped early).
    pub(crate) async fn recv(&mut self) -> Option<Value> {
        self.rx.recv().await
    }

    /// The next message, if one is waiting.
    #[cfg(test)]
    pub(crate) fn try_recv(&mut self) -> Option<Value> {
        self.rx.try_recv().ok()
    }

    /// Why the messages stopped, if the transport said; else `default`.
    pub(crate) fn stopped(&self, default: impl FnOnce() -> ClientError) -> ClientError {
        self.broken.get().cloned().unwrap_or_else(default)
    }
}

impl InboundTx {
    /// Passes a message on; `false` once the answer was given up.
    pub(crate) fn send(&self, msg: Value) -> bool {
        self.tx.send(msg).is_ok()
    }

    /// Resolves when the answer is given up (its [`Inbound`] dropped).
    pub(crate) async fn closed(&self) {
        self.tx.closed().await
    }

    /// Stops the answer early, for `why` (the first reason given stands).
    pub(crate) fn fail(self, why: ClientError) {
        let _ = self.broken.set(why);
    }
}
