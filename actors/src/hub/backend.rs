//! [`HubBackend`]: the seam between the hub and the transport of events
//! between instances; [`MemoryBackend`] for one process.

use mcp_protocol::subscription::Event;
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

    /// Publishes a locally observed event. Returns the events to deliver
    /// locally now.
    fn publish(&mut self, event: Event, key: Option<&str>) -> Vec<Event>;

    /// For a backend that links instances: a flag that is true while the
    /// link is up (readiness reads it). `None`: nothing to be linked to.
    fn link(&self) -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
        None
    }

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
