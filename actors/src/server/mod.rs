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
//! use actix_mcp::{catalog::Catalog, config::Config, telemetry::logging, transport, McpServer};
//!
//! #[actix_web::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = McpServer::new(Arc::new(Catalog::new()), Config::default(), logging::discard())?;
//!     transport::http::serve(server).await?;
//!     Ok(())
//! }
//! ```

mod assemble;
pub mod build_error;
mod listen;
mod metrics;
mod observe;
mod readiness;
mod reload;
mod sessions;
mod shutdown;

pub(crate) use assemble::backend_for;
pub use readiness::ReadinessCheck;
pub(crate) use reload::InCode;
pub use reload::{reload_on_hangup, Reloaded};
pub use shutdown::{shutdown_signal, Signal};

use std::sync::Arc;

use std::time::Duration;

use actix::Addr;
use mcp_protocol::subscription::Event;
use mcp_protocol::ErrorData;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use crate::auth::Authorizer;
use crate::catalog::Catalog;
use crate::channels::outbound::OutboundTx;
use crate::config::Config;
use crate::hub::{HubStats, Occupancy, Publish, Stats, SubscriptionHub};
use crate::pipeline::intake::Admitted;
use crate::pipeline::legacy::era::Era;
use crate::pipeline::legacy::registry::SessionIndex;
use crate::pipeline::legacy::{SessionRegistry, SessionsFull};
use crate::pipeline::request::{RequestActor, RequestSpec};
use crate::pipeline::service::McpService;

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
    /// Where sessions live beyond this instance (`legacy.store = "redis"`).
    session_store: Option<Arc<dyn crate::pipeline::legacy::store::SessionStore>>,
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
    /// The checks registered for readiness (a gateway's among them).
    checks: Vec<Arc<dyn ReadinessCheck>>,
    /// The gateway this server fronts.
    #[cfg(feature = "gateway")]
    gateway: Option<crate::gateway::Gateway>,
    /// The configuration's generations (reloads).
    reloads: reload::Generations,
    /// The listener of `metrics.bind`, started with the server.
    metrics_listener: Option<metrics::MetricsListener>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("service", &self.inner.service).finish()
    }
}

/// Why a legacy session could not be opened.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OpenError {
    /// `initialize` itself was refused (HTTP 400).
    Refused(ErrorData),
    /// `legacy.max_sessions` are open (HTTP 503).
    Full(SessionsFull),
    /// The session store cannot be reached (HTTP 503).
    Unavailable(ErrorData),
}

impl McpServer {
    /// The hub backend's counters, when it links instances (Redis).
    pub fn backend_stats(&self) -> Option<&Arc<crate::hub::BackendStats>> {
        self.inner.backend_link.as_ref()
    }

    /// Where the Redis master stands under Sentinel (`[redis] sentinels`,
    /// when the hub or the task store uses Redis): its address, the
    /// failovers seen and when the last was; `None` otherwise.
    pub fn redis_status(&self) -> Option<serde_json::Value> {
        #[cfg(feature = "redis")]
        if self.inner.backend_link.is_some() || self.inner.config.tasks.in_redis(self.inner.config.hub.backend) {
            return crate::hub::redis_link::sentinel_status(&self.inner.config.redis_target());
        }
        None
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
    pub(crate) fn service(&self) -> &Arc<McpService> {
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

    /// The intake every transport routes its messages through: this
    /// server's service, hub limits and occupancy, and authorization.
    pub(crate) fn intake(&self) -> crate::pipeline::intake::Intake<'_> {
        let i = &self.inner;
        crate::pipeline::intake::Intake::new(&i.service, &i.config.hub, &i.occupancy, i.auth.as_deref())
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
}

// The one way a request becomes an actor; the caller starts it on the
// current arbiter (`Actor::start`) or runs it in its own task
// (`RequestActor::start_here`).
impl McpServer {
    /// The request actor of an admitted request, not started: its
    /// notifications and response go to `outbound`, and it holds `slot` (a
    /// place in its connection's in-flight cap) until the request ends.
    pub(crate) fn request_actor(
        &self,
        admitted: Box<Admitted>,
        era: Era,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> RequestActor {
        let c = &self.inner.config.request;
        // An events stream lasts as long as its subscription (a year bounds
        // the timer), not `request.timeout_ms`.
        let timeout = match admitted.request {
            mcp_protocol::ClientRequest::StreamEvents(_) => Duration::from_secs(365 * 24 * 3600),
            _ => Duration::from_millis(c.timeout_ms),
        };
        let spec = RequestSpec {
            work: admitted,
            outbound,
            timeout,
            slow: Duration::from_millis(self.inner.config.log.slow_ms),
            mailbox: c.mailbox,
            era,
            cancel: self.inner.stopping.child_token(),
            stopping: self.inner.stopping.clone(),
            slot,
        };
        RequestActor::new(self.inner.service.clone(), spec, &self.inner.log)
    }
}
