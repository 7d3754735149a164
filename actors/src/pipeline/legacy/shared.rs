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

use crate::channels::control::Cancel;

/// The shared part of one legacy session.
#[derive(Debug)]
pub struct SessionShared {
    state: RwLock<SessionState>,
    last_seen: Mutex<Instant>,
    /// Requests running in this session, for `notifications/cancelled`.
    in_flight: Mutex<InFlight>,
}

/// The running requests of a session. Each removes itself when it ends;
/// entries of requests that ended without doing so (their arbiter stopped)
/// are swept when the map has doubled since the last sweep.
#[derive(Debug, Default)]
struct InFlight {
    running: HashMap<RequestId, Recipient<Cancel>>,
    sweep_at: usize,
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

    fn in_flight(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a request started in the session.
    pub fn track(&self, id: RequestId, cancel: Recipient<Cancel>) {
        let mut in_flight = self.in_flight();
        if in_flight.running.len() >= in_flight.sweep_at {
            in_flight.running.retain(|_, r| r.connected());
            in_flight.sweep_at = (2 * in_flight.running.len()).max(64);
        }
        in_flight.running.insert(id, cancel);
    }

    /// The request `id` ended: its entry goes, unless the id is already
    /// another request's (the client may reuse an id once answered).
    pub fn finished(&self, id: &RequestId, cancel: &Recipient<Cancel>) {
        let mut in_flight = self.in_flight();
        if in_flight.running.get(id) == Some(cancel) {
            in_flight.running.remove(id);
        }
    }

    /// Takes the request `id` out, to cancel it; `None` if it is not running.
    pub fn untrack(&self, id: &RequestId) -> Option<Recipient<Cancel>> {
        self.in_flight().running.remove(id)
    }

    /// How many requests are registered as running.
    #[cfg(test)]
    fn running(&self) -> usize {
        self.in_flight().running.len()
    }

    /// Takes every running request out (the session ended).
    pub(crate) fn drain(&self) -> Vec<Recipient<Cancel>> {
        self.in_flight().running.drain().map(|(_, r)| r).collect()
    }
}

#[cfg(test)]
mod tests {
    use actix::{Actor, Context, Handler};

    use super::*;

    struct Request;

    impl Actor for Request {
        type Context = Context<Self>;
    }

    impl Handler<Cancel> for Request {
        type Result = ();

        fn handle(&mut self, _: Cancel, _: &mut Context<Self>) {}
    }

    #[actix_rt::test]
    async fn a_request_that_ends_leaves_and_an_id_reused_stays() {
        let params = serde_json::from_value(serde_json::json!({
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"}
        }))
        .unwrap();
        let shared = SessionShared::new(SessionState::new(mcp_protocol::ProtocolVersion::V2025_11_25, &params));
        let (first, second) = (Request.start().recipient(), Request.start().recipient());
        shared.track(RequestId::number(1), first.clone());
        shared.track(RequestId::number(2), second.clone());
        assert_eq!(shared.running(), 2);
        shared.finished(&RequestId::number(1), &first);
        assert_eq!(shared.running(), 1);
        assert!(shared.untrack(&RequestId::number(1)).is_none());
        // Id 2 answered, then reused by the first actor's successor: the
        // old request's end does not take the new one's entry.
        shared.track(RequestId::number(2), first.clone());
        shared.finished(&RequestId::number(2), &second);
        assert_eq!(shared.running(), 1);
        assert!(shared.untrack(&RequestId::number(2)).is_some_and(|r| r == first));
        assert_eq!(shared.running(), 0);
    }
}
