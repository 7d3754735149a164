//! [`SubscriptionHub`]: owns the pure [`SubscriptionTable`] with a handle
//! of each listener, and fans events out to them through the relay of each
//! thread that runs listeners.
//!
//! # Fan-out policy
//! Routing never blocks and never grows memory without bound:
//! - an event goes to each thread that runs listeners wanting it as one
//!   `try_send` into that thread's [`relay`] (bounded by
//!   `hub.relay_mailbox`), which hands it to those listeners; each pushes it
//!   into its own bounded sink;
//! - a listener whose sink is full has fallen behind its buffer: it closes
//!   (HTTP: the stream ends; stdio: `notifications/cancelled` for the listen
//!   id with a reason) and is counted in [`HubStats::lagged`]; the other
//!   listeners are not slowed by it;
//! - if a relay's mailbox is full, its thread is not keeping up: the
//!   listeners the event was for are told to close (a [`Close`] queued past
//!   their mailbox capacity), removed and counted as lagged;
//! - a relay whose mailbox is closed (its thread stopped) has its listeners
//!   pruned.
//!
//! Events enter through [`Publish`] (catalog changes, `notify_resource_updated`)
//! and pass through a [`HubBackend`]: the in-process backend hands them
//! straight back for local delivery; a backend for several instances can carry
//! them between processes and deliver remote events with [`RemoteEvent`].

mod backend;
pub mod bridge;
#[cfg(feature = "redis")]
pub(crate) mod bus;
#[doc(hidden)]
pub mod listener;
mod messages;
mod occupancy;
#[doc(hidden)]
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
#[cfg(feature = "redis")]
pub(crate) mod redis_history;
#[cfg(feature = "redis")]
pub(crate) mod redis_link;
#[cfg(feature = "redis")]
pub(crate) mod redis_subscription;
#[doc(hidden)]
pub mod relay;

use std::sync::Arc;

use actix::prelude::*;
use mcp_protocol::subscription::{Event, EventTemplate, ListenerId, SubscriptionTable};
use mcp_protocol::trace::TraceContext;
use slog::{debug, info, warn, Logger};

pub use backend::{BackendStats, HubBackend, MemoryBackend};
pub use messages::{
    HubInbox, HubStats, ListenerHandle, Publish, RemoteEvent, Resync, Shutdown, Stats, Subscribe, Unsubscribe,
};
pub use occupancy::{HubError, Occupancy};

use crate::channels::control::{Close, CloseReason};
use crate::hub::relay::{Fanout, KeepAlive, RelayHandle};

/// Told `(uri, wanted)` as URIs gain their first subscriber or lose their last.
type InterestFn = Box<dyn Fn(&str, bool) + Send>;

/// The hub actor.
pub struct SubscriptionHub {
    table: SubscriptionTable<ListenerHandle>,
    backend: Box<dyn HubBackend + Send>,
    mailbox: usize,
    stats: HubStats,
    /// The cap, whether the hub is stopping, and the count it publishes.
    occupancy: Arc<Occupancy>,
    /// Most listeners since memory was last returned to the system.
    peak: usize,
    trim_every: std::time::Duration,
    keep_alive_every: std::time::Duration,
    /// Told when a URI gains its first subscriber or loses its last.
    interest: Option<InterestFn>,
    log: Logger,
}

impl SubscriptionHub {
    /// A hub with a backend, a cap on listeners and a mailbox capacity.
    pub fn new(backend: Box<dyn HubBackend + Send>, max_listeners: usize, mailbox: usize, log: Logger) -> Self {
        SubscriptionHub {
            table: SubscriptionTable::new(),
            backend,
            mailbox,
            stats: HubStats::default(),
            occupancy: Occupancy::new(max_listeners),
            peak: 0,
            trim_every: std::time::Duration::ZERO,
            keep_alive_every: std::time::Duration::ZERO,
            interest: None,
            log,
        }
    }

    /// Tell `interest` `(uri, true)` when some listener starts wanting
    /// `resources/updated` for `uri`, and `(uri, false)` when the last one
    /// stops (a gateway subscribes upstream only meanwhile).
    #[must_use]
    pub fn with_interest(mut self, interest: impl Fn(&str, bool) + Send + 'static) -> Self {
        self.interest = Some(Box::new(interest));
        self
    }

    /// After many listeners closed, give freed memory back to the system
    /// every `every` (zero: never). glibc keeps freed heap memory otherwise,
    /// so a burst of 50,000 streams would leave the process at its peak size.
    #[must_use]
    pub fn with_memory_trim(mut self, every: std::time::Duration) -> Self {
        self.trim_every = every;
        self
    }

    /// Tell every listener to write a keep-alive every `every` (zero:
    /// never). One timer here replaces one per open stream.
    #[must_use]
    pub fn with_keep_alive(mut self, every: std::time::Duration) -> Self {
        self.keep_alive_every = every;
        self
    }

    /// This hub's occupancy, for transports (take it before the hub starts).
    pub fn occupancy(&self) -> Arc<Occupancy> {
        self.occupancy.clone()
    }

    fn occupied(&self) {
        self.occupancy.set_listeners(self.table.len());
    }

    fn keep_alive(&mut self) {
        for (relay, _) in self.by_relay(self.table.listeners()) {
            // A full mailbox: the relay has events to write anyway.
            let _ = relay.addr().try_send(KeepAlive);
        }
    }

    /// `ids` grouped by the relay of their thread (a handful of groups: one
    /// per thread that runs listeners), each group in id order: the order
    /// the listeners were opened, and so about the order their state lies
    /// in memory and their streams on their connections. Delivered in the
    /// routing table's hash order instead, each delivery touched memory at
    /// a random place: at 100,000 streams that tripled the CPU per delivery.
    fn by_relay(&self, ids: impl Iterator<Item = ListenerId>) -> Vec<(RelayHandle, Vec<ListenerId>)> {
        let mut groups: Vec<(RelayHandle, Vec<ListenerId>)> = Vec::new();
        for id in ids {
            let Some(handle) = self.table.payload(id) else { continue };
            match groups.iter_mut().find(|(r, _)| r.id() == handle.relay.id()) {
                Some((_, ids)) => ids.push(id),
                None => groups.push((handle.relay.clone(), vec![id])),
            }
        }
        for (_, ids) in &mut groups {
            ids.sort_unstable();
        }
        groups
    }

    fn trim_if_shrunk(&mut self) {
        let now = self.table.len();
        if now < self.peak {
            if now <= self.peak / 2 {
                // Most listeners left: the routing maps give back their room.
                self.table.shrink_to_fit();
            }
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            // SAFETY: malloc_trim only releases free heap pages; it takes no
            // pointers and is safe to call at any time from any thread.
            unsafe {
                libc::malloc_trim(0);
            }
            debug!(self.log, "returned freed memory to the system"; "listeners" => now, "peak" => self.peak);
        }
        self.peak = now;
    }

    fn remove(&mut self, id: ListenerId) -> bool {
        let removed = self.table.take(id);
        if let Some((filter, _)) = &removed {
            self.lost_interest(&filter.resource_subscriptions);
        }
        self.occupied();
        removed.is_some()
    }

    /// Of `uris`, those no listener wants any more are told.
    fn lost_interest(&self, uris: &[String]) {
        if let Some(interest) = &self.interest {
            for uri in uris.iter().filter(|u| !self.table.wants_uri(u)) {
                interest(uri, false);
            }
        }
    }

    fn route(&mut self, event: Event, trace: Option<&TraceContext>) {
        self.stats.events += 1;
        let batches = self.by_relay(self.table.route(&event));
        if batches.is_empty() {
            return;
        }
        let encoded = Arc::new(EventTemplate::traced(&event, trace));
        let event = Arc::new(event);
        let at = std::time::Instant::now();
        let mut gone = Vec::new();
        for (relay, targets) in batches {
            let n = targets.len() as u64;
            match relay.addr().try_send(Fanout { event: event.clone(), encoded: encoded.clone(), targets, at }) {
                Ok(()) => self.stats.delivered += n,
                Err(SendError::Full(Fanout { targets, .. })) => {
                    warn!(self.log, "a relay's mailbox is full: closing the listeners it could not take an event for";
                        "relay" => relay.id(), "listeners" => n);
                    for id in &targets {
                        if let Some(handle) = self.table.payload(*id) {
                            handle.close.do_send(Close { reason: CloseReason::LaggedAtHub });
                        }
                    }
                    self.stats.lagged += n;
                    crate::telemetry::relay_mailbox_full(n);
                    gone.extend(targets);
                }
                Err(SendError::Closed(Fanout { targets, .. })) => {
                    self.stats.pruned += n;
                    gone.extend(targets);
                }
            }
        }
        for id in gone {
            self.remove(id);
            debug!(self.log, "listener removed by fan-out"; "listener" => %id, "listeners" => self.table.len());
        }
    }
}

impl Actor for SubscriptionHub {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox);
        let inbox = HubInbox { events: ctx.address().recipient(), resync: ctx.address().recipient() };
        self.backend.start(inbox, &self.log);
        if !self.trim_every.is_zero() {
            ctx.run_interval(self.trim_every, |act, _| act.trim_if_shrunk());
        }
        if !self.keep_alive_every.is_zero() {
            ctx.run_interval(self.keep_alive_every, |act, _| act.keep_alive());
        }
        debug!(self.log, "subscription hub started");
    }
}

impl Handler<Subscribe> for SubscriptionHub {
    type Result = Result<(), HubError>;

    fn handle(&mut self, msg: Subscribe, _ctx: &mut Self::Context) -> Self::Result {
        if self.occupancy.stopping() {
            return Err(HubError::ShuttingDown);
        }
        let max = self.occupancy.max();
        if self.table.filter(msg.id).is_none() && self.table.len() >= max {
            warn!(self.log, "subscription refused: limit reached"; "max_listeners" => max);
            return Err(HubError::Full { max });
        }
        if let Some(interest) = &self.interest {
            for uri in msg.filter.resource_subscriptions.iter().filter(|u| !self.table.wants_uri(u)) {
                interest(uri, true);
            }
        }
        // A listener that changes its filter (a legacy session's
        // resources/subscribe) may leave URIs nobody else wants.
        let before = self.table.take(msg.id).map(|(filter, _)| filter.resource_subscriptions);
        let _ = self.table.insert_with(msg.id, &msg.filter, msg.handle);
        self.lost_interest(&before.unwrap_or_default());
        self.occupied();
        self.peak = self.peak.max(self.table.len());
        self.stats.subscribed += 1;
        debug!(self.log, "listener added"; "listener" => %msg.id, "listeners" => self.table.len());
        Ok(())
    }
}

impl Handler<Unsubscribe> for SubscriptionHub {
    type Result = ();

    fn handle(&mut self, msg: Unsubscribe, _ctx: &mut Self::Context) {
        // Counted even if a delivery already pruned the listener: a lag the
        // listener detected is reported only here.
        if msg.lagged {
            self.stats.lagged += 1;
        }
        if self.remove(msg.id) {
            debug!(self.log, "listener removed"; "listener" => %msg.id, "listeners" => self.table.len(), "lagged" => msg.lagged);
        }
    }
}

impl Handler<Publish> for SubscriptionHub {
    type Result = ();

    fn handle(&mut self, msg: Publish, _ctx: &mut Self::Context) {
        if msg.here_only {
            return self.route(msg.event, msg.trace.as_ref());
        }
        for event in self.backend.publish(msg.event, msg.key.as_deref(), msg.trace.as_ref()) {
            self.route(event, msg.trace.as_ref());
        }
    }
}

impl Handler<RemoteEvent> for SubscriptionHub {
    type Result = ();

    fn handle(&mut self, msg: RemoteEvent, _ctx: &mut Self::Context) {
        if self.backend.accept_remote(&msg.event, msg.key.as_deref()) {
            self.route(msg.event, msg.trace.as_ref());
        }
    }
}

impl Handler<Resync> for SubscriptionHub {
    type Result = ();

    fn handle(&mut self, _: Resync, _ctx: &mut Self::Context) {
        self.stats.resyncs += 1;
        info!(self.log, "resync: sending list_changed to every listener that opted in"; "listeners" => self.table.len());
        for event in [Event::ToolsListChanged, Event::PromptsListChanged, Event::ResourcesListChanged] {
            self.route(event, None);
        }
    }
}

impl Handler<Stats> for SubscriptionHub {
    type Result = MessageResult<Stats>;

    fn handle(&mut self, _: Stats, _ctx: &mut Self::Context) -> Self::Result {
        MessageResult(HubStats { listeners: self.table.len(), ..self.stats })
    }
}

impl Handler<Shutdown> for SubscriptionHub {
    type Result = usize;

    fn handle(&mut self, _: Shutdown, _ctx: &mut Self::Context) -> usize {
        self.occupancy.set_stopping();
        let n = self.table.len();
        for handle in self.table.payloads() {
            // Control message: queued even past the mailbox capacity, never dropped.
            handle.close.do_send(Close { reason: CloseReason::Graceful });
        }
        info!(self.log, "closing every subscription"; "listeners" => n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::listener::{ListenerActor, ListenerKind, ListenerSpec};
    use crate::transport::sse::queue;
    use futures::StreamExt;
    use mcp_protocol::subscription::SubscriptionFilter;
    use mcp_protocol::RequestId;

    #[actix_rt::test]
    async fn listeners_whose_thread_cannot_take_an_event_are_closed_as_lagged() {
        let log = crate::telemetry::logging::discard();
        let hub_log = log.clone();
        let hub = Arc::new(SubscriptionHub::start_in_arbiter(&Arbiter::new().handle(), move |_| {
            SubscriptionHub::new(Box::new(MemoryBackend), 10, 64, hub_log)
        }));
        let (tx, mut frames) = queue(64);
        let spec = ListenerSpec {
            kind: ListenerKind::Listen(RequestId::number(1)),
            filter: SubscriptionFilter { tools_list_changed: true, ..Default::default() },
            sink: Box::new(tx),
            relay_mailbox: 2,
            ready: None,
            expires_in: None,
            version: None,
        };
        ListenerActor::start_with(hub.clone(), spec, &log);
        assert!(std::str::from_utf8(&frames.next().await.unwrap()).unwrap().contains("subscriptions/acknowledged"));
        // This thread runs the listener and its relay: while it is blocked,
        // the hub's events fill the relay's mailbox of 2.
        for _ in 0..6 {
            hub.do_send(Publish::local(Event::ToolsListChanged));
        }
        // Asked from another thread, so that this one stays blocked.
        let stats_now = || {
            let hub = hub.clone();
            std::thread::spawn(move || actix_rt::System::new().block_on(hub.send(Stats)).unwrap()).join().unwrap()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while stats_now().events < 6 {
            assert!(std::time::Instant::now() < deadline, "the hub did not take 6 events in 10 s");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stats = hub.send(Stats).await.unwrap();
        assert_eq!((stats.lagged, stats.listeners), (1, 0), "{stats:?}");
        // Exactly the relay's mailbox of 2 was delivered; the third event
        // found it full and closed the listener as lagged.
        assert_eq!((stats.events, stats.delivered), (6, 2), "{stats:?}");
        let mut events = Vec::new();
        while let Some(f) = frames.next().await {
            events.push(String::from_utf8_lossy(&f).into_owned());
        }
        // The stream carries the 2 the relay had taken, then ends.
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(events.iter().all(|e| e.contains("notifications/tools/list_changed")), "{events:?}");
    }
}
