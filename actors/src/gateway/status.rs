//! Where an upstream stands, as the status page and readiness see it.

use std::time::Duration;

/// Where an upstream stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamState {
    /// Being started or connected to.
    Starting,
    /// Serving, in this protocol version.
    Up {
        /// The version spoken with it.
        version: String,
    },
    /// Lost or never reached; started again after a backoff.
    Down {
        /// Why, as a sentence.
        reason: String,
    },
}

/// What the gateway shows of one upstream (its `/status` row).
#[derive(Debug, Clone)]
pub struct UpstreamStatus {
    /// The configured name.
    pub name: String,
    /// Whether readiness waits for it.
    pub required: bool,
    /// Where it stands.
    pub state: UpstreamState,
    /// How many times it was started again.
    pub restarts: u64,
    /// How many of its items are served.
    pub items: usize,
    /// How long its last connection took to start and list.
    pub connect_time: Option<Duration>,
    /// How many of its resources it is subscribed to (one per URI a
    /// listener of this instance wants).
    pub subscriptions: usize,
    /// Requests forwarded to it that finished (since start).
    pub calls: u64,
    /// Of those, how many failed (an error, a tool error, cancelled).
    pub errors: u64,
    /// Their time together (mean latency: `call_time / calls`).
    pub call_time: Duration,
}
