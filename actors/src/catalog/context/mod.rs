//! [`RequestContext`]: what a handler sees of its request besides its
//! arguments — the client's declared capabilities, emitters for progress and
//! log notifications on this request's own response stream, and cancellation.

use std::sync::{Arc, Mutex};

use mcp_protocol::model::capabilities::ClientCapabilities;
use mcp_protocol::{ProtocolError, ProtocolVersion, RequestId, RequestMeta};
use tokio_util::sync::CancellationToken;

use crate::catalog::error::HandlerError;
use crate::catalog::Catalog;
use crate::channels::outbound::OutboundTx;
use crate::facts::headers::RequestHeaders;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;

mod input;
mod notify;
mod session;
mod task_link;

use input::RoundSlot;
pub use session::{ClientAnswer, SessionPeer};
pub(crate) use task_link::TaskLink;

/// The per-request context handed to every handler. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: RequestId,
    meta: RequestMeta,
    cancel: CancellationToken,
    outbound: OutboundTx,
    /// The server's logger; the request's child logger is built from it on first use.
    log: slog::Logger,
    child_log: std::sync::OnceLock<slog::Logger>,
    catalog: Arc<Catalog>,
    round: Mutex<RoundSlot>,
    /// A legacy request's session: input from the client is asked through it.
    session: Option<Arc<dyn SessionPeer>>,
    /// Headers and extensions from the transport.
    facts: RequestFacts,
    /// Set when the call may become (or is) a task.
    task: Option<Arc<TaskLink>>,
    /// Caching hints of this request's result, set by its handler.
    cache: Mutex<Option<mcp_protocol::model::CacheHints>>,
    /// The policy denied this call: it is answered as for an unknown item.
    denied: bool,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext").field("id", &self.inner.id).field("meta", &self.inner.meta).finish()
    }
}

/// What a request context is made of (the request actor has them all).
pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) meta: RequestMeta,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbound: OutboundTx,
    pub(crate) log: slog::Logger,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) session: Option<Arc<dyn SessionPeer>>,
    pub(crate) facts: RequestFacts,
    /// The policy denied the call.
    pub(crate) denied: bool,
}

impl RequestContext {
    /// Builds a context (the request actor does this).
    pub(crate) fn new(p: ContextParts) -> Self {
        let inner = Inner {
            id: p.id,
            meta: p.meta,
            cancel: p.cancel,
            outbound: p.outbound,
            log: p.log,
            child_log: std::sync::OnceLock::new(),
            catalog: p.catalog,
            round: Mutex::new(RoundSlot::Closed),
            cache: Mutex::new(None),
            session: p.session,
            facts: p.facts,
            task: None,
            denied: p.denied,
        };
        RequestContext { inner: Arc::new(inner) }
    }

    /// A context for a handler run that may outlive this request (a task):
    /// the same request, with its own cancellation, outbound channel, task
    /// link and (for a run resumed by another request) that request's facts
    /// and the task's own `_meta`.
    pub(crate) fn detached(
        &self,
        cancel: CancellationToken,
        outbound: OutboundTx,
        task: Arc<TaskLink>,
        facts: Option<RequestFacts>,
        meta: Option<RequestMeta>,
    ) -> Self {
        let i = &self.inner;
        let inner = Inner {
            id: i.id.clone(),
            meta: meta.unwrap_or_else(|| i.meta.clone()),
            cancel,
            outbound,
            log: i.log.clone(),
            child_log: std::sync::OnceLock::new(),
            catalog: i.catalog.clone(),
            round: Mutex::new(RoundSlot::Closed),
            cache: Mutex::new(None),
            session: i.session.clone(),
            facts: facts.unwrap_or_else(|| i.facts.clone()),
            task: Some(task),
            denied: i.denied,
        };
        RequestContext { inner: Arc::new(inner) }
    }

    /// Whether the policy denied this call.
    pub(crate) fn denied(&self) -> bool {
        self.inner.denied
    }

    /// The task link of a task-eligible call.
    pub(crate) fn task_link(&self) -> Option<&Arc<TaskLink>> {
        self.inner.task.as_ref()
    }

    /// Where the request's notifications and response go.
    pub(crate) fn outbound(&self) -> &OutboundTx {
        &self.inner.outbound
    }

    /// The catalog this request is served from: handlers may change it
    /// (subscribers are told) or publish resource updates through it.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.inner.catalog
    }

    /// The shared value of type `S` (set with the builder's `state`, or
    /// [`Catalog::set_state`]); an internal error when none was set.
    pub fn state<S: Send + Sync + 'static>(&self) -> Result<Arc<S>, HandlerError> {
        self.inner.catalog.state::<S>().ok_or_else(|| {
            HandlerError::internal(format!("no shared state of type {} was set", std::any::type_name::<S>()))
        })
    }

    /// The request's HTTP headers (`None` over stdio).
    pub fn headers(&self) -> Option<&RequestHeaders> {
        self.inner.facts.headers.as_ref()
    }

    /// The value of type `T` a middleware attached to this request.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.facts.extensions.get::<T>()
    }

    /// Who is calling — subject, client id, scopes and the validated
    /// claims — when authorization is on (or a middleware attached an
    /// [`Identity`]); `None` otherwise.
    pub fn auth(&self) -> Option<&Identity> {
        self.inner.facts.identity()
    }

    /// The same as [`auth`](Self::auth).
    pub fn identity(&self) -> Option<&Identity> {
        self.auth()
    }

    /// The request's W3C trace context: from its `_meta` (`traceparent`,
    /// `tracestate`, `baggage`), else from its HTTP headers; `None` when
    /// neither carried a well-formed one.
    pub fn trace_context(&self) -> Option<&mcp_protocol::trace::TraceContext> {
        self.inner.meta.trace.as_ref().or(self.inner.facts.trace.as_ref())
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// Sets the caching hints (`ttlMs`, `cacheScope`) of this request's
    /// result, in place of the item's own or the configured ones (a
    /// gateway passes on its upstream's). Only cacheable results carry them.
    pub fn set_cache_hints(&self, hints: mcp_protocol::model::CacheHints) {
        *self.inner.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some(hints);
    }

    /// The hints set with [`RequestContext::set_cache_hints`].
    pub(crate) fn cache_hints(&self) -> Option<mcp_protocol::model::CacheHints> {
        *self.inner.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The validated `_meta` of the request.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The protocol version of the request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.meta.version
    }

    /// What the client declared it can do, for this request only.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// What the client declared of the MCP Apps extension
    /// (`io.modelcontextprotocol/ui`), with the view MIME types it renders;
    /// `None` when it renders no views, so a tool answers with text alone.
    pub fn ui(&self) -> Option<mcp_protocol::apps::ClientSupport> {
        mcp_protocol::apps::client_support(self.client_capabilities())
    }

    /// Whether the client renders this server's views: it declared the
    /// MCP Apps extension with `text/html;profile=mcp-app` among its
    /// `mimeTypes`.
    pub fn renders_views(&self) -> bool {
        self.ui().is_some_and(|u| u.renders_views())
    }

    /// Fails with MissingRequiredClientCapability (-32021; draft -32003) unless
    /// the client declared every capability in `required`.
    pub fn require_capabilities(&self, required: &ClientCapabilities) -> Result<(), HandlerError> {
        match self.client_capabilities().missing(required) {
            None => Ok(()),
            Some(missing) => {
                let names: Vec<String> = serde_json::to_value(&missing)
                    .ok()
                    .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect()))
                    .unwrap_or_default();
                Err(ProtocolError::MissingCapability {
                    required: Box::new(missing),
                    message: format!("Server requires the {} capability for this request", names.join(", ")),
                }
                .into())
            }
        }
    }

    /// The request's cancellation token: it fires when the client cancels
    /// (closes the HTTP stream, or sends `notifications/cancelled` on stdio),
    /// on timeout and at shutdown. Handlers that do blocking or long work
    /// should watch it; async handlers are also dropped at cancellation.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Waits `duration`, or less if the request is cancelled meanwhile
    /// (the client went away, `notifications/cancelled`, the timeout, the
    /// server stopping): then an error, so `?` ends the handler.
    pub async fn sleep(&self, duration: std::time::Duration) -> Result<(), HandlerError> {
        tokio::select! {
            _ = self.inner.cancel.cancelled() => Err(HandlerError::internal("the request was cancelled")),
            _ = tokio::time::sleep(duration) => Ok(()),
        }
    }

    /// The request's logger (carries `request`).
    pub fn logger(&self) -> &slog::Logger {
        self.inner.child_log.get_or_init(|| self.inner.log.new(slog::o!("request" => self.inner.id.to_string())))
    }
}
