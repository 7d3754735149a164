//! The hub's messages and counters.

use actix::prelude::*;
use mcp_protocol::subscription::{Event, ListenerId, SubscriptionFilter};
use mcp_protocol::trace::TraceContext;

use super::occupancy::HubError;
use crate::channels::control::Close;
use crate::hub::relay::RelayHandle;

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
    /// It closed itself because its client fell behind (its sink was full).
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
    /// The trace context of the request that caused it, if traced.
    pub trace: Option<TraceContext>,
    /// For this instance's listeners only (a change in a source each
    /// instance holds its own copy of); never handed to the backend.
    pub here_only: bool,
}

impl Publish {
    /// A change made by this instance.
    pub fn local(event: Event) -> Self {
        Publish { event, key: None, trace: None, here_only: false }
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
    /// The trace context of the request that caused it, if traced.
    pub trace: Option<TraceContext>,
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
    /// Listeners closed for falling behind (full sink, or full relay mailbox).
    pub lagged: u64,
    /// Listeners pruned because their relay's thread had stopped.
    pub pruned: u64,
    /// Conservative resyncs after a backend outage.
    pub resyncs: u64,
}

/// Where a [`HubBackend`](super::HubBackend) hands what it receives from
/// other instances: remote events, and a resync after an outage.
#[derive(Clone)]
pub struct HubInbox {
    /// Events from other instances.
    pub events: Recipient<RemoteEvent>,
    /// Events may have been missed.
    pub resync: Recipient<Resync>,
}
