//! [`McpServer`]: the catalog, the configuration, the logger and the
//! subscription hub, with the entry points of both transports, embedding and
//! graceful shutdown.
//!
//! A server is created inside a running actix system (its hub actor gets an
//! arbiter of its own):
//!
//! ```no_run
//! use std::sync::Arc;
//! use actix_mcp::{catalog::Catalog, config::Config, logging, McpServer};
//!
//! #[actix_web::main]
//! async fn main() -> std::io::Result<()> {
//!     let server = McpServer::new(Arc::new(Catalog::new()), Config::default(), logging::discard());
//!     server.serve_http().await
//! }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, Addr, Arbiter};
use actix_web::{App, HttpServer};
use mcp_protocol::subscription::Event;
use mcp_protocol::ErrorData;
use slog::info;
use tokio::sync::oneshot;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::hub::{HubBackend, HubStats, MemoryBackend, Occupancy, Publish, Shutdown, Stats, SubscriptionHub};
use crate::intake::Admitted;
use crate::legacy::{PendingRequests, Session, SessionReaper, SessionRegistry};
use crate::listener::{ListenerActor, ListenerOutlet, ListenerSpec};
use crate::outbound::OutletTx;
use crate::redis_backend::RedisBackend;
use crate::request::{RequestActor, RequestSpec};
use crate::service::McpService;

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
    sessions: Arc<SessionRegistry>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("service", &self.inner.service).finish()
    }
}

impl McpServer {
    /// A server for `catalog` with the in-process hub backend.
    ///
    /// # Panics
    /// Outside a running actix system.
    /// The hub backend is the one `hub.backend` names (`memory` or `redis`).
    pub fn new(catalog: Arc<Catalog>, config: Config, log: slog::Logger) -> Self {
        let backend: Box<dyn HubBackend + Send> = match config.hub.backend.as_str() {
            "redis" => match RedisBackend::new(
                &config.hub.redis_url,
                &config.hub.redis_channel_prefix,
                Duration::from_millis(config.hub.dedup_ms),
            ) {
                Ok(b) => Box::new(b),
                Err(e) => {
                    slog::error!(log, "redis backend unavailable; events stay in this process"; "error" => e);
                    Box::new(MemoryBackend)
                }
            },
            _ => Box::new(MemoryBackend),
        };
        Self::with_backend(catalog, config, log, backend)
    }

    /// A server whose hub carries events through `backend`.
    pub fn with_backend(
        catalog: Arc<Catalog>,
        config: Config,
        log: slog::Logger,
        backend: Box<dyn HubBackend + Send>,
    ) -> Self {
        let h = &config.hub;
        let (max, mailbox, hub_log) = (h.max_listeners, h.mailbox, log.new(slog::o!("actor" => "hub")));
        let trim = Duration::from_millis(h.memory_trim_ms);
        let keep_alive = Duration::from_millis(h.keep_alive_ms.max(1));
        let hub =
            SubscriptionHub::new(backend, max, mailbox, hub_log).with_memory_trim(trim).with_keep_alive(keep_alive);
        let occupancy = hub.occupancy();
        let hub = SubscriptionHub::start_in_arbiter(&Arbiter::new().handle(), move |_| hub);
        let to_hub = hub.clone();
        // Catalog changes are published, never dropped (`do_send` ignores the
        // mailbox cap; these are rare and small).
        catalog.watch(move |event, key| to_hub.do_send(Publish { event: event.clone(), key: key.map(str::to_owned) }));
        let service = Arc::new(McpService::new(catalog, &config));
        if service.generated_key {
            slog::warn!(
                log,
                "no mrtr.key configured: requestState is signed with a per-process key, \
                so multi round-trip requests only work against this single instance"
            );
        }
        let l = &config.legacy;
        let sessions = Arc::new(SessionRegistry::new(
            l.max_sessions,
            Duration::from_millis(l.idle_timeout_ms),
            Duration::from_millis(l.input_timeout_ms),
        ));
        SessionReaper { registry: sessions.clone(), log: log.new(slog::o!("actor" => "session-reaper")) }.start();
        let hub = Arc::new(hub);
        McpServer { inner: Arc::new(Inner { service, config, log, hub, occupancy, sessions }) }
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

    /// The open legacy (`initialize`) sessions.
    pub fn sessions(&self) -> &Arc<SessionRegistry> {
        &self.inner.sessions
    }

    /// Starts the listener behind a legacy session's notification stream
    /// (HTTP GET stream, or stdout on stdio): every list change and the
    /// session's subscribed resources, untagged.
    pub fn start_legacy_listener(
        &self,
        session: &Session,
        outlet: Box<dyn ListenerOutlet>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        let (tx, rx) = oneshot::channel();
        let spec = ListenerSpec {
            subscription: mcp_protocol::RequestId::string(&session.id),
            filter: session.filter(),
            outlet,
            relay_mailbox: self.inner.config.hub.relay_mailbox,
            ready: Some(tx),
            legacy: true,
        };
        let addr = ListenerActor::start_with(self.inner.hub.clone(), spec, &self.inner.log);
        session.set_stream(addr.clone());
        (addr, rx)
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

    /// Starts a request actor for an admitted request on the current arbiter.
    pub fn start_request(&self, admitted: Admitted, outlet: OutletTx) -> Addr<RequestActor> {
        self.start_request_in(admitted, outlet, None)
    }

    /// Starts a request actor; `legacy` is the session's pending
    /// server-to-client requests for a request of the legacy era.
    pub fn start_request_in(
        &self,
        admitted: Admitted,
        outlet: OutletTx,
        legacy: Option<Arc<PendingRequests>>,
    ) -> Addr<RequestActor> {
        let c = &self.inner.config.request;
        let spec = RequestSpec {
            id: admitted.id,
            meta: admitted.meta,
            request: admitted.request,
            outlet,
            timeout: Duration::from_millis(c.timeout_ms),
            mailbox: c.mailbox,
            legacy,
        };
        RequestActor::start_with(self.inner.service.clone(), spec, &self.inner.log)
    }

    /// Starts a listener for an admitted `subscriptions/listen` on the current
    /// arbiter; `ready` resolves once it is subscribed and acknowledged.
    pub fn start_listener(
        &self,
        admitted: &Admitted,
        outlet: Box<dyn ListenerOutlet>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        let mcp_protocol::ClientRequest::Listen(params) = &admitted.request else {
            panic!("start_listener needs a subscriptions/listen request");
        };
        let (tx, rx) = oneshot::channel();
        let spec = ListenerSpec {
            subscription: admitted.id.clone(),
            filter: params.notifications.honored(&self.inner.service.supported_filter()),
            outlet,
            relay_mailbox: self.inner.config.hub.relay_mailbox,
            ready: Some(tx),
            legacy: false,
        };
        (ListenerActor::start_with(self.inner.hub.clone(), spec, &self.inner.log), rx)
    }

    /// Ends every subscription gracefully (each receives its completion
    /// result) and waits until they are gone, at most `hub.drain_ms`.
    /// Returns how many were open.
    pub async fn shutdown(&self) -> usize {
        let open = self.inner.hub.send(Shutdown).await.unwrap_or(0);
        let deadline = Instant::now() + Duration::from_millis(self.inner.config.hub.drain_ms);
        while Instant::now() < deadline && self.hub_stats().await.listeners > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        open
    }

    /// A function that registers the MCP endpoint on an actix-web `App`
    /// (`App::new().configure(server.http_config())`), for embedding. Set
    /// `HttpServer::h1_allow_half_closed(false)` on the embedding server too,
    /// so that a client closing its connection cancels at once.
    pub fn http_config(&self) -> impl Fn(&mut actix_web::web::ServiceConfig) + Clone {
        crate::transport::http::configure(self.clone())
    }

    /// Binds the HTTP server to `http.bind` and returns it (not yet awaited)
    /// with the bound addresses. Signals are left to the caller (see
    /// [`McpServer::serve_http`]) so that shutdown can end subscriptions first.
    pub fn bind_http(self) -> std::io::Result<(actix_web::dev::Server, Vec<SocketAddr>)> {
        let c = self.inner.config.http.clone();
        let config = self.http_config();
        let builder = HttpServer::new(move || App::new().configure(config.clone()))
            .shutdown_timeout(c.shutdown_timeout_secs)
            .max_connections(c.max_connections)
            // Stream events are small writes that must leave at once.
            .tcp_nodelay(true)
            // A client closing its side of the connection has gone: stop at
            // once, so a closed response stream cancels its request and frees
            // its subscription now rather than at the next keep-alive write.
            .h1_allow_half_closed(false)
            .disable_signals();
        #[cfg(feature = "h2c")]
        let mut builder = if c.h2c { builder.bind_auto_h2c(&c.bind)? } else { builder.bind(&c.bind)? };
        #[cfg(not(feature = "h2c"))]
        let mut builder = builder.bind(&c.bind)?;
        if c.workers > 0 {
            builder = builder.workers(c.workers);
        }
        let addrs = builder.addrs();
        Ok((builder.run(), addrs))
    }

    /// Serves HTTP until SIGINT or SIGTERM, printing
    /// `listening on http://ADDR/PATH` on stderr; at the signal every
    /// subscription gets its completion result, then the server stops.
    pub async fn serve_http(self) -> std::io::Result<()> {
        let path = self.config().http.path.clone();
        let (http, addrs) = self.clone().bind_http()?;
        for addr in &addrs {
            // One write, so the line cannot interleave with log output.
            let line = format!("listening on http://{addr}{path}\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
        }
        info!(self.logger(), "serving Streamable HTTP"; "addrs" => format!("{addrs:?}"), "path" => &path);
        let handle = http.handle();
        let server = self.clone();
        actix_rt::spawn(async move {
            shutdown_signal().await;
            let open = server.shutdown().await;
            info!(server.logger(), "shutting down"; "subscriptions_closed" => open);
            handle.stop(true).await;
        });
        http.await
    }

    /// Serves over stdin/stdout until EOF or SIGINT/SIGTERM (then every
    /// subscription gets its completion result first).
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        let serve = crate::transport::stdio::serve(self.clone(), input, tokio::io::stdout());
        tokio::select! {
            r = serve => r,
            _ = shutdown_signal() => {
                let open = self.shutdown().await;
                info!(self.logger(), "shutting down"; "subscriptions_closed" => open);
                // Let the writer flush the completion results.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(())
            }
        }
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
