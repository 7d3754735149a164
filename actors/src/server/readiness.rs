//! Whether this instance should get traffic (`/readyz`): the server's own
//! checks (draining, hub capacity, the hub backend's link) and the checks
//! registered with it, each by whoever owns what it checks
//! ([`McpServer::with_readiness`]; a gateway's through
//! [`McpServer::with_gateway`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::build_error::BuildError;
use super::McpServer;
use crate::config::ConfigError;

/// A part of an application the server's readiness depends on.
pub trait ReadinessCheck: Send + Sync + 'static {
    /// Why this instance should not get traffic now; `None` when it should.
    fn not_ready(&self) -> Option<&'static str>;
}

impl<F: Fn() -> Option<&'static str> + Send + Sync + 'static> ReadinessCheck for F {
    fn not_ready(&self) -> Option<&'static str> {
        self()
    }
}

/// A gateway holds its server's traffic back until every required upstream
/// is up ([`McpServer::with_gateway`] registers it).
#[cfg(feature = "gateway")]
impl ReadinessCheck for crate::gateway::Gateway {
    fn not_ready(&self) -> Option<&'static str> {
        (!self.ready()).then_some("a required upstream is not up")
    }
}

impl McpServer {
    /// Whether this instance should get traffic, and if not, why: it is
    /// draining at shutdown, its hub is at capacity, (with
    /// `hub.require_backend`) its link to the other instances is down, or
    /// a registered check says so (a gateway's: a required upstream is not
    /// up).
    pub fn readiness(&self) -> Result<(), Vec<&'static str>> {
        let mut why: Vec<&'static str> = self.inner.checks.iter().filter_map(|c| c.not_ready()).collect();
        if self.inner.draining.load(Ordering::Acquire) {
            why.push("draining: the server is shutting down");
        }
        if matches!(self.inner.occupancy.check(), Err(crate::hub::HubError::Full { .. })) {
            why.push("the subscription hub is at capacity");
        }
        if self.inner.config.hub.require_backend
            && let Some(link) = &self.inner.backend_link
            && !link.connected.load(Ordering::Acquire)
        {
            why.push("the hub backend (Redis) is unreachable");
        }
        if why.is_empty() {
            Ok(())
        } else {
            Err(why)
        }
    }

    /// This server with `check` deciding its readiness too. Must be called
    /// before the server is cloned.
    pub fn with_readiness(mut self, check: Arc<dyn ReadinessCheck>) -> Result<Self, BuildError> {
        self.inner_mut("with_readiness")?.checks.push(check);
        Ok(self)
    }

    /// This server fronting `gateway`: its readiness waits for the required
    /// upstreams, the status page shows them, and a stdio server reads its
    /// input once their first start has settled. Must be called before the
    /// server is cloned (the builder does it for `[[upstreams]]`).
    #[cfg(feature = "gateway")]
    #[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
    pub fn with_gateway(mut self, gateway: crate::gateway::Gateway) -> Result<Self, BuildError> {
        let inner = self.inner_mut("with_gateway")?;
        inner.checks.push(Arc::new(gateway.clone()));
        inner.gateway = Some(gateway);
        Ok(self)
    }

    /// The gateway this server fronts, if any.
    #[cfg(feature = "gateway")]
    #[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
    pub fn gateway(&self) -> Option<&crate::gateway::Gateway> {
        self.inner.gateway.as_ref()
    }

    pub(super) fn inner_mut(&mut self, what: &str) -> Result<&mut super::Inner, BuildError> {
        Arc::get_mut(&mut self.inner)
            .ok_or_else(|| BuildError::Config(ConfigError(format!("{what}: the server is already shared"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::config::Config;
    use std::sync::atomic::AtomicBool;

    #[actix_rt::test]
    async fn a_registered_check_decides_readiness() {
        let server =
            McpServer::new(Arc::new(Catalog::new()), Config::default(), crate::telemetry::logging::discard()).unwrap();
        let up = Arc::new(AtomicBool::new(false));
        let u = up.clone();
        let server = server
            .with_readiness(Arc::new(move || (!u.load(Ordering::Acquire)).then_some("the cache is warming")))
            .unwrap();
        assert_eq!(server.readiness(), Err(vec!["the cache is warming"]));
        up.store(true, Ordering::Release);
        assert_eq!(server.readiness(), Ok(()));
        // Once shared, the server's parts are fixed.
        let _shared = server.clone();
        assert!(server.with_readiness(Arc::new(|| None)).is_err());
    }
}
