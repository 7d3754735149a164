//! A client for any MCP server: Streamable HTTP or a stdio child process,
//! either era (`server/discover` first, else the `initialize` handshake),
//! with the input a server asks for answered by your handlers, listen
//! streams, and errors a program can act on.
//!
//! ```no_run
//! use actix_mcp::client::{Client, ClientOptions};
//!
//! # async fn run() -> Result<(), actix_mcp::client::ClientError> {
//! let client = Client::connect("http://127.0.0.1:8080/mcp", ClientOptions::new("my-app", "1.0")).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description);
//! }
//! let sum: serde_json::Value = client.call("add", serde_json::json!({"a": 1, "b": 2})).await?;
//! # Ok(()) }
//! ```
//!
//! Each connection is also an actor: [`Client::start`] gives an
//! `Addr<ClientActor>` that answers [`Call`] messages, for actix apps that
//! pass addresses or `Recipient`s around.

mod actor;
mod api;
pub mod auth;
mod cache;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
mod connection;
mod error;
mod events;
mod h1;
mod http;
mod input;
mod listen;
mod negotiate;
pub mod oauth;
mod options;
mod outgoing;
mod sse;
mod started;
mod stdio;
mod tasks;
mod transport;

use std::sync::Arc;

use serde_json::Value;

pub use actor::{Call, ClientActor};
pub use error::ClientError;
pub use events::{EventBatch, EventStream, EventSubscription, Polled, POLL_FLOOR};
pub use listen::Listen;
pub use mcp_protocol::client::ServerInfo;
pub use mcp_protocol::subscription::SubscriptionFilter;
pub use options::{
    ClientOptions, RequestOptions, VersionChoice, DEFAULT_MAX_LIST_ITEMS, DEFAULT_MAX_LIST_PAGES,
    DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUEUED_MESSAGES,
};
pub use started::Started;

use connection::Inner;
use outgoing::{inbound, Inbound};
use transport::Conduit;

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Its method, e.g. `notifications/tools/list_changed`.
    pub method: String,
    /// Its params (`null` when it had none).
    pub params: Value,
}

/// A connection to one MCP server. Cloning shares it; it closes when the
/// last clone is dropped or [`close`](Client::close) is called.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl Client {
    /// Connects to a Streamable HTTP endpoint and learns its era (within
    /// the options' time limit).
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, ClientError> {
        let (tx, rx) = inbound(options.max_queued_messages);
        let http = http::Http::new(url, options.clone(), tx)?;
        Self::open(Conduit::Http(Arc::new(http)), options, rx).await
    }

    /// Starts `command` as a child process speaking MCP on stdin/stdout
    /// (its stderr is inherited unless the command says otherwise; it runs
    /// in a process group of its own) and learns its era (within the
    /// options' time limit). The child and its process group are ended when
    /// the client closes.
    pub async fn spawn(command: tokio::process::Command, options: ClientOptions) -> Result<Self, ClientError> {
        let (tx, rx) = inbound(options.max_queued_messages);
        let (line, bound) = (options.max_message_bytes, options.max_queued_messages);
        let stdio = stdio::Stdio::spawn(command, tx, line, bound, options.timeout)?;
        Self::open(Conduit::Stdio(Arc::new(stdio)), options, rx).await
    }

    /// Starts a shell command line (`sh -c LINE`) as a stdio server.
    pub async fn spawn_shell(line: &str, options: ClientOptions) -> Result<Self, ClientError> {
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(line);
        Self::spawn(command, options).await
    }

    async fn open(transport: Conduit, options: ClientOptions, unrouted: Inbound) -> Result<Self, ClientError> {
        let limit = options.timeout;
        let inner = Arc::new(Inner::new(options, transport));
        tokio::spawn(connection::serve_unrouted(Arc::downgrade(&inner), unrouted));
        // The handshake is bounded as every request is: a server that never
        // answers it is given up.
        let negotiated = match tokio::time::timeout(limit, negotiate::negotiate(&inner)).await {
            Ok(done) => done,
            Err(_) => Err(ClientError::Timeout(limit)),
        };
        if let Err(e) = negotiated {
            inner.transport.close().await;
            return Err(e);
        }
        Ok(Client { inner })
    }

    /// How many messages wait unread at most ([`ClientOptions::max_queued_messages`]).
    pub fn max_queued_messages(&self) -> usize {
        self.inner.options.max_queued_messages
    }

    /// What the server said about itself.
    pub fn server(&self) -> ServerInfo {
        self.inner.server.lock().expect("server lock").clone()
    }

    /// Resolves when the connection is lost, with why (a sentence): a
    /// stdio server's process has ended (or broke the transport's rules,
    /// as a line over `max_message_bytes`); an HTTP server could not be
    /// reached by a request (the connection refused or broken before an
    /// answer: the server is gone, or going away — a server that answers
    /// with an error is still there).
    pub async fn closed(&self) -> String {
        match &self.inner.transport {
            Conduit::Stdio(s) => s.ended().await,
            Conduit::Http(h) => h.unreachable().await,
        }
    }

    /// Closes the connection: a legacy HTTP session is deleted, a child
    /// process ended. Calls still in flight fail.
    pub async fn close(&self) {
        self.inner.transport.close().await;
    }
}
