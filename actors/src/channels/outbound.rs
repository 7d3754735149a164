//! [`Outbound`]: what a request actor hands its transport, already encoded,
//! through the request's bounded outbound channel ([`OutboundTx`] /
//! [`OutboundRx`]).

use bytes::Bytes;
use tokio::sync::mpsc;

/// The sending side of a request's outbound channel. Messages travel boxed,
/// so that a channel's buffer blocks stay small (a per-request channel costs
/// about 300 bytes instead of 1.3 KiB).
pub type OutboundTx = mpsc::Sender<Box<Outbound>>;

/// The receiving side of a request's outbound channel.
pub type OutboundRx = mpsc::Receiver<Box<Outbound>>;

/// A bounded outbound channel of `capacity` messages.
pub fn channel(capacity: usize) -> (OutboundTx, OutboundRx) {
    mpsc::channel(capacity)
}

/// One encoded JSON-RPC message on its way to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// A notification related to the request (progress, log message), or a
    /// server-to-client request of a legacy session.
    Notification(Bytes),
    /// The final response; `error_code` is set for error responses so that
    /// the HTTP transport can pick the status.
    Final {
        /// The encoded response.
        bytes: Bytes,
        /// The JSON-RPC error code, for error responses.
        error_code: Option<i32>,
        /// A refusal the client may try again after this many seconds (a
        /// quota): HTTP answers it 429 with `Retry-After`, in either era.
        retry_after_secs: Option<u32>,
    },
}

impl Outbound {
    /// The encoded message.
    pub fn bytes(&self) -> &Bytes {
        match self {
            Outbound::Notification(b) | Outbound::Final { bytes: b, .. } => b,
        }
    }

    /// A final response: the encoded result or error, with its code.
    pub fn answer(bytes: Vec<u8>, error_code: Option<i32>) -> Box<Outbound> {
        Box::new(Outbound::Final { bytes: bytes.into(), error_code, retry_after_secs: None })
    }

    /// A final error response the client may send again after `secs` seconds.
    pub fn retry_later(bytes: Vec<u8>, error_code: i32, secs: u32) -> Box<Outbound> {
        Box::new(Outbound::Final { bytes: bytes.into(), error_code: Some(error_code), retry_after_secs: Some(secs) })
    }
}
