//! [`SubscriptionHub`]: owns the pure [`SubscriptionTable`] with a handle
//! of each listener, and fans events out to them through the relay of each
//! thread that runs listeners.
//!
//! # Fan-out policy
//! Routing never blocks and never grows memory without bound:
//! - an event goes to each thread that runs listeners wanting it as one
//!   `try_send` into that thread's [`relay`](crate::relay) (bounded by
//!   `hub.relay_mailbox`), which hands it to those listeners; each pushes it
//!   into its own bounded outlet;
//! - a listener whose outlet is full has fallen behind its buffer: it closes
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

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use actix::prelude::*;
use mcp_protocol::subscription::{Event, EventTemplate, ListenerId, SubscriptionFilter, SubscriptionTable};
use slog::{debug, info, warn, Logger};

use crate::relay::{Fanout, KeepAlive, RelayHandle};

/// Why a listener is told to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// Server shutdown: send the completion result, then close.
    Graceful,
    /// The listener fell behind its buffer (its outlet was full).
    Lagged,
    /// The hub could not queue an event for it: its thread's relay had
    /// `hub.relay_mailbox` events waiting (and the hub counted it).
    LaggedAtHub,
    /// The client cancelled, or its transport ended.
    ClientGone,
}

/// Tells a listener to close.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Close {
    /// Why.
    pub reason: CloseReason,
}

/// How the hub reaches one listener without knowing its type: events go
/// through the relay of the listener's thread, which delivers them to it
/// directly; closing goes to the listener's own mailbox (`do_send`, queued
/// past any capacity, never dropped).
#[derive(Clone)]
pub struct ListenerHandle {
    /// The listener's mailbox, for closing it.
    pub close: Recipient<Close>,
    /// The relay of the thread it runs on.
    pub relay: RelayHandle,
}

/// Why a subscription was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubError {
    /// `hub.max_listeners` reached.
    Full {
        /// The configured cap.
        max: usize,
    },
    /// The hub is shutting down.
    ShuttingDown,
}

impl std::fmt::Display for HubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HubError::Full { max } => write!(f, "too many open subscriptions (limit {max})"),
            HubError::ShuttingDown => f.write_str("the server is shutting down"),
        }
    }
}

/// How full the hub is, readable from any thread without a round trip: a
/// transport refuses a subscription the hub would refuse before it starts a
/// listener (the hub still decides; a refusal after this check reaches the
/// client as a JSON-RPC error on the stream). The hub owns it and is its only
/// writer ([`SubscriptionHub::occupancy`]).
#[derive(Debug)]
pub struct Occupancy {
    listeners: AtomicUsize,
    max: usize,
    stopping: AtomicBool,
}

impl Occupancy {
    fn new(max: usize) -> Arc<Self> {
        Arc::new(Occupancy { listeners: AtomicUsize::new(0), max, stopping: AtomicBool::new(false) })
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Whether a new subscription would be accepted now.
    pub fn check(&self) -> Result<(), HubError> {
        if self.stopping() {
            return Err(HubError::ShuttingDown);
        }
        if self.listeners.load(Ordering::Relaxed) >= self.max {
            return Err(HubError::Full { max: self.max });
        }
        Ok(())
    }
}

/// Registers a listener.
#[derive(Message)]
#[rtype(result = "Result<(), HubError>")]
pub struct Subscribe {
    /// The listener.
    pub id: ListenerId,
    /// What it honours.
    pub filter: SubscriptionFilter,
    /// How to reach it.
    pub handle: ListenerHandle,
}

/// Removes a listener (it stopped).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Unsubscribe {
    /// The listener.
    pub id: ListenerId,
    /// It closed itself because its client fell behind (its outlet was full).
    pub lagged: bool,
}

/// Publishes a locally observed event (to every instance, through the backend).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Publish {
    /// The event.
    pub event: Event,
    /// The observation key of a change seen in a source shared by instances
    /// (identical observations are delivered once); `None` for changes made
    /// by this instance.
    pub key: Option<String>,
}

impl Publish {
    /// A change made by this instance.
    pub fn local(event: Event) -> Self {
        Publish { event, key: None }
    }
}

/// An event from another instance, for local delivery only.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct RemoteEvent {
    /// The event.
    pub event: Event,
    /// Its observation key, if any.
    pub key: Option<String>,
}

/// Events may have been missed (a backend lost its connection): every local
/// listener gets the list_changed notifications it opted into.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct Resync;

/// Asks for the hub's counters.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "HubStats")]
pub struct Stats;

/// Tells every listener to close gracefully; answers how many were told.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "usize")]
pub struct Shutdown;

/// The hub's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HubStats {
    /// Listeners registered now.
    pub listeners: usize,
    /// Listeners registered since start.
    pub subscribed: u64,
    /// Events published.
    pub events: u64,
    /// Deliveries handed to relays (one per listener an event was for).
    pub delivered: u64,
    /// Listeners closed for falling behind (full outlet, or full relay mailbox).
    pub lagged: u64,
    /// Listeners pruned because their relay's thread had stopped.
    pub pruned: u64,
    /// Conservative resyncs after a backend outage.
    pub resyncs: u64,
}

/// The seam between the hub and the transport of events between instances.
pub trait HubBackend: Unpin + 'static {
    /// Called once when the hub starts (on its arbiter), with the hub's
    /// address: remote events go to it as [`RemoteEvent`], and a [`Resync`]
    /// after an outage.
    fn start(&mut self, hub: Addr<SubscriptionHub>, log: &Logger) {
        let _ = (hub, log);
    }

    /// Publishes a locally observed event. Returns the events to deliver
    /// locally now.
    fn publish(&mut self, event: Event, key: Option<&str>) -> Vec<Event>;

    /// Whether an event from another instance should be delivered locally
    /// (a backend drops a second copy of the same keyed observation).
    fn accept_remote(&mut self, event: &Event, key: Option<&str>) -> bool {
        let _ = (event, key);
        true
    }
}

/// The default backend: one process, events delivered locally.
#[derive(Debug, Default)]
pub struct MemoryBackend;

impl HubBackend for MemoryBackend {
    fn publish(&mut self, event: Event, _key: Option<&str>) -> Vec<Event> {
        vec![event]
    }
}

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
            log,
        }
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
        self.occupancy.listeners.store(self.table.len(), Ordering::Relaxed);
    }

    fn keep_alive(&mut self) {
        for (relay, _) in self.by_relay(self.table.listeners()) {
            // A full mailbox: the relay has events to write anyway.
            let _ = relay.addr().try_send(KeepAlive);
        }
    }

    /// `ids` grouped by the relay of their thread (a handful of groups: one
    /// per thread that runs listeners).
    fn by_relay(&self, ids: impl Iterator<Item = ListenerId>) -> Vec<(RelayHandle, Vec<ListenerId>)> {
        let mut groups: Vec<(RelayHandle, Vec<ListenerId>)> = Vec::new();
        for id in ids {
            let Some(handle) = self.table.payload(id) else { continue };
            match groups.iter_mut().find(|(r, _)| r.id() == handle.relay.id()) {
                Some((_, ids)) => ids.push(id),
                None => groups.push((handle.relay.clone(), vec![id])),
            }
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
        let removed = self.table.remove(id).is_some();
        self.occupied();
        removed
    }

    fn route(&mut self, event: Event) {
        self.stats.events += 1;
        let batches = self.by_relay(self.table.route(&event));
        if batches.is_empty() {
            return;
        }
        let encoded = Arc::new(EventTemplate::new(&event));
        let event = Arc::new(event);
        let mut gone = Vec::new();
        for (relay, targets) in batches {
            let n = targets.len() as u64;
            match relay.addr().try_send(Fanout { event: event.clone(), encoded: encoded.clone(), targets }) {
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
        self.backend.start(ctx.address(), &self.log);
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
        let max = self.occupancy.max;
        if self.table.filter(msg.id).is_none() && self.table.len() >= max {
            warn!(self.log, "subscription refused: limit reached"; "max_listeners" => max);
            return Err(HubError::Full { max });
        }
        let _ = self.table.insert_with(msg.id, &msg.filter, msg.handle);
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
        for event in self.backend.publish(msg.event, msg.key.as_deref()) {
            self.route(event);
        }
    }
}

impl Handler<RemoteEvent> for SubscriptionHub {
    type Result = ();

    fn handle(&mut self, msg: RemoteEvent, _ctx: &mut Self::Context) {
        if self.backend.accept_remote(&msg.event, msg.key.as_deref()) {
            self.route(msg.event);
        }
    }
}

impl Handler<Resync> for SubscriptionHub {
    type Result = ();

    fn handle(&mut self, _: Resync, _ctx: &mut Self::Context) {
        self.stats.resyncs += 1;
        info!(self.log, "resync: sending list_changed to every listener that opted in"; "listeners" => self.table.len());
        for event in [Event::ToolsListChanged, Event::PromptsListChanged, Event::ResourcesListChanged] {
            self.route(event);
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
        self.occupancy.stopping.store(true, Ordering::Relaxed);
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
    use crate::listener::{ListenerActor, ListenerSpec};
    use crate::transport::sse_outlet::sse_outlet;
    use futures::StreamExt;
    use mcp_protocol::RequestId;

    #[actix_rt::test]
    async fn listeners_whose_thread_cannot_take_an_event_are_closed_as_lagged() {
        let log = crate::logging::discard();
        let hub_log = log.clone();
        let hub = Arc::new(SubscriptionHub::start_in_arbiter(&Arbiter::new().handle(), move |_| {
            SubscriptionHub::new(Box::new(MemoryBackend), 10, 64, hub_log)
        }));
        let (tx, mut frames) = sse_outlet(64);
        let spec = ListenerSpec {
            subscription: RequestId::number(1),
            filter: SubscriptionFilter { tools_list_changed: true, ..Default::default() },
            outlet: Box::new(tx),
            relay_mailbox: 2,
            ready: None,
            legacy: false,
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
        while stats_now().events < 6 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stats = hub.send(Stats).await.unwrap();
        assert_eq!((stats.lagged, stats.listeners), (1, 0), "{stats:?}");
        assert!(stats.delivered <= 2, "{stats:?}");
        // The stream ends after at most what the relay had taken.
        let mut events = 0;
        while frames.next().await.is_some() {
            events += 1;
        }
        assert!(events <= 2, "{events}");
    }
}
