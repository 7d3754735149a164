//! The two ways a client reaches a server, behind one interface: send a
//! message, and for a request receive the messages of its answer.

use std::sync::Arc;

use super::error::ClientError;
use super::http::Http;
use super::outgoing::{Inbound, Outgoing};
use super::stdio::Stdio;

/// A connection's transport.
#[derive(Clone)]
pub(crate) enum Transport {
    /// Streamable HTTP.
    Http(Arc<Http>),
    /// A child process's stdin and stdout.
    Stdio(Arc<Stdio>),
}

impl Transport {
    /// Sends a message; for a request, its answer's messages.
    pub(crate) async fn send(&self, out: &Outgoing, what: &str) -> Result<Inbound, ClientError> {
        match self {
            Transport::Http(h) => h.post(out, what).await,
            Transport::Stdio(s) => s.send(out),
        }
    }

    /// Whether closing the answer of a request cancels it (stateless HTTP:
    /// the stream is the request's lifetime); otherwise a
    /// `notifications/cancelled` is sent.
    pub(crate) fn closing_cancels(&self, stateless: bool) -> bool {
        matches!(self, Transport::Http(_)) && stateless
    }

    /// Closes the connection: a legacy HTTP session is deleted, a child
    /// process is ended.
    pub(crate) async fn close(&self) {
        match self {
            Transport::Http(h) => h.close().await,
            Transport::Stdio(s) => s.close().await,
        }
    }
}
