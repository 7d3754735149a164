//! [`SessionShared`]: what the handles of one legacy session read and write
//! without a message to its actor — the state a request is decided against,
//! when the client last spoke, and the requests running in the session.
//! The actor owns everything else (the notification stream, the questions
//! asked of the client) and applies the requests that change the state.
//! A request of the session's client so costs no round trip to the
//! session's arbiter, whatever thread serves it.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use actix::Recipient;
use mcp_protocol::legacy::SessionState;
use mcp_protocol::RequestId;

use crate::msg::Cancel;

/// The shared part of one legacy session.
#[derive(Debug)]
pub struct SessionShared {
    state: RwLock<SessionState>,
    last_seen: Mutex<Instant>,
    /// Requests running in this session, for `notifications/cancelled`.
    in_flight: Mutex<HashMap<RequestId, Recipient<Cancel>>>,
}

impl SessionShared {
    /// The shared part of a session with `state`, seen now.
    pub fn new(state: SessionState) -> Self {
        SessionShared { state: RwLock::new(state), last_seen: Mutex::new(Instant::now()), in_flight: Mutex::default() }
    }

    /// The state, to read.
    pub fn state(&self) -> RwLockReadGuard<'_, SessionState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state, to change (the session's actor only).
    pub(crate) fn state_mut(&self) -> RwLockWriteGuard<'_, SessionState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client spoke.
    pub fn touch(&self) {
        *self.last_seen.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// When the client last spoke.
    pub fn last_seen(&self) -> Instant {
        *self.last_seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a request started in the session.
    pub fn track(&self, id: RequestId, cancel: Recipient<Cancel>) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        in_flight.retain(|_, r| r.connected());
        in_flight.insert(id, cancel);
    }

    /// Takes the request `id` out, to cancel it; `None` if it is not running.
    pub fn untrack(&self, id: &RequestId) -> Option<Recipient<Cancel>> {
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(id)
    }

    /// Takes every running request out (the session ended).
    pub(crate) fn drain(&self) -> Vec<Recipient<Cancel>> {
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, r)| r).collect()
    }
}
