//! The two ways a client reaches a server, behind one interface: send a
//! message, and for a request receive the messages of its answer.

use std::sync::Arc;

use super::error::ClientError;
use super::http::Http;
use super::outgoing::{Inbound, Outgoing};
use super::stdio::Stdio;

/// A connection's transport.
#[derive(Clone)]
pub(crate) enum Conduit {
    /// Streamable HTTP.
    Http(Arc<Http>),
    /// A child process's stdin and stdout.
    Stdio(Arc<Stdio>),
}

impl Conduit {
    /// Sends a message; for a request, its answer's messages.
    pub(crate) async fn send(&self, out: &Outgoing, what: &str) -> Result<Inbound, ClientError> {
        match self {
            Conduit::Http(h) => h.post(out, what).await,
            Conduit::Stdio(s) => s.send(out).await,
        }
    }

    /// Whether closing the answer of a request cancels it (stateless HTTP:
    /// the stream is the request's lifetime); otherwise a
    /// `notifications/cancelled` is sent.
    pub(crate) fn closing_cancels(&self, stateless: bool) -> bool {
        matches!(self, Conduit::Http(_)) && stateless
    }

    /// Closes the connection: a legacy HTTP session is deleted, a child
    /// process is ended.
    pub(crate) async fn close(&self) {
        match self {
            Conduit::Http(h) => h.close().await,
            Conduit::Stdio(s) => s.close().await,
        }
    }
}
