//! One message on its way to the server, and the channel its answer's
//! messages come back on: what every transport takes and gives. The
//! channel is bounded (`ClientOptions::max_queued_messages`): the
//! transport waits for a reader that is behind; over stdio, where one
//! reader serves every request, for at most the request time limit, after
//! which that answer fails instead of holding up the others for longer.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use mcp_protocol::client::ServerMessage;
use mcp_protocol::RequestId;
use tokio::sync::mpsc;

use super::error::ClientError;

/// One message to send.
pub(crate) struct Outgoing {
    /// The encoded message.
    pub(crate) body: Bytes,
    /// HTTP headers for it (ignored over stdio).
    pub(crate) headers: Vec<(String, String)>,
    /// The id, for a request.
    pub(crate) id: Option<RequestId>,
}

/// Why an answer's messages stopped before its response, when the
/// transport knows (a message over the size limit, a broken stream), shared
/// by the two ends of an answer (over stdio, by every answer of a connection).
pub(crate) type Broken = Arc<OnceLock<ClientError>>;

/// The messages of one request's answer: its notifications (progress,
/// log, listen deliveries), any server requests made inside it, and last
/// the response. Dropping it gives the answer up.
pub(crate) struct Inbound {
    rx: mpsc::Receiver<ServerMessage>,
    broken: Broken,
    /// Why this answer alone was cut short.
    own: Broken,
}

/// The transport's end of an [`Inbound`].
#[derive(Clone)]
pub(crate) struct InboundTx {
    tx: mpsc::Sender<ServerMessage>,
    broken: Broken,
    own: Broken,
}

/// A new answer's two ends, holding at most `bound` messages unread.
pub(crate) fn inbound(bound: usize) -> (InboundTx, Inbound) {
    inbound_sharing(Broken::default(), bound)
}

/// A new answer's two ends, stopped for the reason `broken` holds (over
/// stdio, one per connection).
pub(crate) fn inbound_sharing(broken: Broken, bound: usize) -> (InboundTx, Inbound) {
    let (tx, rx) = mpsc::channel(bound.max(1));
    let own = Broken::default();
    (InboundTx { tx, broken: broken.clone(), own: own.clone() }, Inbound { rx, broken, own })
}

impl Inbound {
    /// The next message; `None` once the transport has stopped (see
    /// [`Inbound::broken`] for why, if it stopped early).
    pub(crate) async fn recv(&mut self) -> Option<ServerMessage> {
        self.rx.recv().await
    }

    /// The next message, if one is waiting.
    #[cfg(test)]
    pub(crate) fn try_recv(&mut self) -> Option<ServerMessage> {
        self.rx.try_recv().ok()
    }

    /// Why the messages stopped, if the transport said; else `default`.
    pub(crate) fn stopped(&self, default: impl FnOnce() -> ClientError) -> ClientError {
        self.own.get().or(self.broken.get()).cloned().unwrap_or_else(default)
    }
}

/// Why [`InboundTx::offer`] did not pass a message on.
pub(crate) enum Refused {
    /// The answer was given up.
    Gone,
    /// Its reader left `bound` messages unread for too long.
    Full,
}

impl InboundTx {
    /// Passes a message on, waiting while the reader is behind; `false`
    /// once the answer was given up.
    pub(crate) async fn send(&self, msg: ServerMessage) -> bool {
        self.tx.send(msg).await.is_ok()
    }

    /// Passes a message on, waiting at most `patience` while the reader is behind.
    pub(crate) async fn send_within(&self, msg: ServerMessage, patience: Duration) -> Result<(), Refused> {
        match tokio::time::timeout(patience, self.tx.send(msg)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Refused::Gone),
            Err(_) => Err(Refused::Full),
        }
    }

    /// How many messages the reader may leave unread.
    pub(crate) fn bound(&self) -> usize {
        self.tx.max_capacity()
    }

    /// Resolves when the answer is given up (its [`Inbound`] dropped).
    pub(crate) async fn closed(&self) {
        self.tx.closed().await
    }

    /// Stops the answer early, for `why` (the first reason given stands;
    /// over stdio, for every answer of the connection).
    pub(crate) fn fail(self, why: ClientError) {
        let _ = self.broken.set(why);
    }

    /// Gives this answer alone up, for `why`.
    pub(crate) fn give_up(self, why: ClientError) {
        let _ = self.own.set(why);
    }
}
