//! [`HubBackend`]: the seam between the hub and the transport of events
//! between instances; [`MemoryBackend`] for one process.

use mcp_protocol::subscription::Event;
use mcp_protocol::trace::TraceContext;
use slog::Logger;

use super::messages::HubInbox;

/// The seam between the hub and the transport of events between instances.
pub trait HubBackend: Unpin + 'static {
    /// Called once when the hub starts (on its arbiter), with the hub's
    /// inbox: remote events go to it as [`RemoteEvent`](super::RemoteEvent), and a [`Resync`](super::Resync)
    /// after an outage.
    fn start(&mut self, inbox: HubInbox, log: &Logger) {
        let _ = (inbox, log);
    }

    /// Publishes a locally observed event, with the trace context of the
    /// request that caused it (to travel with it). Returns the events to
    /// deliver locally now.
    fn publish(&mut self, event: Event, key: Option<&str>, trace: Option<&TraceContext>) -> Vec<Event>;

    /// For a backend that links instances: its counters and whether the
    /// link is up (readiness and metrics read them). `None`: nothing to be
    /// linked to.
    fn stats(&self) -> Option<std::sync::Arc<BackendStats>> {
        None
    }

    /// Whether an event from another instance should be delivered locally
    /// (a backend drops a second copy of the same keyed observation).
    fn accept_remote(&mut self, event: &Event, key: Option<&str>) -> bool {
        let _ = (event, key);
        true
    }
}

/// Counters of a backend that links instances (Redis).
#[derive(Debug, Default)]
pub struct BackendStats {
    /// Events published to the other instances.
    pub published: std::sync::atomic::AtomicU64,
    /// Events that could not be published (the link down, the queue full).
    pub publish_failures: std::sync::atomic::AtomicU64,
    /// Events received from other instances.
    pub received: std::sync::atomic::AtomicU64,
    /// Times the link was lost or could not be established.
    pub outages: std::sync::atomic::AtomicU64,
    /// Resyncs requested after reconnecting.
    pub resyncs: std::sync::atomic::AtomicU64,
    /// Second copies of one observation (several instances watching one
    /// source) delivered once.
    pub deduplicated: std::sync::atomic::AtomicU64,
    /// Whether the link is up now.
    pub connected: std::sync::atomic::AtomicBool,
}

/// The default backend: one process, events delivered locally.
#[derive(Debug, Default)]
pub struct MemoryBackend;

impl HubBackend for MemoryBackend {
    fn publish(&mut self, event: Event, _key: Option<&str>, _trace: Option<&TraceContext>) -> Vec<Event> {
        vec![event]
    }
}
