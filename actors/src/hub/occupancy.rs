//! [`Occupancy`]: how full the hub is, readable from any thread; and
//! [`HubError`], why a subscription was refused.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Why a subscription was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
/// writer ([`SubscriptionHub::occupancy`](super::SubscriptionHub::occupancy)).
#[derive(Debug)]
pub struct Occupancy {
    listeners: AtomicUsize,
    max: usize,
    stopping: AtomicBool,
}

impl Occupancy {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Occupancy { listeners: AtomicUsize::new(0), max, stopping: AtomicBool::new(false) })
    }

    pub(super) fn stopping(&self) -> bool {
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

impl Occupancy {
    /// The cap on listeners.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Publishes the number of listeners (the hub is the only writer).
    pub(super) fn set_listeners(&self, n: usize) {
        self.listeners.store(n, Ordering::Relaxed);
    }

    /// Marks the hub as stopping: new subscriptions are refused.
    pub(super) fn set_stopping(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }
}
