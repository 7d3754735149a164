//! [`McpServer`]: the service, the subscription hub and the legacy sessions,
//! with the entry points every transport uses to start the actors of one
//! routed message (a request actor, a listener, a session) and graceful
//! shutdown. It names no transport: the transports
//! ([`transport::http`](crate::transport::http),
//! [`transport::stdio`](crate::transport::stdio)) take a server.
//!
//! A server is created inside a running actix system (its hub and session
//! registry get arbiters of their own):
//!
//! ```no_run
//! use std::sync::Arc;
//! use actix_mcp::{catalog::Catalog, config::Config, logging, transport, McpServer};
//!
//! #[actix_web::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = McpServer::new(Arc::new(Catalog::new()), Config::default(), logging::discard())?;
//!     transport::http::serve(server).await?;
//!     Ok(())
//! }
//! ```

use crate::auth::{Authenticator, Authorizer};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, Addr, Arbiter, Recipient};
use mcp_protocol::jsonrpc::{encode_error, encode_result, Request};
use mcp_protocol::subscription::{Event, SubscriptionFilter};
use mcp_protocol::ErrorData;
use tokio::sync::{oneshot, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::bridge::{HubEvent, HubSubscription, RecipientSink};
use crate::build_error::BuildError;
use crate::catalog::Catalog;
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigError};
use crate::era::Era;
use crate::facts::RequestFacts;
use crate::hub::{HubBackend, HubStats, MemoryBackend, Occupancy, Publish, Shutdown, Stats, SubscriptionHub};
use crate::identity::Identity;
use crate::intake::Admitted;
use crate::legacy::registry::{Close as EndSession, Count, Open, SessionIndex};
use crate::legacy::{Reply, SessionHandle, SessionRegistry, SessionsFull};
use crate::listener::{ListenerActor, ListenerKind, ListenerSpec};
use crate::outbound::{Outbound, OutboundTx};
use crate::redis_backend::RedisBackend;
use crate::request::{RequestActor, RequestSpec, StartHere};
use crate::service::McpService;
use crate::sink::ListenerSink;

/// An MCP server: cheap to clone, shared by every worker.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    service: Arc<McpService>,
    config: Config,
    log: slog::Logger,
    /// Shared with every listener.
    hub: Arc<Addr<SubscriptionHub>>,
    occupancy: Arc<Occupancy>,
    sessions: Addr<SessionRegistry>,
    /// The registry's sessions by id, for lookups without a message.
    session_index: SessionIndex,
    /// Fires when running requests must end (every request actor holds a
    /// child token).
    stopping: CancellationToken,
    /// A child of `stopping` for the server's lifetime. The token frees its
    /// list of children whenever the last one goes, so without this one
    /// each request's child would allocate the list again (and free it on
    /// its end): with requests answered one after the other, on every call.
    _anchor: CancellationToken,
    /// Authorization of HTTP requests (`None`: every request is served).
    auth: Option<Arc<Authorizer>>,
    /// Set when shutdown begins: readiness answers 503 from then on.
    draining: std::sync::atomic::AtomicBool,
    /// The hub backend's link to other instances, when it has one.
    backend_link: Option<Arc<crate::hub::BackendStats>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("service", &self.inner.service).finish()
    }
}

/// Why a legacy session could not be opened.
#[derive(Debug, Clone, PartialEq)]
pub enum OpenError {
    /// `initialize` itself was refused (HTTP 400).
    Refused(ErrorData),
    /// `legacy.max_sessions` are open (HTTP 503).
    Full(SessionsFull),
}

impl McpServer {
    /// A server for `catalog`, with the hub backend `hub.backend` names
    /// (`memory` or `redis`). The configuration is validated first (an
    /// error names the key). Needs a running actix system; the
    /// [builder](McpServer::builder) can start one.
    pub fn new(catalog: Arc<Catalog>, config: Config, log: slog::Logger) -> Result<Self, BuildError> {
        config.validate()?;
        let backend = backend_for(&config)?;
        Self::assemble(catalog, config, log, backend, Arc::new(SystemClock))
    }

    /// A server from all its parts: the hub's `backend`, and the `clock`
    /// that `requestState` expiry reads (a [`crate::clock::ManualClock`] in
    /// tests).
    pub fn assemble(
        catalog: Arc<Catalog>,
        config: Config,
        log: slog::Logger,
        backend: Box<dyn HubBackend + Send>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, BuildError> {
        if actix_rt::System::try_current().is_none() {
            return Err(BuildError::NoSystem);
        }
        if config.metrics.enabled {
            crate::telemetry::install();
        }
        if config.status.enabled {
            crate::telemetry::status::enable();
        }
        crate::telemetry::install_spans(&config, &log);
        let h = &config.hub;
        let max = listener_cap(h.max_listeners, &log);
        let (mailbox, hub_log) = (h.mailbox, log.new(slog::o!("actor" => "hub")));
        let trim = Duration::from_millis(h.memory_trim_ms);
        let keep_alive = Duration::from_millis(h.keep_alive_ms.max(1));
        let backend_link = backend.stats();
        let hub =
            SubscriptionHub::new(backend, max, mailbox, hub_log).with_memory_trim(trim).with_keep_alive(keep_alive);
        let occupancy = hub.occupancy();
        let hub = SubscriptionHub::start_in_arbiter(&Arbiter::new().handle(), move |_| hub);
        let to_hub = hub.clone();
        // Catalog changes are published, never dropped (`do_send` ignores the
        // mailbox cap; these are rare and small).
        // A change a handler makes carries its request's trace context.
        catalog.watch(move |event, key| {
            to_hub.do_send(Publish {
                event: event.clone(),
                key: key.map(str::to_owned),
                trace: crate::trace_scope::current(),
            })
        });
        let service = Arc::new(McpService::with_clock(catalog, &config, clock, &log));
        // Task status changes reach listen streams (of every instance) through the hub.
        if let Some(tasks) = service.tasks() {
            tasks.notify_through(hub.clone().recipient());
            tasks.start(&log.new(slog::o!("actor" => "tasks")));
        }
        let l = &config.legacy;
        let registry = SessionRegistry::new(
            l.max_sessions,
            Duration::from_millis(l.idle_timeout_ms),
            Duration::from_millis(l.input_timeout_ms),
            log.new(slog::o!("actor" => "sessions")),
        )
        .with_eviction(Duration::from_millis(l.evict_idle_ms));
        let session_index = registry.index();
        let sessions = SessionRegistry::start_in_arbiter(&Arbiter::new().handle(), move |_| registry);
        let hub = Arc::new(hub);
        let stopping = CancellationToken::new();
        let _anchor = stopping.child_token();
        let auth = Authorizer::from_config(&config)?.map(Arc::new);
        let draining = std::sync::atomic::AtomicBool::new(false);
        let inner = Inner {
            service,
            config,
            log,
            hub,
            occupancy,
            sessions,
            session_index,
            stopping,
            _anchor,
            auth,
            draining,
            backend_link,
        };
        Ok(McpServer { inner: Arc::new(inner) })
    }

    /// This server with requests authorized by `authenticator` (instead of
    /// the one `auth.mode` names), under the scopes and metadata of
    /// `[auth]`. Must be called before the server is cloned (as the
    /// builder's [`authenticator`](crate::builder::McpServerBuilder::authenticator) does).
    pub fn with_authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Result<Self, BuildError> {
        let auth = Arc::new(Authorizer::new(authenticator, &self.inner.config));
        let inner = Arc::get_mut(&mut self.inner).ok_or_else(|| {
            BuildError::Config(crate::config::ConfigError("with_authenticator: the server is already shared".into()))
        })?;
        inner.auth = Some(auth);
        Ok(self)
    }

    /// Whether this instance should get traffic, and if not, why: it is
    /// draining at shutdown, its hub is at capacity, or (with
    /// `hub.require_backend`) its link to the other instances is down.
    pub fn readiness(&self) -> Result<(), Vec<&'static str>> {
        let mut why = Vec::new();
        if self.inner.draining.load(std::sync::atomic::Ordering::Acquire) {
            why.push("draining: the server is shutting down");
        }
        if matches!(self.inner.occupancy.check(), Err(crate::hub::HubError::Full { .. })) {
            why.push("the subscription hub is at capacity");
        }
        if self.inner.config.hub.require_backend {
            if let Some(link) = &self.inner.backend_link {
                if !link.connected.load(std::sync::atomic::Ordering::Acquire) {
                    why.push("the hub backend (Redis) is unreachable");
                }
            }
        }
        if why.is_empty() {
            Ok(())
        } else {
            Err(why)
        }
    }

    /// The hub backend's counters, when it links instances (Redis).
    pub fn backend_stats(&self) -> Option<&Arc<crate::hub::BackendStats>> {
        self.inner.backend_link.as_ref()
    }

    /// The server's authorization, when it has one.
    pub fn authorizer(&self) -> Option<&Arc<Authorizer>> {
        self.inner.auth.as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The catalog (add or remove items at runtime through it).
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.inner.service.catalog()
    }

    /// The request semantics.
    pub fn service(&self) -> &Arc<McpService> {
        &self.inner.service
    }

    /// The root logger.
    pub fn logger(&self) -> &slog::Logger {
        &self.inner.log
    }

    /// The subscription hub.
    pub fn hub(&self) -> &Addr<SubscriptionHub> {
        &self.inner.hub
    }

    /// Whether the hub would accept a subscription now (no round trip).
    pub fn hub_occupancy(&self) -> &Occupancy {
        &self.inner.occupancy
    }

    /// Publishes `notifications/resources/updated` for `uri` to every
    /// subscription whose `resourceSubscriptions` contain it.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner.hub.do_send(Publish::local(Event::ResourceUpdated { uri: uri.to_owned() }));
    }

    /// The hub's counters.
    pub async fn hub_stats(&self) -> HubStats {
        self.inner.hub.send(Stats).await.unwrap_or_default()
    }

    /// Starts a request actor for an admitted request on the current
    /// arbiter; its notifications and response go to `outbound`.
    pub fn start_request(&self, admitted: Admitted, era: Era, outbound: OutboundTx) -> Addr<RequestActor> {
        self.start_request_in_slot(admitted, era, outbound, None)
    }

    /// [`McpServer::start_request`], holding `slot` (a place in its
    /// connection's in-flight cap) until the request ends.
    pub fn start_request_in_slot(
        &self,
        admitted: Admitted,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Addr<RequestActor> {
        self.start_boxed_in_slot(Box::new(admitted), era, outbound, slot)
    }

    /// [`McpServer::start_request_in_slot`] of a boxed request.
    fn start_boxed_in_slot(
        &self,
        admitted: Box<Admitted>,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Addr<RequestActor> {
        let spec = self.request_spec(admitted, era, outbound, slot);
        RequestActor::start_with(self.inner.service.clone(), spec, &self.inner.log)
    }

    /// A request actor for an admitted request, started in the task that
    /// polls the returned future ([`RequestActor::start_here`]).
    pub(crate) fn start_request_here(&self, admitted: Box<Admitted>, era: Era, outbound: OutboundTx) -> StartHere {
        RequestActor::new(self.inner.service.clone(), self.request_spec(admitted, era, outbound, None), &self.inner.log)
            .start_here()
    }

    /// What a request actor for `admitted` starts with.
    fn request_spec(
        &self,
        admitted: Box<Admitted>,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> RequestSpec {
        let c = &self.inner.config.request;
        RequestSpec {
            work: admitted,
            outbound,
            timeout: Duration::from_millis(c.timeout_ms),
            slow: Duration::from_millis(self.inner.config.log.slow_ms),
            mailbox: c.mailbox,
            era,
            cancel: self.inner.stopping.child_token(),
            stopping: self.inner.stopping.clone(),
            slot,
        }
    }

    /// The filter a `subscriptions/listen` request is served with: what it
    /// asked for, of what this server can deliver; its error (-32602) when
    /// it names more URIs, or longer ones, than `hub.max_resource_subscriptions`
    /// and `hub.max_uri_bytes` allow.
    pub fn listen_filter(&self, admitted: &Admitted) -> Result<SubscriptionFilter, ErrorData> {
        let mcp_protocol::ClientRequest::Listen(p) = &admitted.request else {
            return Ok(SubscriptionFilter::default());
        };
        let hub = &self.inner.config.hub;
        p.notifications
            .check_limits(hub.max_resource_subscriptions, hub.max_uri_bytes)
            .map_err(|e| e.to_error_data(admitted.meta.version.profile()))?;
        // Task status notifications are for clients that declared the extension.
        if !p.notifications.task_ids.is_empty()
            && self.inner.service.tasks().is_some()
            && !mcp_protocol::tasks::declared(&admitted.meta.client_capabilities)
        {
            let missing = mcp_protocol::tasks::missing_extension("notifications.taskIds");
            return Err(missing.to_error_data(admitted.meta.version.profile()));
        }
        // Task events go to their owner's listens only.
        let owner = admitted.facts.identity().map(Identity::key);
        Ok(p.notifications.honored(&self.inner.service.supported_filter()).owned_by(owner))
    }

    /// Starts a listener on the current arbiter (the sink's thread); `ready`
    /// resolves once it is subscribed (and acknowledged).
    pub fn start_listener(
        &self,
        kind: ListenerKind,
        filter: SubscriptionFilter,
        sink: Box<dyn ListenerSink>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        self.start_listener_until(kind, filter, sink, None)
    }

    /// [`start_listener`](Self::start_listener) for a stream that ends with
    /// its completion result after `expires_in` (when the credentials that
    /// opened it expire).
    pub fn start_listener_until(
        &self,
        kind: ListenerKind,
        filter: SubscriptionFilter,
        sink: Box<dyn ListenerSink>,
        expires_in: Option<Duration>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        let (tx, rx) = oneshot::channel();
        let relay_mailbox = self.inner.config.hub.relay_mailbox;
        let spec = ListenerSpec { kind, filter, sink, relay_mailbox, ready: Some(tx), expires_in };
        (ListenerActor::start_with(self.inner.hub.clone(), spec, &self.inner.log), rx)
    }

    /// Where your own actors publish changes (`Publish::local(Event::…)`):
    /// to this instance's listeners and, through the backend, the others'.
    pub fn notifier(&self) -> Recipient<Publish> {
        (*self.inner.hub).clone().recipient()
    }

    /// Registers `recipient` as a listener of the hub with `filter`: it gets
    /// a [`HubEvent`] for each matching change, bounded by its mailbox (a
    /// full mailbox closes the subscription as lagging, like a slow stream).
    /// Resolves once subscribed; an error when the hub refuses (at capacity,
    /// shutting down).
    pub async fn subscribe(
        &self,
        filter: SubscriptionFilter,
        recipient: Recipient<HubEvent>,
    ) -> Result<HubSubscription, ErrorData> {
        let (listener, ready) = self.start_listener(ListenerKind::Bridge, filter, Box::new(RecipientSink(recipient)));
        match ready.await {
            Ok(Ok(())) => Ok(HubSubscription { listener }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ErrorData::internal("the listener stopped before it subscribed")),
        }
    }

    /// Starts the listener behind a legacy session's notification stream
    /// (HTTP GET stream, or stdout on stdio) and hands it to the session.
    pub async fn start_session_stream(
        &self,
        session: &SessionHandle,
        sink: Box<dyn ListenerSink>,
    ) -> Result<oneshot::Receiver<Result<(), ErrorData>>, ErrorData> {
        let filter = session.stream_filter().await?;
        let (addr, ready) = self.start_listener(ListenerKind::Session, filter, sink);
        session.set_stream(addr.clone().recipient(), addr.recipient());
        Ok(ready)
    }

    /// Answers a legacy client's `initialize` and opens its HTTP session,
    /// which only `owner` may use when it is given (the authenticated
    /// caller's [`Identity::key`]).
    pub async fn open_session(&self, r: &Request, owner: Option<&str>) -> Result<(SessionHandle, Vec<u8>), OpenError> {
        let (state, result) = self.inner.service.initialize(r).map_err(OpenError::Refused)?;
        let (version, client) = (state.version, state.client_info.name.clone());
        let opened = self.inner.sessions.send(Open(state, owner.map(Arc::from))).await;
        let session = match opened {
            Ok(Ok(s)) => s,
            Ok(Err(full)) => return Err(OpenError::Full(full)),
            Err(_) => return Err(OpenError::Refused(ErrorData::internal("the session registry has stopped"))),
        };
        slog::info!(self.inner.log, "legacy session opened"; "session" => session.id(),
            "version" => version.as_str(), "client" => client);
        Ok((session, encode_result(&r.id, &result)))
    }

    /// The open HTTP session `id`, if there is one.
    pub async fn find_session(&self, id: &str) -> Option<SessionHandle> {
        self.inner.session_index.find(id)
    }

    /// Ends the HTTP session `id`; false if there was none.
    pub async fn end_session(&self, id: &str) -> bool {
        self.inner.sessions.send(EndSession(id.to_owned())).await.unwrap_or(false)
    }

    /// How many HTTP sessions are open.
    pub async fn session_count(&self) -> usize {
        self.inner.sessions.send(Count).await.unwrap_or(0)
    }

    /// Serves a request of a legacy session: session methods are answered
    /// into `outbound` at once; shared methods run in a request actor of the
    /// session's era (returned). Either way the reply arrives on `outbound`.
    pub async fn session_request(
        &self,
        session: &SessionHandle,
        r: Request,
        facts: RequestFacts,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Option<Addr<RequestActor>> {
        let id = r.id.clone();
        match session.request(r).await {
            Ok(Reply::Run(mut admitted)) => {
                admitted.facts = facts;
                let era = Era::Legacy(session.clone());
                Some(self.start_boxed_in_slot(admitted, era, outbound, slot))
            }
            Ok(Reply::Now(result)) => {
                answer_now(&id, result, &outbound).await;
                None
            }
            Err(e) => {
                answer_now(&id, Err(e), &outbound).await;
                None
            }
        }
    }

    /// [`McpServer::session_request`] with the request actor started in the
    /// calling task ([`RequestActor::start_here`]): a handler that answers
    /// at once has answered when this returns.
    pub(crate) async fn session_request_here(
        &self,
        session: &SessionHandle,
        r: Request,
        facts: RequestFacts,
        outbound: OutboundTx,
    ) {
        let id = r.id.clone();
        match session.request(r).await {
            Ok(Reply::Run(mut admitted)) => {
                admitted.facts = facts;
                self.start_request_here(admitted, Era::Legacy(session.clone()), outbound).await;
            }
            Ok(Reply::Now(result)) => answer_now(&id, result, &outbound).await,
            Err(e) => answer_now(&id, Err(e), &outbound).await,
        }
    }

    /// Ends every running request with an error response (-32603 "server
    /// shutting down"): the last step of a graceful shutdown, so that no
    /// request is cut off without an answer.
    pub fn abort_requests(&self) {
        self.inner.stopping.cancel();
    }

    /// Ends every subscription gracefully (each receives its completion
    /// result) and waits until they are gone, at most `hub.drain_ms`.
    /// Returns how many were open.
    pub async fn shutdown(&self) -> usize {
        // Readiness fails first, so a load balancer stops sending new work
        // before the listeners get their completion result.
        self.inner.draining.store(true, std::sync::atomic::Ordering::Release);
        let open = self.inner.hub.send(Shutdown).await.unwrap_or(0);
        let deadline = Instant::now() + Duration::from_millis(self.inner.config.hub.drain_ms);
        while Instant::now() < deadline && self.hub_stats().await.listeners > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The listen streams' spans ended with them.
        crate::telemetry::flush_spans();
        open
    }
}

/// The hub backend `hub.backend` names.
pub(crate) fn backend_for(config: &Config) -> Result<Box<dyn HubBackend + Send>, BuildError> {
    Ok(match config.hub.backend.as_str() {
        "redis" => Box::new(
            RedisBackend::new(
                &config.hub.redis_url,
                &config.hub.redis_channel_prefix,
                Duration::from_millis(config.hub.dedup_ms),
            )
            .map_err(|e| BuildError::Config(ConfigError(format!("hub.redis_url: {e}"))))?,
        ),
        "memory" => Box::new(MemoryBackend),
        other => {
            return Err(BuildError::Config(ConfigError(format!("hub.backend must be memory or redis, not {other:?}"))))
        }
    })
}

/// `hub.max_listeners`, lowered to what the process's open-files limit can
/// hold (an HTTP/1.1 listen stream is a connection, a file): past that, new
/// connections would hang in the accept queue instead of getting 503. Part
/// of the limit is kept for everything else (listening sockets, Redis, the
/// watcher, requests).
fn listener_cap(configured: usize, log: &slog::Logger) -> usize {
    let Some(files) = open_files_limit() else { return configured };
    let budget = files.saturating_sub((files / 2).min(256)).max(1);
    if configured <= budget {
        return configured;
    }
    // A default that adapts itself to the machine: worth knowing, not a fault.
    slog::info!(log, "hub.max_listeners lowered to fit the open-files limit";
        "configured" => configured, "max_listeners" => budget, "open_files_limit" => files);
    budget
}

/// The soft limit on open files, where the platform has one.
fn open_files_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit into the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then(|| usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Resolves at SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Hands a session's immediate answer (or its error) to the outbound channel.
async fn answer_now(id: &mcp_protocol::RequestId, now: Result<serde_json::Value, ErrorData>, outbound: &OutboundTx) {
    let (bytes, code) = match now {
        Ok(result) => (encode_result(id, &result), None),
        Err(e) => (encode_error(Some(id), &e), Some(e.code.0)),
    };
    let _ = outbound.send(Outbound::answer(bytes, code)).await;
}
