//! [`Fleet`]: the upstreams a gateway runs now, and how a reload changes
//! them — an upstream whose configuration and namespace are unchanged is
//! kept as it is (re-screened when the pins changed), one removed or
//! changed is retired (its items leave at once; its calls in flight finish
//! before its connection closes) and one added or changed is started.

use std::sync::{Arc, Mutex};

use actix::{Actor, Addr, Recipient};
use arc_swap::ArcSwap;

use super::claims::Claims;
use super::control::{Repin, Stop, Wanted};
use super::flow::Parked;
use super::homes::Homes;
use super::names::Names;
use super::pins::Pins;
use super::routes::{self, Route};
use super::status::UpstreamStatus;
use super::upstream::{self, Upstream};
use crate::catalog::Catalog;
use crate::config::{GatewayConfig, UpstreamConfig};

/// One running upstream.
pub(super) struct Running {
    pub(super) config: UpstreamConfig,
    names: Names,
    pub(super) addr: Addr<Upstream>,
    pub(super) status: Arc<Mutex<UpstreamStatus>>,
    route: Arc<Route>,
}

/// The running upstreams and what they share.
pub(super) struct Fleet {
    catalog: Arc<Catalog>,
    parked: Arc<Parked>,
    claims: Arc<Claims>,
    /// The threads stdio connections open on.
    pub(super) homes: Arc<Homes>,
    log: slog::Logger,
    gateway: GatewayConfig,
    pins: Option<Arc<Pins>>,
    pub(super) running: Vec<Running>,
    /// What the catalog's resolver of unlisted tools reads.
    routes: Arc<ArcSwap<Vec<Arc<Route>>>>,
    /// Who hears which URIs the listeners want.
    told: Arc<ArcSwap<Vec<Recipient<Wanted>>>>,
    /// The resolver and the interest hook are installed (once there was an upstream).
    installed: bool,
    /// Set when the server shuts down (every upstream reads it).
    pub(super) closing: Arc<std::sync::atomic::AtomicBool>,
}

/// What a reload did to the upstreams, by name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FleetChange {
    /// Started.
    pub added: Vec<String>,
    /// Retired.
    pub removed: Vec<String>,
    /// Retired and started again with their new configuration.
    pub restarted: Vec<String>,
}

impl Fleet {
    /// A fleet serving into `catalog`, with no upstream yet.
    pub(super) fn new(catalog: &Arc<Catalog>, gateway: &GatewayConfig, log: &slog::Logger) -> Fleet {
        Fleet {
            catalog: catalog.clone(),
            parked: Arc::new(Parked::new(std::time::Duration::from_millis(gateway.input_wait_ms))),
            claims: Arc::new(Claims::default()),
            homes: Arc::default(),
            log: log.clone(),
            gateway: gateway.clone(),
            pins: None,
            running: Vec::new(),
            routes: Arc::new(ArcSwap::from_pointee(Vec::new())),
            told: Arc::new(ArcSwap::from_pointee(Vec::new())),
            installed: false,
            closing: Arc::default(),
        }
    }

    /// Starts `up` (one of `all`); `refused` hears why if its first listing
    /// is refused.
    fn start(
        &mut self,
        up: &UpstreamConfig,
        all: &[UpstreamConfig],
        refused: tokio::sync::watch::Sender<Option<String>>,
    ) {
        let names = Names::new(up, all, &self.gateway);
        let status = Arc::new(Mutex::new(UpstreamStatus::new(&up.name, up.required)));
        let route = Route::new(names.clone(), status.clone());
        let shared = upstream::Shared {
            catalog: self.catalog.clone(),
            parked: self.parked.clone(),
            log: self.log.clone(),
            route: route.clone(),
            names: names.clone(),
            claims: self.claims.clone(),
            refused,
            pins: self.pins.clone(),
            homes: self.homes.clone(),
            closing: self.closing.clone(),
        };
        let addr = Upstream::new(up.clone(), self.gateway.clone(), shared, status.clone()).start();
        self.running.push(Running { config: up.clone(), names, addr, status, route });
    }

    /// Starts every upstream of `all` at start-up: `refused` hears why one is
    /// refused (a start-up error).
    pub(super) fn start_all(
        &mut self,
        all: &[UpstreamConfig],
        pins: Option<Arc<Pins>>,
        refused: &tokio::sync::watch::Sender<Option<String>>,
    ) {
        self.pins = pins;
        for up in all {
            self.start(up, all, refused.clone());
        }
        self.publish();
    }

    /// Runs `all` from now on, with `pins`.
    pub(super) fn reload(&mut self, all: &[UpstreamConfig], pins: Option<Arc<Pins>>) -> FleetChange {
        // The same pins are kept as they are: one object writes the file.
        let repin = !same_pins(&self.pins, &pins);
        if repin {
            self.pins = pins;
        }
        let mut change = FleetChange::default();
        let mut kept = Vec::new();
        for old in std::mem::take(&mut self.running) {
            let new = all.iter().find(|u| u.name == old.config.name);
            let unchanged =
                new.is_some_and(|u| *u == old.config && old.names.same_namespace(&Names::new(u, all, &self.gateway)));
            if unchanged {
                if repin {
                    old.addr.do_send(Repin(self.pins.clone()));
                }
                kept.push(old);
                continue;
            }
            old.route.set(None);
            old.addr.do_send(Stop);
            match new {
                Some(_) => change.restarted.push(old.config.name.clone()),
                None => change.removed.push(old.config.name.clone()),
            }
        }
        self.running = kept;
        for up in all {
            if self.running.iter().any(|r| r.config.name == up.name) {
                continue;
            }
            if !change.restarted.contains(&up.name) {
                change.added.push(up.name.clone());
            }
            // Refused at its first listing: shown down with why, not a
            // start-up error of a server already serving.
            self.start(up, all, tokio::sync::watch::channel(None).0);
        }
        // Configuration order, as the status page shows them.
        self.running.sort_by_key(|r| all.iter().position(|u| u.name == r.config.name));
        self.publish();
        change
    }

    /// The catalog finds the running upstreams' unlisted tools, and they
    /// hear which URIs the listeners want.
    fn publish(&mut self) {
        self.routes.store(Arc::new(self.running.iter().map(|r| r.route.clone()).collect()));
        self.told.store(Arc::new(self.running.iter().map(|r| r.addr.clone().recipient()).collect()));
        if self.installed || self.running.is_empty() {
            return;
        }
        self.installed = true;
        routes::install(&self.catalog, self.routes.clone());
        let told = self.told.clone();
        self.catalog.on_interest(Arc::new(move |uri, wanted| {
            for upstream in told.load().iter() {
                upstream.do_send(Wanted { uri: uri.to_owned(), wanted });
            }
        }));
    }
}

/// Whether two pin sets are the same (both none, or one file's same content).
fn same_pins(a: &Option<Arc<Pins>>, b: &Option<Arc<Pins>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_as(b),
        _ => false,
    }
}
