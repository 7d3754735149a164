//! One message on its way to the server, and the channel its answer's
//! messages come back on: what every transport takes and gives.

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

/// One message to send.
pub(crate) struct Outgoing {
    /// The encoded message.
    pub(crate) body: Bytes,
    /// HTTP headers for it (ignored over stdio).
    pub(crate) headers: Vec<(String, String)>,
    /// The id, for a request.
    pub(crate) id: Option<Value>,
}

/// The messages of one request's answer: its notifications (progress,
/// log, listen deliveries), any server requests made inside it, and last
/// the response. Dropping it gives the answer up.
pub(crate) type Inbound = mpsc::UnboundedReceiver<Value>;
