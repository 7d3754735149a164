//! [`Outbound`]: what a request actor hands its transport, already encoded.

use bytes::Bytes;

/// One encoded JSON-RPC message on its way to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// A notification related to the request (progress, log message).
    Notification(Bytes),
    /// The final response; `error_code` is set for error responses so that
    /// the HTTP transport can pick the status.
    Final {
        /// The encoded response.
        bytes: Bytes,
        /// The JSON-RPC error code, for error responses.
        error_code: Option<i32>,
    },
}

impl Outbound {
    /// The encoded message.
    pub fn bytes(&self) -> &Bytes {
        match self {
            Outbound::Notification(b) | Outbound::Final { bytes: b, .. } => b,
        }
    }
}
