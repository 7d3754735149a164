//! How a client presents itself and what it can do: identity, version
//! choice, time limits, extra headers, credentials, and the handlers that
//! give a server the input it asks for (elicitation, sampling, roots).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::model::logging::LogMessage;
use mcp_protocol::model::mrtr::{CreateMessageResult, ElicitResult, Root};
use mcp_protocol::model::progress::ProgressParams;
use mcp_protocol::model::{ClientCapabilities, Implementation, JsonObject, LoggingLevel};
use mcp_protocol::ProtocolVersion;
use serde_json::{json, Value};

use futures::future::BoxFuture;

use super::auth::TokenProvider;

/// Answers `elicitation/create`: its params in, the user's answer out (or a
/// message saying why it cannot).
pub(crate) type ElicitHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<ElicitResult, String>> + Send + Sync>;
/// Answers `sampling/createMessage`: its params in, the model's message out.
pub(crate) type SampleHandler =
    Arc<dyn Fn(Value) -> BoxFuture<'static, Result<CreateMessageResult, String>> + Send + Sync>;
/// Answers `roots/list`.
pub(crate) type RootsHandler = Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<Root>, String>> + Send + Sync>;
/// Called with each progress notification of a request.
pub(crate) type ProgressCallback = Arc<dyn Fn(ProgressParams) + Send + Sync>;
/// Called with each `notifications/message` of a request.
pub(crate) type LogCallback = Arc<dyn Fn(LogMessage) + Send + Sync>;
/// Answers the input one request needs: a method (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`) and its params in, the result out.
pub(crate) type InputHandler = Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// Which protocol version a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VersionChoice {
    /// `server/discover` first (the newest stateless version), falling back
    /// to the `initialize` handshake when the server does not know it.
    #[default]
    Auto,
    /// This version only: stateless versions skip `initialize`, legacy ones
    /// skip `server/discover`.
    Pin(ProtocolVersion),
}

/// The options of a connection; `ClientOptions::new` has sensible defaults.
#[derive(Clone)]
pub struct ClientOptions {
    pub(crate) info: Implementation,
    pub(crate) version: VersionChoice,
    pub(crate) timeout: Duration,
    pub(crate) max_input_rounds: usize,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) token: Option<Arc<dyn TokenProvider>>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) extensions: JsonObject,
    pub(crate) elicit: Option<ElicitHandler>,
    pub(crate) sample: Option<SampleHandler>,
    pub(crate) roots: Option<RootsHandler>,
    pub(crate) on_log: Option<LogCallback>,
    pub(crate) cache_lists: bool,
    pub(crate) max_message_bytes: usize,
    pub(crate) max_list_pages: usize,
    pub(crate) max_list_items: usize,
    pub(crate) max_queued_messages: usize,
}

pub use mcp_protocol::limits::{DEFAULT_MAX_LIST_ITEMS, DEFAULT_MAX_LIST_PAGES, DEFAULT_MAX_MESSAGE_BYTES};

/// The most messages from a server that wait unread, per request and for
/// the connection, and the most lines waiting for a stdio server's stdin.
pub const DEFAULT_MAX_QUEUED_MESSAGES: usize = 1024;

impl ClientOptions {
    /// Options for a client with this name and version; version by
    /// discovery, 60 s per request (the handshake too), 8 input rounds, no
    /// handlers; messages of at most 64 MiB, listings of at most 10,000
    /// pages and 100,000 items, at most 1,024 messages queued.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            info: Implementation::new(name, version),
            version: VersionChoice::Auto,
            timeout: Duration::from_secs(60),
            max_input_rounds: 8,
            headers: Vec::new(),
            token: None,
            log_level: None,
            extensions: JsonObject::new(),
            elicit: None,
            sample: None,
            roots: None,
            on_log: None,
            cache_lists: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_list_pages: DEFAULT_MAX_LIST_PAGES,
            max_list_items: DEFAULT_MAX_LIST_ITEMS,
            max_queued_messages: DEFAULT_MAX_QUEUED_MESSAGES,
        }
    }

    /// The largest message read from the server, in bytes: a stdio line,
    /// an HTTP JSON body or one SSE event. A larger one fails its request
    /// (over stdio, the connection) without being read whole.
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The most messages from the server that wait unread: per request
    /// (its progress, logs, deliveries; an HTTP stream is read no faster; a
    /// stdio request's reader that stays this far behind for the time limit
    /// fails its request, naming this limit) and for the connection; and
    /// the most lines waiting for a stdio server's stdin (senders wait).
    #[must_use]
    pub fn max_queued_messages(mut self, messages: usize) -> Self {
        self.max_queued_messages = messages.max(1);
        self
    }

    /// The most pages and items one listing (`tools/list`, …) collects; a
    /// server that goes on past them is given up with an error.
    #[must_use]
    pub fn max_list(mut self, pages: usize, items: usize) -> Self {
        self.max_list_pages = pages;
        self.max_list_items = items;
        self
    }

    /// Speaks only this version.
    #[must_use]
    pub fn pin(mut self, version: ProtocolVersion) -> Self {
        self.version = VersionChoice::Pin(version);
        self
    }

    /// The time limit of each request, the handshake (`server/discover`
    /// or `initialize`) included; a listen stream has none once open.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many `InputRequiredResult` rounds one request may take before
    /// the client gives up with [`ClientError::Input`](super::ClientError::Input).
    #[must_use]
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// An HTTP header sent with every request (not over stdio).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Where bearer tokens come from (HTTP only).
    #[must_use]
    pub fn token_provider(mut self, provider: impl TokenProvider) -> Self {
        self.token = Some(Arc::new(provider));
        self
    }

    /// A fixed bearer token.
    #[must_use]
    pub fn bearer(self, token: impl Into<String>) -> Self {
        self.token_provider(super::auth::StaticToken(token.into()))
    }

    /// The log level asked of the server (`_meta` statelessly,
    /// `logging/setLevel` in a legacy session).
    #[must_use]
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Declares an extension in the client's capabilities (e.g.
    /// `io.modelcontextprotocol/ui` with its settings).
    #[must_use]
    pub fn extension(mut self, name: impl Into<String>, settings: Value) -> Self {
        self.extensions.insert(name.into(), settings);
        self
    }

    /// Keeps each list (tools, resources, templates, prompts) for the
    /// `ttlMs` its pages carry, until a `list_changed` for it arrives.
    #[must_use]
    pub fn cache_lists(mut self) -> Self {
        self.cache_lists = true;
        self
    }

    /// Declares the Tasks extension: a call the server makes a task is
    /// followed to its end (see [`Client::follow_task`](super::Client::follow_task)).
    #[must_use]
    pub fn tasks(self) -> Self {
        self.extension(mcp_protocol::tasks::EXTENSION, json!({}))
    }

    /// Answers elicitation (and declares the capability).
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, String>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answers sampling (and declares the capability).
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, String>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answers `roots/list` (and declares the capability).
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, String>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(f())));
        self
    }

    /// Called with log messages not tied to one request (stdio, a legacy
    /// session's stream).
    #[must_use]
    pub fn on_log(mut self, f: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        self.on_log = Some(Arc::new(f));
        self
    }

    /// The client capabilities these options declare: one per handler, and
    /// the extensions.
    pub fn capabilities(&self) -> ClientCapabilities {
        let both_modes = || JsonObject::from_iter([("form".into(), json!({})), ("url".into(), json!({}))]);
        ClientCapabilities {
            elicitation: self.elicit.as_ref().map(|_| both_modes()),
            sampling: self.sample.as_ref().map(|_| JsonObject::new()),
            roots: self.roots.as_ref().map(|_| JsonObject::new()),
            experimental: None,
            extensions: Some(self.extensions.clone()).filter(|e| !e.is_empty()),
        }
    }
}

/// Options of one request: callbacks for its progress and log messages,
/// and its own time limit.
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) log: Option<LogCallback>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) input: Option<InputHandler>,
    pub(crate) capabilities: Option<ClientCapabilities>,
}

impl RequestOptions {
    /// No callbacks, the connection's time limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for progress (a `progressToken`) and calls `f` with each notification.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Calls `f` with each log message sent for this request.
    #[must_use]
    pub fn on_log(mut self, f: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        self.log = Some(Arc::new(f));
        self
    }

    /// This request's time limit.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The client capabilities this request declares in its `_meta`,
    /// instead of the connection's. A legacy session has one set, declared
    /// at `initialize`: there the request carries them as a hint, which a
    /// server may use to narrow that set for the request (this project's
    /// server does) and may ignore.
    #[must_use]
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Answers the input this request needs with `f` (method and params in,
    /// result out) instead of the connection's handlers, which still
    /// declare the capabilities: its `InputRequiredResult` rounds, and a
    /// server's requests inside its answer. A legacy stdio session's server
    /// requests name no request, so there requests with their own handler
    /// run one at a time.
    #[must_use]
    pub fn on_input<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, String>> + Send + 'static,
    {
        self.input = Some(Arc::new(move |m, p| Box::pin(f(m, p))));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_follow_the_handlers() {
        let bare = ClientOptions::new("c", "1");
        assert_eq!(bare.capabilities(), ClientCapabilities::default());
        let full = bare
            .on_elicit(|_| async { Err("no".to_owned()) })
            .on_roots(|| async { Ok(vec![]) })
            .extension("io.modelcontextprotocol/ui", json!({"mimeTypes": ["text/html;profile=mcp-app"]}));
        let caps = full.capabilities();
        assert!(caps.elicitation.is_some() && caps.roots.is_some() && caps.sampling.is_none());
        let ui = &caps.extensions.unwrap()["io.modelcontextprotocol/ui"];
        assert_eq!(ui["mimeTypes"][0], "text/html;profile=mcp-app");
    }
}
