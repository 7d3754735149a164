//! Building a [`McpServer`] from its parts: the hub on an arbiter of its
//! own, the service over the catalog, the legacy sessions' registry, the
//! authorizer; and the hub backend `hub.backend` names.

use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Addr, Arbiter};
use tokio_util::sync::CancellationToken;

use super::build_error::BuildError;
use super::{Inner, McpServer};
use crate::auth::{Authenticator, Authorizer};
use crate::catalog::{Catalog, Origin, ScopeRules};
use crate::config::Config;
#[cfg(feature = "redis")]
use crate::config::ConfigError;
use crate::facts::clock::{Clock, SystemClock};
#[cfg(feature = "redis")]
use crate::hub::redis::RedisBackend;
use crate::hub::{HubBackend, MemoryBackend, Occupancy, Publish, SubscriptionHub};
#[cfg(feature = "redis")]
use crate::pipeline::legacy::redis_store::RedisSessions;
use crate::pipeline::legacy::registry::SessionIndex;
use crate::pipeline::legacy::store::SessionStore;
use crate::pipeline::legacy::SessionRegistry;
use crate::pipeline::service::McpService;

impl McpServer {
    /// A server for `catalog`, with the hub backend `hub.backend` names
    /// (`memory` or `redis`). The configuration is validated first (an
    /// error names the key). Needs a running actix system; the
    /// [builder](McpServer::builder) can start one. With `metrics.bind`
    /// set, the metrics listener starts now (see [`McpServer::metrics_addrs`]);
    /// an address it cannot listen on is an error naming the key.
    pub fn new(catalog: Arc<Catalog>, config: Config, log: slog::Logger) -> Result<Self, BuildError> {
        config.validate()?;
        let backend = backend_for(&config)?;
        Self::assemble(catalog, config, log, backend, Arc::new(SystemClock))
    }

    /// A server from all its parts: the hub's `backend`, and the `clock`
    /// that `requestState` expiry reads (a [`crate::facts::clock::ManualClock`] in
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
        install_telemetry(&config, &log);
        let backend_link = backend.stats();
        let (hub, occupancy) = start_hub(backend, &config, &log, &catalog);
        catalog.set_scope_rules(ScopeRules::from_config(&config.auth.item_scopes)?);
        let to_hub = hub.clone();
        // Catalog changes are published, never dropped (`do_send` ignores the
        // mailbox cap; these are rare and small).
        // A change a handler makes carries its request's trace context.
        catalog.watch(move |event, origin| {
            to_hub.do_send(Publish {
                event: event.clone(),
                key: origin.key().map(str::to_owned),
                trace: crate::telemetry::trace_scope::current(),
                here_only: origin == Origin::Mirrored,
            })
        });
        let service = Arc::new(governed_service(catalog, &config, clock, &log)?);
        // Task status changes reach listen streams (of every instance) through the hub.
        if let Some(tasks) = service.tasks() {
            tasks.notify_through(hub.clone().recipient());
            tasks.start(&log.new(slog::o!("actor" => "tasks")));
        }
        let (sessions, session_index, session_store) = start_sessions(&config, &log)?;
        let hub = Arc::new(hub);
        let stopping = CancellationToken::new();
        let _anchor = stopping.child_token();
        let auth = Authorizer::from_config(&config)?.map(Arc::new);
        let metrics_listener = super::metrics::start_listener(&config, &sessions, &backend_link, &log)?;
        let inner = Inner {
            service,
            reloads: super::reload::Generations::new(&config),
            config,
            log,
            hub,
            occupancy,
            sessions,
            session_index,
            session_store,
            stopping,
            _anchor,
            auth,
            draining: Default::default(),
            backend_link,
            checks: Vec::new(),
            #[cfg(feature = "gateway")]
            gateway: None,
            metrics_listener,
        };
        Ok(McpServer { inner: Arc::new(inner) })
    }

    /// This server with requests authorized by `authenticator` (instead of
    /// the one `auth.mode` names), under the scopes and metadata of
    /// `[auth]`. Must be called before the server is cloned (as the
    /// builder's [`authenticator`](crate::builder::McpServerBuilder::authenticator) does).
    pub fn with_authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Result<Self, BuildError> {
        let auth = Arc::new(Authorizer::new(authenticator, &self.inner.config));
        self.inner_mut("with_authenticator")?.auth = Some(auth);
        Ok(self)
    }
}

/// Metrics, the status page and spans, as the configuration asks.
fn install_telemetry(config: &Config, log: &slog::Logger) {
    #[cfg(feature = "metrics")]
    if config.metrics.enabled {
        crate::telemetry::install();
    }
    if config.status.enabled {
        crate::telemetry::status::enable();
    }
    crate::telemetry::install_spans(config, log);
}

/// The subscription hub over `backend`, on an arbiter of its own, and its
/// occupancy (read without a message).
fn start_hub(
    backend: Box<dyn HubBackend + Send>,
    config: &Config,
    log: &slog::Logger,
    catalog: &Arc<Catalog>,
) -> (Addr<SubscriptionHub>, Arc<Occupancy>) {
    let h = &config.hub;
    // Over HTTP/2 one connection carries many streams: the open-files limit
    // bounds connections then, not listen streams.
    let http2 = cfg!(feature = "h2c") && (config.http.h2c || config.http.tls.enabled());
    let max = if http2 { h.max_listeners } else { listener_cap(h.max_listeners, log) };
    let (mailbox, hub_log) = (h.mailbox, log.new(slog::o!("actor" => "hub")));
    let trim = Duration::from_millis(h.memory_trim_ms);
    let keep_alive = Duration::from_millis(h.keep_alive_ms.max(1));
    // Which URIs this instance's listeners want (a gateway subscribes upstream to those).
    let catalog = catalog.clone();
    let hub = SubscriptionHub::new(backend, max, mailbox, hub_log)
        .with_memory_trim(trim)
        .with_keep_alive(keep_alive)
        .with_interest(move |uri, wanted| catalog.interest(uri, wanted));
    let occupancy = hub.occupancy();
    (SubscriptionHub::start_in_arbiter(&Arbiter::new().handle(), move |_| hub), occupancy)
}

/// The legacy sessions' registry, on an arbiter of its own, its index
/// (lookups without a message) and the store sessions live in beyond this
/// instance (`legacy.store`), listening for what other instances say.
#[allow(clippy::type_complexity)]
fn start_sessions(
    config: &Config,
    log: &slog::Logger,
) -> Result<(Addr<SessionRegistry>, SessionIndex, Option<Arc<dyn SessionStore>>), BuildError> {
    let l = &config.legacy;
    let log = log.new(slog::o!("actor" => "sessions"));
    let store = session_store(config)?;
    let registry = SessionRegistry::new(
        l.max_sessions,
        Duration::from_millis(l.idle_timeout_ms),
        Duration::from_millis(l.input_timeout_ms),
        log.clone(),
    )
    .with_eviction(Duration::from_millis(l.evict_idle_ms));
    let shared = store.clone().map(|s| s as Arc<dyn SessionStore>);
    let registry = registry.with_store(shared.clone());
    let index = registry.index();
    let addr = SessionRegistry::start_in_arbiter(&Arbiter::new().handle(), move |_| registry);
    #[cfg(feature = "redis")]
    if let Some(store) = &store {
        store.start(config.redis.bus_buffer, addr.clone().recipient(), &log);
    }
    Ok((addr, index, shared))
}

/// The store `legacy.store` names: Redis, or none (sessions live in the
/// instance that opened them).
#[cfg(feature = "redis")]
fn session_store(config: &Config) -> Result<Option<Arc<RedisSessions>>, BuildError> {
    if !config.legacy.in_redis(config.hub.backend) {
        return Ok(None);
    }
    let store = RedisSessions::from_config(config)
        .map_err(|e| BuildError::Config(ConfigError(format!("legacy.store: {e}"))))?;
    Ok(Some(Arc::new(store)))
}

/// Without the `redis` feature sessions live where they were opened
/// (configuration naming Redis is refused before this).
#[cfg(not(feature = "redis"))]
fn session_store(_config: &Config) -> Result<Option<Arc<dyn SessionStore>>, BuildError> {
    Ok(None)
}

/// The service, with the audit log, the policy and the quotas `config`
/// names (a file or store that cannot be used is a start-up error naming
/// its key).
fn governed_service(
    catalog: Arc<Catalog>,
    config: &Config,
    clock: Arc<dyn Clock>,
    log: &slog::Logger,
) -> Result<McpService, BuildError> {
    let refused = |key: &str, e: String| BuildError::Config(crate::config::ConfigError(format!("{key}: {e}")));
    let audit = crate::audit::AuditLog::open(&config.audit, log).map_err(|e| refused("audit.file", e))?;
    let policy = crate::policy::Policy::load(&config.policy).map_err(|e| refused("policy.file", e))?;
    if policy.is_some() {
        // The decisions' series exist from the start, at 0.
        crate::telemetry::register_policy_decisions();
    }
    let quotas = crate::quota::Quotas::from_config(config, None, log).map_err(|e| refused("quotas", e))?;
    #[cfg(feature = "redis")]
    if config.events.history_in_redis(config.hub.backend) {
        crate::hub::redis_history::share_histories(&catalog, config, log).map_err(|e| refused("events.history", e))?;
    }
    let service = McpService::with_clock(catalog, config, clock, log).with_audit(audit);
    service.set_policy(policy.map(Arc::new));
    service.set_quotas(quotas.map(Arc::new));
    Ok(service)
}

/// The hub backend `hub.backend` names.
pub(crate) fn backend_for(config: &Config) -> Result<Box<dyn HubBackend + Send>, BuildError> {
    Ok(match config.hub.backend {
        #[cfg(feature = "redis")]
        crate::config::HubBackend::Redis => Box::new(
            RedisBackend::new(
                config.redis_target(),
                &config.hub.redis_channel_prefix,
                Duration::from_millis(config.hub.dedup_ms),
            )
            .map_err(|e| BuildError::Config(ConfigError(e)))?,
        ),
        #[cfg(not(feature = "redis"))]
        crate::config::HubBackend::Redis => {
            return Err(BuildError::Config(crate::config::needs_feature("hub.backend = \"redis\"", "redis")))
        }
        crate::config::HubBackend::Memory => Box::new(MemoryBackend),
    })
}

/// `hub.max_listeners`, lowered to what the process's open-files limit can
/// hold when streams come over HTTP/1.1 (each a connection, a file): past that, new
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
