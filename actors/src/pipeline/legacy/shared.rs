//! [`SessionShared`]: what the handles of one legacy session read without a
//! message to its actor — the state a request is decided against, when the
//! client last spoke, and the requests running in the session. The
//! session's actor is the only writer of its state and publishes each
//! change as a new immutable snapshot that readers load without a lock,
//! then the store's revision of it (an atomic: a reader that sees a
//! revision sees the state of it); the clock is an atomic; the running
//! requests are a short list under a mutex held only to add or take out
//! one entry (each request does both, so a copy-on-write list would copy
//! and allocate twice per request). A request
//! of the session's client so costs no round trip to the session's arbiter,
//! whatever thread serves it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix::Recipient;
use arc_swap::{ArcSwap, Guard};
use mcp_protocol::legacy::SessionState;
use mcp_protocol::RequestId;

use crate::channels::control::Cancel;

/// The running requests of a session: small. Each request removes itself
/// when it ends; entries of requests that ended without doing so (their
/// arbiter stopped) are swept when one is added.
type InFlight = Vec<(RequestId, Recipient<Cancel>)>;

/// The shared part of one legacy session.
#[derive(Debug)]
pub(crate) struct SessionShared {
    state: ArcSwap<SessionState>,
    /// The store's revision of `state` (0 without a store).
    revision: AtomicU64,
    /// When the session began; `last_seen` counts from it.
    began: Instant,
    /// Milliseconds from `began` to the client's last message.
    last_seen: AtomicU64,
    /// Requests running in this session, for `notifications/cancelled`.
    in_flight: Mutex<InFlight>,
}

impl SessionShared {
    /// The shared part of a session with `state`, seen now.
    pub(crate) fn new(state: SessionState) -> Self {
        SessionShared {
            state: ArcSwap::from_pointee(state),
            revision: AtomicU64::new(0),
            began: Instant::now(),
            last_seen: AtomicU64::new(0),
            in_flight: Mutex::new(Vec::new()),
        }
    }

    /// The state, to read: the snapshot the session's actor published last.
    pub(crate) fn state(&self) -> Guard<Arc<SessionState>> {
        self.state.load()
    }

    /// Publishes the state `change` makes (the session's actor only, the
    /// one writer); returns what `change` returned.
    pub(crate) fn change_state<T>(&self, change: impl FnOnce(&mut SessionState) -> T) -> T {
        let mut next = SessionState::clone(&self.state.load());
        let out = change(&mut next);
        self.state.store(Arc::new(next));
        out
    }

    /// The store's revision of the state published last: published after
    /// that state, so that the state read after it is at least as new.
    pub(crate) fn revision(&self) -> u64 {
        self.revision.load(Ordering::Acquire)
    }

    /// The state published last is the store's `revision` (the session's
    /// actor only); a revision never goes back.
    pub(crate) fn set_revision(&self, revision: u64) {
        self.revision.fetch_max(revision, Ordering::AcqRel);
    }

    /// The client spoke.
    pub(crate) fn touch(&self) {
        let ms = u64::try_from(self.began.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_seen.fetch_max(ms, Ordering::Relaxed);
    }

    /// When the client last spoke.
    pub(crate) fn last_seen(&self) -> Instant {
        self.began + Duration::from_millis(self.last_seen.load(Ordering::Relaxed))
    }

    fn in_flight(&self) -> MutexGuard<'_, InFlight> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a request started in the session (sweeping the entries of
    /// requests that ended without leaving).
    pub(crate) fn track(&self, id: RequestId, cancel: Recipient<Cancel>) {
        let mut running = self.in_flight();
        running.retain(|(_, r)| r.connected());
        running.push((id, cancel));
    }

    /// The request `id` ended: its entry goes, unless the id is already
    /// another request's (the client may reuse an id once answered).
    pub(crate) fn finished(&self, id: &RequestId, cancel: &Recipient<Cancel>) {
        let mut running = self.in_flight();
        if let Some(at) = running.iter().position(|(i, r)| i == id && r == cancel) {
            running.swap_remove(at);
        }
    }

    /// Takes the request `id` out, to cancel it; `None` if it is not running.
    pub(crate) fn untrack(&self, id: &RequestId) -> Option<Recipient<Cancel>> {
        let mut running = self.in_flight();
        let taken = running.iter().find(|(i, _)| i == id).map(|(_, r)| r.clone());
        running.retain(|(i, _)| i != id);
        taken
    }

    /// How many requests are registered as running.
    #[cfg(test)]
    fn running(&self) -> usize {
        self.in_flight().len()
    }

    /// Takes every running request out (the session ended).
    pub(crate) fn drain(&self) -> Vec<Recipient<Cancel>> {
        std::mem::take(&mut *self.in_flight()).into_iter().map(|(_, r)| r).collect()
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
